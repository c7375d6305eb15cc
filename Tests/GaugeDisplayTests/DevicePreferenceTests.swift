import GaugeDisplay
import Testing

@Suite("Device preference")
struct DevicePreferenceTests {
    /// The names Linux 6.1 gives (Debian 12's kernel, seen under QEMU): `drmGetVersion` for
    /// DRM cards, `fix.id` for framebuffers.
    @Test(arguments: [
        (DeviceKind.drm, "bochs-drm", DeviceRank.drm),
        (.drm, "virtio_gpu", .drm),
        (.drm, "i915", .drm),
        (.drm, "amdgpu", .drm),
        (.drm, "simpledrm", .firmwareDRM),
        (.drm, "efidrm", .firmwareDRM),
        (.drm, "vesadrm", .firmwareDRM),
        (.drm, "ofdrm", .firmwareDRM),
        (.fbdev, "bochs-drmdrmfb", .framebuffer),
        (.fbdev, "virtio_gpudrmfb", .framebuffer),
        (.fbdev, "i915drmfb", .framebuffer),
        (.fbdev, "inteldrmfb", .framebuffer),
        (.fbdev, "EFI VGA", .firmwareFramebuffer),
        (.fbdev, "VESA VGA", .firmwareFramebuffer),
        (.fbdev, "simple", .firmwareFramebuffer),
        (.fbdev, "VGA16 VGA", .firmwareFramebuffer),
        (.fbdev, "OFfb ATY,Rage128", .firmwareFramebuffer),
        (.fbdev, "simpledrmdrmfb", .firmwareFramebuffer),
        (.fbdev, "efidrmdrmfb", .firmwareFramebuffer),
    ])
    func rankFromTheDriversName(kind: DeviceKind, driver: String, rank: DeviceRank) {
        #expect(DeviceRank(kind: kind, driver: driver) == rank)
    }

    /// Beside real drivers' cards: other such cards and framebuffers of fbdev drivers of
    /// their own; not the cards' fbdev emulation (i915's is "inteldrmfb"; a long driver's
    /// name is cut to `fix.id`'s 15 characters) nor the firmware's devices.
    @Test(arguments: [
        (DeviceKind.drm, "amdgpu", true),
        (.fbdev, "fb_ili9341", true),
        (.fbdev, "udlfb", true),
        (.fbdev, "inteldrmfb", false),
        (.fbdev, "bochs-drmdrmfb", false),
        (.fbdev, "panel-mipi-dbid", false),
        (.drm, "simpledrm", false),
        (.fbdev, "EFI VGA", false),
        (.fbdev, "simpledrmdrmfb", false),
    ])
    func whatShowsBesideTheCards(kind: DeviceKind, driver: String, beside: Bool) {
        #expect(DeviceRank.showsBeside(cards: ["i915", "panel-mipi-dbi"], kind: kind, driver: driver) == beside)
    }

    @Test func theOrderIsRealDRMThenFirmwareDRMThenRealFramebufferThenFirmwareFramebuffer() {
        #expect(DeviceRank.firmwareFramebuffer < .framebuffer)
        #expect(DeviceRank.framebuffer < .firmwareDRM)
        #expect(DeviceRank.firmwareDRM < .drm)
        // Before the driver is known, a node's kind bounds what it can be.
        #expect(DeviceRank.best(of: .drm) == .drm)
        #expect(DeviceRank.best(of: .fbdev) == .framebuffer)
    }

    @Test func preferredPutsTheBestFirstAndKeepsTheKernelsOrderWithinARank() {
        let candidates = [
            DisplayCandidate(kind: .fbdev, path: "/dev/fb0", driver: "EFI VGA"),
            DisplayCandidate(kind: .drm, path: "/dev/dri/card0", driver: "simpledrm"),
            DisplayCandidate(kind: .fbdev, path: "/dev/fb1", driver: "bochs-drmdrmfb"),
            DisplayCandidate(kind: .drm, path: "/dev/dri/card1", driver: "i915"),
            DisplayCandidate(kind: .drm, path: "/dev/dri/card2", driver: "amdgpu"),
        ]
        #expect(DisplayCandidate.preferred(candidates).map(\.path) == [
            "/dev/dri/card1", "/dev/dri/card2", "/dev/dri/card0", "/dev/fb1", "/dev/fb0",
        ])
        #expect(DisplayCandidate.preferred([]).isEmpty)
    }
}
