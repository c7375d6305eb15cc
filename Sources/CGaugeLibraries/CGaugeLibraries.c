/* program_invocation_short_name */
#define _GNU_SOURCE
#include "CGaugeLibraries.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ft2build.h>
#include FT_FREETYPE_H
#include <libudev.h>
#include <pixman.h>
#include <png.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

/* One library loaded at run time: its functions' names and, once loaded, their addresses
 * (`slots`, in the order of `names`), or why it could not be loaded. */
struct library {
    const char *soname;
    const char *const *names;
    void **slots;
    size_t count;
    pthread_once_t once;
    void (*open)(void);
    char failure[192];
};

static void open_library(struct library *library) {
    void *handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(library->failure, sizeof library->failure, "cannot load %s", dlerror());
        return;
    }
    for (size_t i = 0; i < library->count; i++) {
        library->slots[i] = dlsym(handle, library->names[i]);
        if (!library->slots[i]) {
            snprintf(library->failure, sizeof library->failure, "%s lacks %s", library->soname, library->names[i]);
            return;
        }
    }
}

/* A library's functions, the first call loading it; a library that cannot be loaded
 * ends the program as the loader would have. */
static void *const *loaded(struct library *library) {
    pthread_once(&library->once, library->open);
    if (library->failure[0]) {
        fprintf(stderr, "%s: %s\n", program_invocation_short_name, library->failure);
        _exit(127);
    }
    return library->slots;
}

