#include "CGaugeShape.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* HarfBuzz's and FriBidi's types and constants as their ABIs fix them (hb-common.h,
 * hb-buffer.h, fribidi-types.h, fribidi-bidi-types.h), declared here so that the build
 * needs no development package. */
typedef struct hb_buffer hb_buffer;
typedef struct hb_font hb_font;
typedef struct {
    uint32_t codepoint;
    uint32_t mask;
    uint32_t cluster;
    uint32_t var1;
    uint32_t var2;
} hb_glyph_info;
typedef struct {
    int32_t x_advance;
    int32_t y_advance;
    int32_t x_offset;
    int32_t y_offset;
    uint32_t var;
} hb_glyph_position;
enum { HB_DIRECTION_LTR = 4, HB_DIRECTION_RTL = 5 };
/* FRIBIDI_PAR_ON: the direction from the first strong character. */
enum { FRIBIDI_PAR_ON = 0x40 };

static struct {
    hb_font *(*ft_font_create_referenced)(void *);
    void (*ft_font_set_load_flags)(hb_font *, int);
    void (*ft_font_changed)(hb_font *);
    void (*font_destroy)(hb_font *);
    hb_buffer *(*buffer_create)(void);
    void (*buffer_destroy)(hb_buffer *);
    void (*buffer_add_utf32)(hb_buffer *, const uint32_t *, int, unsigned int, int);
    void (*buffer_set_direction)(hb_buffer *, int);
    void (*buffer_guess_segment_properties)(hb_buffer *);
    void (*shape)(hb_font *, hb_buffer *, const void *, unsigned int);
    hb_glyph_info *(*buffer_get_glyph_infos)(hb_buffer *, unsigned int *);
    hb_glyph_position *(*buffer_get_glyph_positions)(hb_buffer *, unsigned int *);
    void (*get_bidi_types)(const uint32_t *, int, uint32_t *);
    void (*get_bracket_types)(const uint32_t *, int, const uint32_t *, uint32_t *);
    signed char (*get_par_embedding_levels_ex)(const uint32_t *, const uint32_t *, int, uint32_t *, signed char *);
} lib;

static const char *load_failure;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *harfbuzz = dlopen("libharfbuzz.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!harfbuzz) {
        load_failure = "cannot load libharfbuzz.so.0";
        return;
    }
    void *fribidi = dlopen("libfribidi.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!fribidi) {
        load_failure = "cannot load libfribidi.so.0";
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
    FIND(harfbuzz, "libharfbuzz.so.0", ft_font_create_referenced, "hb_ft_font_create_referenced");
    FIND(harfbuzz, "libharfbuzz.so.0", ft_font_set_load_flags, "hb_ft_font_set_load_flags");
    FIND(harfbuzz, "libharfbuzz.so.0", ft_font_changed, "hb_ft_font_changed");
    FIND(harfbuzz, "libharfbuzz.so.0", font_destroy, "hb_font_destroy");
    FIND(harfbuzz, "libharfbuzz.so.0", buffer_create, "hb_buffer_create");
    FIND(harfbuzz, "libharfbuzz.so.0", buffer_destroy, "hb_buffer_destroy");
    FIND(harfbuzz, "libharfbuzz.so.0", buffer_add_utf32, "hb_buffer_add_utf32");
    FIND(harfbuzz, "libharfbuzz.so.0", buffer_set_direction, "hb_buffer_set_direction");
    FIND(harfbuzz, "libharfbuzz.so.0", buffer_guess_segment_properties, "hb_buffer_guess_segment_properties");
    FIND(harfbuzz, "libharfbuzz.so.0", shape, "hb_shape");
    FIND(harfbuzz, "libharfbuzz.so.0", buffer_get_glyph_infos, "hb_buffer_get_glyph_infos");
    FIND(harfbuzz, "libharfbuzz.so.0", buffer_get_glyph_positions, "hb_buffer_get_glyph_positions");
    FIND(fribidi, "libfribidi.so.0", get_bidi_types, "fribidi_get_bidi_types");
    FIND(fribidi, "libfribidi.so.0", get_bracket_types, "fribidi_get_bracket_types");
    FIND(fribidi, "libfribidi.so.0", get_par_embedding_levels_ex, "fribidi_get_par_embedding_levels_ex");
#undef FIND
}

int gauge_shape_load(char *message, size_t size) {
    pthread_once(&load_once, load);
    if (load_failure) {
        snprintf(message, size, "%s", load_failure);
        return -1;
    }
    return 0;
}

static int loaded(void) {
    pthread_once(&load_once, load);
    return !load_failure;
}

int gauge_bidi_levels(const uint32_t *text, int count, uint8_t *levels) {
    if (!loaded() || count < 0)
        return -1;
    if (count == 0)
        return 0;
    uint32_t *types = malloc(sizeof(uint32_t) * (size_t)count * 2);
    if (!types)
        return -1;
    uint32_t *brackets = types + count;
    lib.get_bidi_types(text, count, types);
    lib.get_bracket_types(text, count, types, brackets);
    uint32_t direction = FRIBIDI_PAR_ON;
    /* The highest level plus one, 0 on failure; the levels (0-125) written as FriBidiLevel,
     * a signed char. */
    int result = lib.get_par_embedding_levels_ex(types, brackets, count, &direction, (signed char *)levels) ? 0 : -1;
    free(types);
    /* FRIBIDI_PAR_RTL and FRIBIDI_PAR_LTR differ in their lowest bit. */
    return result == 0 ? (int)(direction & 1) : -1;
}

/* FT_LOAD_TARGET_LIGHT (freetype.h): the advances of the glyphs as they are drawn, so a
 * shaped line's Latin is spaced as an unshaped line's is. */
#define LOAD_TARGET_LIGHT (1 << 16)

void *gauge_shape_font(void *ft_face) {
    if (!loaded())
        return NULL;
    hb_font *font = lib.ft_font_create_referenced(ft_face);
    if (font)
        lib.ft_font_set_load_flags(font, LOAD_TARGET_LIGHT);
    return font;
}

void gauge_shape_font_changed(void *font) {
    if (font && loaded())
        lib.ft_font_changed(font);
}

void gauge_shape_font_destroy(void *font) {
    if (font && loaded())
        lib.font_destroy(font);
}

int gauge_shape_run(void *font, const uint32_t *text, int length, int start, int count, int rtl,
                    gauge_shaped_glyph *glyphs, int capacity) {
    if (!font || !loaded() || start < 0 || count < 0 || start + count > length)
        return -1;
    hb_buffer *buffer = lib.buffer_create();
    lib.buffer_add_utf32(buffer, text, length, (unsigned int)start, count);
    lib.buffer_set_direction(buffer, rtl ? HB_DIRECTION_RTL : HB_DIRECTION_LTR);
    lib.buffer_guess_segment_properties(buffer);
    lib.shape(font, buffer, NULL, 0);
    unsigned int shaped = 0, positioned = 0;
    hb_glyph_info *infos = lib.buffer_get_glyph_infos(buffer, &shaped);
    hb_glyph_position *positions = lib.buffer_get_glyph_positions(buffer, &positioned);
    int result = -1;
    if (infos && positions && shaped == positioned) {
        for (unsigned int i = 0; i < shaped && (int)i < capacity; i++) {
            glyphs[i].index = infos[i].codepoint;
            glyphs[i].cluster = infos[i].cluster;
            glyphs[i].x_advance = positions[i].x_advance;
            glyphs[i].x_offset = positions[i].x_offset;
            glyphs[i].y_offset = positions[i].y_offset;
        }
        result = (int)shaped;
    }
    lib.buffer_destroy(buffer);
    return result;
}
