#include "CGaugePNG.h"

#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

struct encoder {
    gauge_png_write_fn write;
    void *context;
    char *message;
    size_t message_size;
};

static void on_error(png_structp png, png_const_charp text) {
    struct encoder *encoder = png_get_error_ptr(png);
    snprintf(encoder->message, encoder->message_size, "%s", text);
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp text) {
    (void)png;
    (void)text;
}

static void on_write(png_structp png, png_bytep bytes, size_t count) {
    struct encoder *encoder = png_get_io_ptr(png);
    encoder->write(encoder->context, bytes, count);
}

static void on_flush(png_structp png) { (void)png; }

int gauge_png_encode_rgba(uint32_t width, uint32_t height, gauge_png_row_fn row, gauge_png_write_fn write,
                          void *context, char *message, size_t message_size) {
    struct encoder encoder = {write, context, message, message_size};
    if (message_size > 0) message[0] = 0;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &encoder, on_error, on_warning);
    if (png == NULL) {
        snprintf(message, message_size, "out of memory");
        return 0;
    }
    png_infop info = png_create_info_struct(png);
    if (info == NULL) {
        png_destroy_write_struct(&png, NULL);
        snprintf(message, message_size, "out of memory");
        return 0;
    }
    /* Nothing below the setjmp changes a local the error path reads. */
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return 0;
    }
    png_set_write_fn(png, &encoder, on_write, on_flush);
    png_set_benign_errors(png, 0);
    png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGB_ALPHA, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
    png_set_sRGB(png, info, PNG_sRGB_INTENT_PERCEPTUAL);
    png_write_info(png, info);
    for (uint32_t y = 0; y < height; y++) {
        const uint8_t *bytes = row(context, y);
        if (bytes == NULL) {
            snprintf(message, message_size, "no pixels for row %u", (unsigned)y);
            png_destroy_write_struct(&png, &info);
            return 0;
        }
        png_write_row(png, bytes);
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    return 1;
}