#define INDEX(lib, name) lib##_##name,
#define NAME(lib, name) #name,
#define LIBRARY(lib, soname, FUNCTIONS)                                                                            \
    enum { FUNCTIONS(INDEX) lib##_count };                                                                         \
    static const char *const lib##_names[] = {FUNCTIONS(NAME)};                                                    \
    static void *lib##_slots[lib##_count];                                                                         \
    static void lib##_open(void);                                                                                  \
    static struct library lib##_library = {                                                                        \
        soname, lib##_names, lib##_slots, lib##_count, PTHREAD_ONCE_INIT, lib##_open, ""};                        \
    static void lib##_open(void) { open_library(&lib##_library); }
/* The loaded function `name` of `lib`, with its declared type. */
#define CALL(lib, name) ((__typeof__(&name))loaded(&lib##_library)[lib##_##name])

#define DRM_FUNCTIONS(X)                                                                                           \
    X(drm, drmCrtcGetSequence) X(drm, drmDropMaster) X(drm, drmFreeVersion) X(drm, drmGetCap)                      \
    X(drm, drmGetVersion) X(drm, drmHandleEvent) X(drm, drmIoctl) X(drm, drmSetMaster) X(drm, drmModeAddFB2)       \
    X(drm, drmModeCreateDumbBuffer) X(drm, drmModeDestroyDumbBuffer) X(drm, drmModeDirtyFB)                        \
    X(drm, drmModeFreeConnector) X(drm, drmModeFreeCrtc) X(drm, drmModeFreeEncoder) X(drm, drmModeFreeFB)          \
    X(drm, drmModeFreeObjectProperties) X(drm, drmModeFreeProperty) X(drm, drmModeFreeResources)                   \
    X(drm, drmModeGetConnector) X(drm, drmModeGetConnectorCurrent) X(drm, drmModeGetConnectorTypeName)             \
    X(drm, drmModeGetCrtc) X(drm, drmModeGetEncoder) X(drm, drmModeGetFB) X(drm, drmModeGetProperty)               \
    X(drm, drmModeGetResources) X(drm, drmModeMapDumbBuffer) X(drm, drmModeObjectGetProperties)                   \
    X(drm, drmModePageFlip) X(drm, drmModeRmFB) X(drm, drmModeSetCrtc)
LIBRARY(drm, "libdrm.so.2", DRM_FUNCTIONS)

#define PIXMAN_FUNCTIONS(X)                                                                                        \
    X(pixman, pixman_add_trapezoids) X(pixman, pixman_filter_create_separable_convolution)                         \
    X(pixman, pixman_image_composite32) X(pixman, pixman_image_create_bits)                                        \
    X(pixman, pixman_image_create_bits_no_clear) X(pixman, pixman_image_create_linear_gradient)                    \
    X(pixman, pixman_image_create_solid_fill) X(pixman, pixman_image_fill_boxes) X(pixman, pixman_image_get_data)  \
    X(pixman, pixman_image_get_format) X(pixman, pixman_image_get_height) X(pixman, pixman_image_get_stride)       \
    X(pixman, pixman_image_get_width) X(pixman, pixman_image_set_filter) X(pixman, pixman_image_set_repeat)        \
    X(pixman, pixman_image_set_transform) X(pixman, pixman_image_unref) X(pixman, pixman_transform_init_identity)  \
    X(pixman, pixman_transform_init_scale)
LIBRARY(pixman, "libpixman-1.so.0", PIXMAN_FUNCTIONS)

#define FREETYPE_FUNCTIONS(X)                                                                                      \
    X(freetype, FT_Done_Face) X(freetype, FT_Done_FreeType) X(freetype, FT_Get_Char_Index)                         \
    X(freetype, FT_Init_FreeType) X(freetype, FT_Load_Glyph) X(freetype, FT_Open_Face)                             \
    X(freetype, FT_Set_Pixel_Sizes)
LIBRARY(freetype, "libfreetype.so.6", FREETYPE_FUNCTIONS)

#define PNG_FUNCTIONS(X)                                                                                           \
    X(png, png_create_info_struct) X(png, png_create_write_struct) X(png, png_destroy_write_struct)                \
    X(png, png_get_error_ptr) X(png, png_get_io_ptr) X(png, png_image_begin_read_from_memory)                      \
    X(png, png_image_finish_read) X(png, png_image_free) X(png, png_image_write_to_file)                           \
    X(png, png_image_write_to_memory) X(png, png_longjmp) X(png, png_set_IHDR) X(png, png_set_benign_errors)       \
    X(png, png_set_longjmp_fn) X(png, png_set_sRGB) X(png, png_set_write_fn) X(png, png_write_end)                 \
    X(png, png_write_info) X(png, png_write_row)
LIBRARY(png, "libpng16.so.16", PNG_FUNCTIONS)

#define UDEV_FUNCTIONS(X)                                                                                          \
    X(udev, udev_device_get_property_value) X(udev, udev_device_unref) X(udev, udev_monitor_enable_receiving)      \
    X(udev, udev_monitor_filter_add_match_subsystem_devtype) X(udev, udev_monitor_get_fd)                          \
    X(udev, udev_monitor_new_from_netlink) X(udev, udev_monitor_receive_device) X(udev, udev_monitor_unref)        \
    X(udev, udev_new) X(udev, udev_unref)
LIBRARY(udev, "libudev.so.1", UDEV_FUNCTIONS)

int gauge_libraries_load(char *message, size_t size) {
    struct library *all[] = {&drm_library, &pixman_library, &freetype_library, &png_library, &udev_library};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        pthread_once(&all[i]->once, all[i]->open);
        if (all[i]->failure[0]) {
            snprintf(message, size, "%s", all[i]->failure);
            return -1;
        }
    }
    return 0;
}

/* libdrm */

