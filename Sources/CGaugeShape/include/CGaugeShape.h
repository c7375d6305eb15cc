#ifndef CGAUGESHAPE_H
#define CGAUGESHAPE_H
/*
 * Text shaping through HarfBuzz and the Unicode bidirectional algorithm through FriBidi,
 * both loaded with dlopen the first time a line needs them, so the executable does not
 * depend on them: without libharfbuzz.so.0 or libfribidi.so.0 every line is drawn as
 * before, a glyph per character from left to right (right for Latin, Greek, Cyrillic and
 * CJK; Arabic, Hebrew and the scripts that need shaping then come out wrong).
 */
#include <stddef.h>
#include <stdint.h>

/* One glyph of a shaped run: its index in the font, the character (an index into the
 * text) whose cluster it belongs to, and its advance and offsets in 26.6 fixed-point
 * pixels, y upwards. */
typedef struct {
    uint32_t index;
    uint32_t cluster;
    int32_t x_advance;
    int32_t x_offset;
    int32_t y_offset;
} gauge_shaped_glyph;

/* 0 once both libraries are loaded (the first call loads them); else -1 with why in
 * `message` (of `size` bytes). */
int gauge_shape_load(char *message, size_t size);

/* The embedding level of each of the `count` characters of one paragraph (`text` in
 * UTF-32) into `levels`, its base direction that of its first strong character (left to
 * right when it has none). Returns the paragraph's level (0 or 1), or -1 when FriBidi
 * fails or was not loaded. */
int gauge_bidi_levels(const uint32_t *text, int count, uint8_t *levels);

/* A HarfBuzz font for the FreeType face `ft_face` (an FT_Face) at its size now; NULL when
 * the libraries were not loaded. `gauge_shape_font_changed` after the face's size changed;
 * `gauge_shape_font_destroy` before the face is done. */
void *gauge_shape_font(void *ft_face);
void gauge_shape_font_changed(void *font);
void gauge_shape_font_destroy(void *font);

/* Shapes `text[start ..< start + count]` (characters of one level and one face; the rest
 * of `text`, of `length` characters, is context for the forms at the run's edges) with
 * `font`, right to left when `rtl`, and writes up to `capacity` glyphs in visual order,
 * left to right. Returns the number of glyphs (more than `capacity`: call again with room
 * for them), or -1. */
int gauge_shape_run(void *font, const uint32_t *text, int length, int start, int count, int rtl,
                    gauge_shaped_glyph *glyphs, int capacity);

#endif
