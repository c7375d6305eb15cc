#ifndef CGAUGELIBRARIES_H
#define CGAUGELIBRARIES_H
/*
 * The C libraries Gauge draws and presents with (pixman, FreeType, libpng, libdrm and
 * libudev), loaded with dlopen rather than by the program loader, so that a program that
 * never draws (gaugectl, and the plymouth command cryptsetup's askpass runs) starts
 * without mapping and relocating them. The executable defines each of their functions it
 * calls: the first call loads the library. The daemon loads them all at its start
 * (`gauge_libraries_load`), so that a missing one is said there, once, as an error; where
 * a later first call finds one missing, the program says so and exits with status 127,
 * as the loader would have before it started.
 */
#include <stddef.h>

/* 0 once the five libraries are loaded (the first call loads them); else -1 with why in
 * `message` (of `size` bytes): which library could not be loaded, or which function it
 * lacks. */
int gauge_libraries_load(char *message, size_t size);

#endif
