/*
 * Stands in for a display manager taking the screen over from the splash, as GDM does
 * (tools/qemu/vm-test, configuration bochs-drm-handover): opens the DRM card and becomes its
 * master (the splash must have let go: `plymouth deactivate`), prints "master", waits for a
 * line on standard input, then shows one colour (RRGGBB, the second argument) in the first
 * connected connector's preferred mode, prints "drawn", and holds the card until killed (a
 * master that closes the card gives the screen back to the console).
 * Usage: vm-drm-client /dev/dri/card0 RRGGBB
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

static int fail(const char *what) {
    perror(what);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: vm-drm-client CARD RRGGBB\n");
        return 2;
    }
    int fd = open(argv[1], O_RDWR | O_CLOEXEC);
    if (fd < 0) return fail("open");
    if (drmSetMaster(fd) != 0) return fail("drmSetMaster");
    printf("master\n");
    fflush(stdout);
    char line[16];
    if (!fgets(line, sizeof line, stdin)) return fail("stdin");

    drmModeRes *resources = drmModeGetResources(fd);
    if (!resources) return fail("drmModeGetResources");
    drmModeConnector *connector = NULL;
    for (int i = 0; i < resources->count_connectors && !connector; i++) {
        drmModeConnector *candidate = drmModeGetConnector(fd, resources->connectors[i]);
        if (candidate && candidate->connection == DRM_MODE_CONNECTED && candidate->count_modes > 0) {
            connector = candidate;
        } else if (candidate) {
            drmModeFreeConnector(candidate);
        }
    }
    if (!connector) return fail("no connected connector");
    drmModeModeInfo mode = connector->modes[0];
    uint32_t crtc = resources->crtcs[0];
    drmModeEncoder *encoder = drmModeGetEncoder(fd, connector->encoder_id ? connector->encoder_id : connector->encoders[0]);
    if (encoder && encoder->crtc_id) crtc = encoder->crtc_id;

    struct drm_mode_create_dumb create = {.width = mode.hdisplay, .height = mode.vdisplay, .bpp = 32};
    if (drmIoctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &create) != 0) return fail("DRM_IOCTL_MODE_CREATE_DUMB");
    uint32_t framebuffer;
    if (drmModeAddFB(fd, create.width, create.height, 24, 32, create.pitch, create.handle, &framebuffer) != 0)
        return fail("drmModeAddFB");
    struct drm_mode_map_dumb map = {.handle = create.handle};
    if (drmIoctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &map) != 0) return fail("DRM_IOCTL_MODE_MAP_DUMB");
    uint32_t *pixels = mmap(NULL, create.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, map.offset);
    if (pixels == MAP_FAILED) return fail("mmap");
    uint32_t colour = (uint32_t)strtoul(argv[2], NULL, 16);
    for (uint64_t i = 0; i < create.size / 4; i++) pixels[i] = colour;
    if (drmModeSetCrtc(fd, crtc, framebuffer, 0, 0, &connector->connector_id, 1, &mode) != 0)
        return fail("drmModeSetCrtc");
    printf("drawn\n");
    fflush(stdout);
    for (;;) pause();
}
