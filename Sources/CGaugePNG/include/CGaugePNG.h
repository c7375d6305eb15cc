#ifndef CGAUGEPNG_H
#define CGAUGEPNG_H
/*
 * A PNG encoder fed one row at a time, for pictures too big to copy whole (a snapshot of
 * the screen). libpng's simplified API wants the whole picture in one buffer, and its
 * low-level API reports errors by longjmp, which must not cross Swift frames: this C
 * function holds the setjmp, and libpng's calls all happen inside it.
 */
#include <stddef.h>
#include <stdint.h>

/* The row `y` (0 at the top) as width * 4 bytes of R, G, B, A; NULL stops the encoding. */
typedef const uint8_t *(*gauge_png_row_fn)(void *context, uint32_t y);
/* The next `count` bytes of the PNG file. */
typedef void (*gauge_png_write_fn)(void *context, const uint8_t *bytes, size_t count);

/*
 * Encodes a `width` x `height` 8-bit RGBA picture, rows top to bottom, with the settings of
 * png_image_write_to_memory (sRGB chunk, default compression and filters), so the bytes
 * are the same as that function writes for the same pixels. Returns 1 on success; 0 with
 * the reason in `message` (always NUL-terminated) otherwise.
 */
int gauge_png_encode_rgba(uint32_t width, uint32_t height, gauge_png_row_fn row, gauge_png_write_fn write,
                          void *context, char *message, size_t message_size);

#endif