int drmCrtcGetSequence(int fd, uint32_t crtcId, uint64_t *sequence, uint64_t *ns) {
    return CALL(drm, drmCrtcGetSequence)(fd, crtcId, sequence, ns);
}
int drmDropMaster(int fd) { return CALL(drm, drmDropMaster)(fd); }
void drmFreeVersion(drmVersionPtr version) { CALL(drm, drmFreeVersion)(version); }
int drmGetCap(int fd, uint64_t capability, uint64_t *value) { return CALL(drm, drmGetCap)(fd, capability, value); }
drmVersionPtr drmGetVersion(int fd) { return CALL(drm, drmGetVersion)(fd); }
int drmHandleEvent(int fd, drmEventContextPtr context) { return CALL(drm, drmHandleEvent)(fd, context); }
int drmIoctl(int fd, unsigned long request, void *arg) { return CALL(drm, drmIoctl)(fd, request, arg); }
int drmSetMaster(int fd) { return CALL(drm, drmSetMaster)(fd); }
int drmModeAddFB2(int fd, uint32_t width, uint32_t height, uint32_t pixel_format, const uint32_t bo_handles[4],
                  const uint32_t pitches[4], const uint32_t offsets[4], uint32_t *buf_id, uint32_t flags) {
    return CALL(drm, drmModeAddFB2)(fd, width, height, pixel_format, bo_handles, pitches, offsets, buf_id, flags);
}
int drmModeCreateDumbBuffer(int fd, uint32_t width, uint32_t height, uint32_t bpp, uint32_t flags, uint32_t *handle,
                            uint32_t *pitch, uint64_t *size) {
    return CALL(drm, drmModeCreateDumbBuffer)(fd, width, height, bpp, flags, handle, pitch, size);
}
int drmModeDestroyDumbBuffer(int fd, uint32_t handle) { return CALL(drm, drmModeDestroyDumbBuffer)(fd, handle); }
int drmModeDirtyFB(int fd, uint32_t bufferId, drmModeClipPtr clips, uint32_t num_clips) {
    return CALL(drm, drmModeDirtyFB)(fd, bufferId, clips, num_clips);
}
void drmModeFreeConnector(drmModeConnectorPtr ptr) { CALL(drm, drmModeFreeConnector)(ptr); }
void drmModeFreeCrtc(drmModeCrtcPtr ptr) { CALL(drm, drmModeFreeCrtc)(ptr); }
void drmModeFreeEncoder(drmModeEncoderPtr ptr) { CALL(drm, drmModeFreeEncoder)(ptr); }
void drmModeFreeFB(drmModeFBPtr ptr) { CALL(drm, drmModeFreeFB)(ptr); }
void drmModeFreeObjectProperties(drmModeObjectPropertiesPtr ptr) { CALL(drm, drmModeFreeObjectProperties)(ptr); }
void drmModeFreeProperty(drmModePropertyPtr ptr) { CALL(drm, drmModeFreeProperty)(ptr); }
void drmModeFreeResources(drmModeResPtr ptr) { CALL(drm, drmModeFreeResources)(ptr); }
drmModeConnectorPtr drmModeGetConnector(int fd, uint32_t connectorId) {
    return CALL(drm, drmModeGetConnector)(fd, connectorId);
}
drmModeConnectorPtr drmModeGetConnectorCurrent(int fd, uint32_t connector_id) {
    return CALL(drm, drmModeGetConnectorCurrent)(fd, connector_id);
}
const char *drmModeGetConnectorTypeName(uint32_t connector_type) {
    return CALL(drm, drmModeGetConnectorTypeName)(connector_type);
}
drmModeCrtcPtr drmModeGetCrtc(int fd, uint32_t crtcId) { return CALL(drm, drmModeGetCrtc)(fd, crtcId); }
drmModeEncoderPtr drmModeGetEncoder(int fd, uint32_t encoder_id) { return CALL(drm, drmModeGetEncoder)(fd, encoder_id); }
drmModeFBPtr drmModeGetFB(int fd, uint32_t bufferId) { return CALL(drm, drmModeGetFB)(fd, bufferId); }
drmModePropertyPtr drmModeGetProperty(int fd, uint32_t propertyId) { return CALL(drm, drmModeGetProperty)(fd, propertyId); }
drmModeResPtr drmModeGetResources(int fd) { return CALL(drm, drmModeGetResources)(fd); }
int drmModeMapDumbBuffer(int fd, uint32_t handle, uint64_t *offset) {
    return CALL(drm, drmModeMapDumbBuffer)(fd, handle, offset);
}
drmModeObjectPropertiesPtr drmModeObjectGetProperties(int fd, uint32_t object_id, uint32_t object_type) {
    return CALL(drm, drmModeObjectGetProperties)(fd, object_id, object_type);
}
int drmModePageFlip(int fd, uint32_t crtc_id, uint32_t fb_id, uint32_t flags, void *user_data) {
    return CALL(drm, drmModePageFlip)(fd, crtc_id, fb_id, flags, user_data);
}
int drmModeRmFB(int fd, uint32_t bufferId) { return CALL(drm, drmModeRmFB)(fd, bufferId); }
int drmModeSetCrtc(int fd, uint32_t crtcId, uint32_t bufferId, uint32_t x, uint32_t y, uint32_t *connectors, int count,
                   drmModeModeInfoPtr mode) {
    return CALL(drm, drmModeSetCrtc)(fd, crtcId, bufferId, x, y, connectors, count, mode);
}

