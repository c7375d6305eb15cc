#include <stdint.h>
#include <stddef.h>
#include <xf86drm.h>
#include <xf86drmMode.h>
#include <drm_fourcc.h>

/* drm_fourcc.h builds its codes with a function-like macro Swift cannot import. */
static const uint32_t GAUGE_DRM_FORMAT_XRGB8888 = DRM_FORMAT_XRGB8888;
static const uint32_t GAUGE_DRM_FORMAT_RGB565 = DRM_FORMAT_RGB565;

/* DRM_IOCTL_MODE_CLOSEFB (Linux 6.8): forget a framebuffer without taking it off the
   screen, so the last frame stays after the process exits. Older headers lack it. */
struct gauge_drm_mode_closefb {
    uint32_t fb_id;
    uint32_t pad;
};
static const unsigned long GAUGE_DRM_IOCTL_MODE_CLOSEFB =
    DRM_IOWR(0xD0, struct gauge_drm_mode_closefb);
