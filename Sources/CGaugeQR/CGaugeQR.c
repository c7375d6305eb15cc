#include "CGaugeQR.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libqrencode 4's QRcode and QR_ECLEVEL_M (qrencode.h), declared here so that the build
 * needs no development package. */
typedef struct {
    int version;
    int width;
    unsigned char *data;
} qr_code;
enum { QR_LEVEL_M = 1 };

static qr_code *(*encode_data)(int, const unsigned char *, int, int);
static void (*code_free)(qr_code *);
static const char *load_failure;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen("libqrencode.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        load_failure = "cannot load libqrencode.so.4";
        return;
    }
    *(void **)(&encode_data) = dlsym(library, "QRcode_encodeData");
    *(void **)(&code_free) = dlsym(library, "QRcode_free");
    if (!encode_data || !code_free)
        load_failure = "libqrencode.so.4 lacks QRcode_encodeData or QRcode_free";
}

int gauge_qr_encode(const unsigned char *data, size_t length, int max_version, unsigned char **modules,
                    char *message, size_t size) {
    pthread_once(&load_once, load);
    if (load_failure) {
        snprintf(message, size, "%s", load_failure);
        return -ENOSYS;
    }
    /* Version 40 at level M holds 2,331 bytes. */
    if (length == 0 || length > 2331 || max_version < 1)
        return 0;
    errno = 0;
    qr_code *code = encode_data((int)length, data, 0, QR_LEVEL_M);
    if (!code) {
        if (errno == ERANGE)
            return 0;
        int error = errno ? errno : EINVAL;
        snprintf(message, size, "libqrencode: %s", strerror(error));
        return -error;
    }
    int width = code->width;
    if (code->version > max_version || width < 21 || width > 177) {
        code_free(code);
        return 0;
    }
    unsigned char *out = malloc((size_t)width * (size_t)width);
    if (!out) {
        code_free(code);
        snprintf(message, size, "libqrencode: %s", strerror(ENOMEM));
        return -ENOMEM;
    }
    for (size_t i = 0; i < (size_t)width * (size_t)width; i++)
        out[i] = code->data[i] & 1;
    code_free(code);
    *modules = out;
    return width;
}