/* pixman */

void pixman_add_trapezoids(pixman_image_t *image, int16_t x_off, int y_off, int ntraps,
                           const pixman_trapezoid_t *traps) {
    CALL(pixman, pixman_add_trapezoids)(image, x_off, y_off, ntraps, traps);
}
pixman_fixed_t *pixman_filter_create_separable_convolution(int *n_values, pixman_fixed_t scale_x,
                                                           pixman_fixed_t scale_y, pixman_kernel_t reconstruct_x,
                                                           pixman_kernel_t reconstruct_y, pixman_kernel_t sample_x,
                                                           pixman_kernel_t sample_y, int subsample_bits_x,
                                                           int subsample_bits_y) {
    return CALL(pixman, pixman_filter_create_separable_convolution)(n_values, scale_x, scale_y, reconstruct_x,
                                                                    reconstruct_y, sample_x, sample_y,
                                                                    subsample_bits_x, subsample_bits_y);
}
void pixman_image_composite32(pixman_op_t op, pixman_image_t *src, pixman_image_t *mask, pixman_image_t *dest,
                              int32_t src_x, int32_t src_y, int32_t mask_x, int32_t mask_y, int32_t dest_x,
                              int32_t dest_y, int32_t width, int32_t height) {
    CALL(pixman, pixman_image_composite32)(op, src, mask, dest, src_x, src_y, mask_x, mask_y, dest_x, dest_y, width,
                                           height);
}
pixman_image_t *pixman_image_create_bits(pixman_format_code_t format, int width, int height, uint32_t *bits,
                                         int rowstride_bytes) {
    return CALL(pixman, pixman_image_create_bits)(format, width, height, bits, rowstride_bytes);
}
pixman_image_t *pixman_image_create_bits_no_clear(pixman_format_code_t format, int width, int height, uint32_t *bits,
                                                  int rowstride_bytes) {
    return CALL(pixman, pixman_image_create_bits_no_clear)(format, width, height, bits, rowstride_bytes);
}
pixman_image_t *pixman_image_create_linear_gradient(const pixman_point_fixed_t *p1, const pixman_point_fixed_t *p2,
                                                    const pixman_gradient_stop_t *stops, int n_stops) {
    return CALL(pixman, pixman_image_create_linear_gradient)(p1, p2, stops, n_stops);
}
pixman_image_t *pixman_image_create_solid_fill(const pixman_color_t *color) {
    return CALL(pixman, pixman_image_create_solid_fill)(color);
}
pixman_bool_t pixman_image_fill_boxes(pixman_op_t op, pixman_image_t *dest, const pixman_color_t *color, int n_boxes,
                                      const pixman_box32_t *boxes) {
    return CALL(pixman, pixman_image_fill_boxes)(op, dest, color, n_boxes, boxes);
}
uint32_t *pixman_image_get_data(pixman_image_t *image) { return CALL(pixman, pixman_image_get_data)(image); }
pixman_format_code_t pixman_image_get_format(pixman_image_t *image) {
    return CALL(pixman, pixman_image_get_format)(image);
}
int pixman_image_get_height(pixman_image_t *image) { return CALL(pixman, pixman_image_get_height)(image); }
int pixman_image_get_stride(pixman_image_t *image) { return CALL(pixman, pixman_image_get_stride)(image); }
int pixman_image_get_width(pixman_image_t *image) { return CALL(pixman, pixman_image_get_width)(image); }
pixman_bool_t pixman_image_set_filter(pixman_image_t *image, pixman_filter_t filter,
                                      const pixman_fixed_t *filter_params, int n_filter_params) {
    return CALL(pixman, pixman_image_set_filter)(image, filter, filter_params, n_filter_params);
}
void pixman_image_set_repeat(pixman_image_t *image, pixman_repeat_t repeat) {
    CALL(pixman, pixman_image_set_repeat)(image, repeat);
}
pixman_bool_t pixman_image_set_transform(pixman_image_t *image, const pixman_transform_t *transform) {
    return CALL(pixman, pixman_image_set_transform)(image, transform);
}
pixman_bool_t pixman_image_unref(pixman_image_t *image) { return CALL(pixman, pixman_image_unref)(image); }
void pixman_transform_init_identity(struct pixman_transform *matrix) {
    CALL(pixman, pixman_transform_init_identity)(matrix);
}
void pixman_transform_init_scale(struct pixman_transform *t, pixman_fixed_t sx, pixman_fixed_t sy) {
    CALL(pixman, pixman_transform_init_scale)(t, sx, sy);
}

