#ifndef CGAUGEQR_H
#define CGAUGEQR_H
/*
 * QR codes through libqrencode, loaded with dlopen the first time one is made, so the
 * executable does not depend on it: without libqrencode.so.4 the failure screen shows its
 * words alone.
 */
#include <stddef.h>

/* Encodes `length` bytes of `data` in byte mode at error correction level M, in the
 * smallest version that holds them. Returns the code's width in modules (21 to 177) and
 * sets `*modules` to width * width bytes, row after row, 1 for a dark module, which the
 * caller frees with free(); 0 when no version up to `max_version` holds the data; or a
 * negative errno with why in `message` (of `size` bytes): the library cannot be loaded,
 * or it failed. */
int gauge_qr_encode(const unsigned char *data, size_t length, int max_version, unsigned char **modules,
                    char *message, size_t size);

#endif
