#include "CGaugeSubset.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* HarfBuzz's types and constants as its ABI fixes them (hb-blob.h, hb-subset.h), declared
 * here so that the build needs no development package. */
typedef struct hb_blob hb_blob;
typedef struct hb_face hb_face;
typedef struct hb_set hb_set;
typedef struct hb_subset_input hb_subset_input;
enum { HB_MEMORY_MODE_READONLY = 1 };
enum {
    HB_SUBSET_SETS_GLYPH_INDEX = 0,
    HB_SUBSET_SETS_UNICODE = 1,
    HB_SUBSET_SETS_DROP_TABLE_TAG = 3,
    HB_SUBSET_SETS_NAME_ID = 4,
    HB_SUBSET_SETS_NAME_LANG_ID = 5,
    HB_SUBSET_SETS_LAYOUT_FEATURE_TAG = 6,
    HB_SUBSET_SETS_LAYOUT_SCRIPT_TAG = 7,
};
enum {
    HB_SUBSET_FLAGS_NO_HINTING = 0x1,
    HB_SUBSET_FLAGS_RETAIN_GIDS = 0x2,
    HB_SUBSET_FLAGS_NAME_LEGACY = 0x8,
    HB_SUBSET_FLAGS_PASSTHROUGH_UNRECOGNIZED = 0x20,
    HB_SUBSET_FLAGS_NOTDEF_OUTLINE = 0x40,
    HB_SUBSET_FLAGS_NO_PRUNE_UNICODE_RANGES = 0x100,
};

static struct {
    hb_blob *(*blob_create)(const char *, unsigned int, int, void *, void (*)(void *));
    const char *(*blob_get_data)(hb_blob *, unsigned int *);
    void (*blob_destroy)(hb_blob *);
    hb_face *(*face_create)(hb_blob *, unsigned int);
    hb_blob *(*face_reference_blob)(hb_face *);
    void (*face_destroy)(hb_face *);
    void (*set_clear)(hb_set *);
    void (*set_invert)(hb_set *);
    hb_subset_input *(*input_create_or_fail)(void);
    hb_set *(*input_set)(hb_subset_input *, int);
    void (*input_set_flags)(hb_subset_input *, unsigned int);
    void (*input_destroy)(hb_subset_input *);
    hb_face *(*subset_or_fail)(hb_face *, const hb_subset_input *);
} lib;

static const char *load_failure;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *harfbuzz = dlopen("libharfbuzz.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!harfbuzz) {
        load_failure = "cannot load libharfbuzz.so.0";
        return;
    }
    void *subset = dlopen("libharfbuzz-subset.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!subset) {
        load_failure = "cannot load libharfbuzz-subset.so.0";
        return;
    }
#define FIND(library, name, field, symbol)                                                                         \
    do {                                                                                                           \
        *(void **)(&lib.field) = dlsym(library, symbol);                                                           \
        if (!lib.field) {                                                                                          \
            load_failure = name " lacks " symbol;                                                                  \
            return;                                                                                                \
        }                                                                                                          \
    } while (0)
    FIND(harfbuzz, "libharfbuzz.so.0", blob_create, "hb_blob_create");
    FIND(harfbuzz, "libharfbuzz.so.0", blob_get_data, "hb_blob_get_data");
    FIND(harfbuzz, "libharfbuzz.so.0", blob_destroy, "hb_blob_destroy");
    FIND(harfbuzz, "libharfbuzz.so.0", face_create, "hb_face_create");
    FIND(harfbuzz, "libharfbuzz.so.0", face_reference_blob, "hb_face_reference_blob");
    FIND(harfbuzz, "libharfbuzz.so.0", face_destroy, "hb_face_destroy");
    FIND(harfbuzz, "libharfbuzz.so.0", set_clear, "hb_set_clear");
    FIND(harfbuzz, "libharfbuzz.so.0", set_invert, "hb_set_invert");
    FIND(subset, "libharfbuzz-subset.so.0", input_create_or_fail, "hb_subset_input_create_or_fail");
    FIND(subset, "libharfbuzz-subset.so.0", input_set, "hb_subset_input_set");
    FIND(subset, "libharfbuzz-subset.so.0", input_set_flags, "hb_subset_input_set_flags");
    FIND(subset, "libharfbuzz-subset.so.0", input_destroy, "hb_subset_input_destroy");
    FIND(subset, "libharfbuzz-subset.so.0", subset_or_fail, "hb_subset_or_fail");
#undef FIND
}

void *gauge_subset_unhinted(const void *font, size_t count, size_t *size, char *message, size_t message_size) {
    pthread_once(&load_once, load);
    if (load_failure) {
        snprintf(message, message_size, "%s", load_failure);
        return NULL;
    }
    if (count > UINT_MAX) {
        snprintf(message, message_size, "the font is too large for HarfBuzz");
        return NULL;
    }
    hb_blob *blob = lib.blob_create(font, (unsigned int)count, HB_MEMORY_MODE_READONLY, NULL, NULL);
    hb_face *face = lib.face_create(blob, 0);
    lib.blob_destroy(blob);
    hb_subset_input *input = lib.input_create_or_fail();
    if (!input) {
        lib.face_destroy(face);
        snprintf(message, message_size, "HarfBuzz cannot make a subset's input");
        return NULL;
    }
    /* Everything kept (what hb_subset_input_keep_everything, HarfBuzz 7, does), the
     * instructions and the glyph names left out. */
    const int everything[] = {HB_SUBSET_SETS_UNICODE, HB_SUBSET_SETS_GLYPH_INDEX, HB_SUBSET_SETS_NAME_ID,
                              HB_SUBSET_SETS_NAME_LANG_ID, HB_SUBSET_SETS_LAYOUT_FEATURE_TAG,
                              HB_SUBSET_SETS_LAYOUT_SCRIPT_TAG};
    for (size_t i = 0; i < sizeof everything / sizeof everything[0]; i++) {
        hb_set *set = lib.input_set(input, everything[i]);
        lib.set_clear(set);
        lib.set_invert(set);
    }
    lib.set_clear(lib.input_set(input, HB_SUBSET_SETS_DROP_TABLE_TAG));
    lib.input_set_flags(input, HB_SUBSET_FLAGS_NO_HINTING | HB_SUBSET_FLAGS_RETAIN_GIDS | HB_SUBSET_FLAGS_NAME_LEGACY |
                                   HB_SUBSET_FLAGS_PASSTHROUGH_UNRECOGNIZED | HB_SUBSET_FLAGS_NOTDEF_OUTLINE |
                                   HB_SUBSET_FLAGS_NO_PRUNE_UNICODE_RANGES);
    hb_face *result = lib.subset_or_fail(face, input);
    lib.input_destroy(input);
    lib.face_destroy(face);
    if (!result) {
        snprintf(message, message_size, "HarfBuzz cannot subset the font");
        return NULL;
    }
    hb_blob *out = lib.face_reference_blob(result);
    unsigned int length = 0;
    const char *data = lib.blob_get_data(out, &length);
    void *copy = data && length > 0 ? malloc(length) : NULL;
    if (copy) {
        memcpy(copy, data, length);
        *size = length;
    } else {
        snprintf(message, message_size, "HarfBuzz made an empty font");
    }
    lib.blob_destroy(out);
    lib.face_destroy(result);
    return copy;
}