/* FreeType */

FT_Error FT_Done_Face(FT_Face face) { return CALL(freetype, FT_Done_Face)(face); }
FT_Error FT_Done_FreeType(FT_Library library) { return CALL(freetype, FT_Done_FreeType)(library); }
FT_UInt FT_Get_Char_Index(FT_Face face, FT_ULong charcode) { return CALL(freetype, FT_Get_Char_Index)(face, charcode); }
FT_Error FT_Init_FreeType(FT_Library *alibrary) { return CALL(freetype, FT_Init_FreeType)(alibrary); }
FT_Error FT_Load_Glyph(FT_Face face, FT_UInt glyph_index, FT_Int32 load_flags) {
    return CALL(freetype, FT_Load_Glyph)(face, glyph_index, load_flags);
}
FT_Error FT_Open_Face(FT_Library library, const FT_Open_Args *args, FT_Long face_index, FT_Face *aface) {
    return CALL(freetype, FT_Open_Face)(library, args, face_index, aface);
}
FT_Error FT_Set_Pixel_Sizes(FT_Face face, FT_UInt pixel_width, FT_UInt pixel_height) {
    return CALL(freetype, FT_Set_Pixel_Sizes)(face, pixel_width, pixel_height);
}

/* libpng */

png_infop png_create_info_struct(png_const_structrp png_ptr) { return CALL(png, png_create_info_struct)(png_ptr); }
png_structp png_create_write_struct(png_const_charp user_png_ver, png_voidp error_ptr, png_error_ptr error_fn,
                                    png_error_ptr warn_fn) {
    return CALL(png, png_create_write_struct)(user_png_ver, error_ptr, error_fn, warn_fn);
}
void png_destroy_write_struct(png_structpp png_ptr_ptr, png_infopp info_ptr_ptr) {
    CALL(png, png_destroy_write_struct)(png_ptr_ptr, info_ptr_ptr);
}
png_voidp png_get_error_ptr(png_const_structrp png_ptr) { return CALL(png, png_get_error_ptr)(png_ptr); }
png_voidp png_get_io_ptr(png_const_structrp png_ptr) { return CALL(png, png_get_io_ptr)(png_ptr); }
int png_image_begin_read_from_memory(png_imagep image, png_const_voidp memory, size_t size) {
    return CALL(png, png_image_begin_read_from_memory)(image, memory, size);
}
int png_image_finish_read(png_imagep image, png_const_colorp background, void *buffer, png_int_32 row_stride,
                          void *colormap) {
    return CALL(png, png_image_finish_read)(image, background, buffer, row_stride, colormap);
}
void png_image_free(png_imagep image) { CALL(png, png_image_free)(image); }
int png_image_write_to_file(png_imagep image, const char *file, int convert_to_8bit, const void *buffer,
                            png_int_32 row_stride, const void *colormap) {
    return CALL(png, png_image_write_to_file)(image, file, convert_to_8bit, buffer, row_stride, colormap);
}
int png_image_write_to_memory(png_imagep image, void *memory, png_alloc_size_t *PNG_RESTRICT memory_bytes,
                              int convert_to_8_bit, const void *buffer, png_int_32 row_stride, const void *colormap) {
    return CALL(png, png_image_write_to_memory)(image, memory, memory_bytes, convert_to_8_bit, buffer, row_stride,
                                                colormap);
}
void png_longjmp(png_const_structrp png_ptr, int val) {
    CALL(png, png_longjmp)(png_ptr, val);
    abort();
}
void png_set_IHDR(png_const_structrp png_ptr, png_inforp info_ptr, png_uint_32 width, png_uint_32 height,
                  int bit_depth, int color_type, int interlace_method, int compression_method, int filter_method) {
    CALL(png, png_set_IHDR)(png_ptr, info_ptr, width, height, bit_depth, color_type, interlace_method,
                            compression_method, filter_method);
}
void png_set_benign_errors(png_structrp png_ptr, int allowed) { CALL(png, png_set_benign_errors)(png_ptr, allowed); }
jmp_buf *png_set_longjmp_fn(png_structrp png_ptr, png_longjmp_ptr longjmp_fn, size_t jmp_buf_size) {
    return CALL(png, png_set_longjmp_fn)(png_ptr, longjmp_fn, jmp_buf_size);
}
void png_set_sRGB(png_const_structrp png_ptr, png_inforp info_ptr, int srgb_intent) {
    CALL(png, png_set_sRGB)(png_ptr, info_ptr, srgb_intent);
}
void png_set_write_fn(png_structrp png_ptr, png_voidp io_ptr, png_rw_ptr write_data_fn, png_flush_ptr output_flush_fn) {
    CALL(png, png_set_write_fn)(png_ptr, io_ptr, write_data_fn, output_flush_fn);
}
void png_write_end(png_structrp png_ptr, png_inforp info_ptr) { CALL(png, png_write_end)(png_ptr, info_ptr); }
void png_write_info(png_structrp png_ptr, png_const_inforp info_ptr) { CALL(png, png_write_info)(png_ptr, info_ptr); }
void png_write_row(png_structrp png_ptr, png_const_bytep row) { CALL(png, png_write_row)(png_ptr, row); }

