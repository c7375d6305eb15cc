#ifndef CGAUGESUBSET_H
#define CGAUGESUBSET_H
/*
 * A font file without what Gauge's renderer never reads, made by HarfBuzz's subsetter
 * (libharfbuzz-subset.so.0 and libharfbuzz.so.0), loaded with dlopen the first time it
 * is asked for, so the executable does not depend on them.
 */
#include <stddef.h>

/* The font in `font` (`count` bytes, its first face) with every glyph kept at its index,
 * and every character, name, layout feature and script, and every table kept, but for its
 * TrueType instructions (with the tables that hold only them: fpgm, prep, cvt, hdmx,
 * VDMX, LTSH) and its glyph names. Returns the new font's bytes (to be freed with free),
 * their count in *size; NULL with why in `message` (of `message_size` bytes) when a
 * library is missing or the subsetter fails. */
void *gauge_subset_unhinted(const void *font, size_t count, size_t *size, char *message, size_t message_size);

#endif