/* libudev */

const char *udev_device_get_property_value(struct udev_device *udev_device, const char *key) {
    return CALL(udev, udev_device_get_property_value)(udev_device, key);
}
struct udev_device *udev_device_unref(struct udev_device *udev_device) {
    return CALL(udev, udev_device_unref)(udev_device);
}
int udev_monitor_enable_receiving(struct udev_monitor *udev_monitor) {
    return CALL(udev, udev_monitor_enable_receiving)(udev_monitor);
}
int udev_monitor_filter_add_match_subsystem_devtype(struct udev_monitor *udev_monitor, const char *subsystem,
                                                    const char *devtype) {
    return CALL(udev, udev_monitor_filter_add_match_subsystem_devtype)(udev_monitor, subsystem, devtype);
}
int udev_monitor_get_fd(struct udev_monitor *udev_monitor) { return CALL(udev, udev_monitor_get_fd)(udev_monitor); }
struct udev_monitor *udev_monitor_new_from_netlink(struct udev *udev, const char *name) {
    return CALL(udev, udev_monitor_new_from_netlink)(udev, name);
}
struct udev_device *udev_monitor_receive_device(struct udev_monitor *udev_monitor) {
    return CALL(udev, udev_monitor_receive_device)(udev_monitor);
}
struct udev_monitor *udev_monitor_unref(struct udev_monitor *udev_monitor) {
    return CALL(udev, udev_monitor_unref)(udev_monitor);
}
struct udev *udev_new(void) { return CALL(udev, udev_new)(); }
struct udev *udev_unref(struct udev *udev) { return CALL(udev, udev_unref)(udev); }
