/// The two kinds of kernel display device Gauge draws on.
package enum DeviceKind: String, Sendable {
    /// A DRM card, `/dev/dri/cardN`.
    case drm
    /// A framebuffer device, `/dev/fbN`.
    case fbdev
}

/// How good a display device is for the splash, worst first. `--display auto` starts on the
/// best device there is and moves as soon as a better one appears; a device of the same rank
/// as the one in use is not worth a move.
///
/// Firmware devices are what the firmware left set up (one mode, no page flips, and the
/// kernel unregisters them when the real driver for the same hardware loads); the driver's
/// own devices replace them.
package enum DeviceRank: Int, Comparable, Sendable, CustomStringConvertible {
    /// A framebuffer the firmware set up: efifb ("EFI VGA"), vesafb ("VESA VGA"),
    /// simplefb ("simple"), offb, vga16fb, or the fbdev emulation of a firmware DRM driver.
    case firmwareFramebuffer
    /// The framebuffer of a real driver, for example DRM's fbdev emulation
    /// ("bochs-drmdrmfb", "virtio_gpudrmfb", "i915drmfb").
    case framebuffer
    /// A DRM driver for the firmware's framebuffer: simpledrm, ofdrm, efidrm, vesadrm.
    case firmwareDRM
    /// A DRM card of a real KMS driver (bochs-drm, virtio_gpu, i915, amdgpu, nouveau...).
    case drm

    package static func < (lhs: DeviceRank, rhs: DeviceRank) -> Bool { lhs.rawValue < rhs.rawValue }

    package var description: String {
        switch self {
        case .firmwareFramebuffer: "firmware framebuffer"
        case .framebuffer: "framebuffer"
        case .firmwareDRM: "firmware DRM"
        case .drm: "DRM"
        }
    }

    /// DRM drivers (`drmGetVersion` names) that only drive what the firmware set up.
    static let firmwareDRMDrivers: Set<String> = ["simpledrm", "ofdrm", "efidrm", "vesadrm"]

    /// fbdev identities (`fb_fix_screeninfo.id`) of the firmware framebuffer drivers, as
    /// Linux names them: efifb "EFI VGA", vesafb "VESA VGA", simplefb "simple", vga16fb
    /// "VGA16 VGA"; offb's start with "OFfb".
    static let firmwareFramebufferIDs: Set<String> = ["EFI VGA", "VESA VGA", "simple", "VGA16 VGA"]

    /// The rank of a device from its kind and driver name (`drmGetVersion`'s name for DRM,
    /// `fix.id` for fbdev). DRM's fbdev emulation names itself "<driver>drmfb", cut to the
    /// 15 characters `fix.id` holds.
    package init(kind: DeviceKind, driver: String) {
        switch kind {
        case .drm:
            self = Self.firmwareDRMDrivers.contains(driver) ? .firmwareDRM : .drm
        case .fbdev:
            if Self.firmwareFramebufferIDs.contains(driver) || driver.hasPrefix("OFfb") {
                self = .firmwareFramebuffer
            } else if Self.firmwareDRMDrivers.contains(where: { Self.isEmulation(driver, of: $0) }) {
                self = .firmwareFramebuffer
            } else {
                self = .framebuffer
            }
        }
    }

    /// The best a device of this kind can be, before its driver is known.
    package static func best(of kind: DeviceKind) -> DeviceRank {
        kind == .drm ? .drm : .framebuffer
    }

    /// Whether a device shows a screen of its own beside real KMS drivers' cards whose
    /// drivers are `cards`: another such card, or the framebuffer of an fbdev driver of its
    /// own (an SPI panel's fbtft, a USB display's udlfb). Not the firmware's devices, which
    /// show what one of the cards will, nor a DRM card's fbdev emulation ("<driver>drmfb").
    package static func showsBeside(cards: [String], kind: DeviceKind, driver: String) -> Bool {
        switch DeviceRank(kind: kind, driver: driver) {
        case .drm: return true
        case .framebuffer: return !driver.hasSuffix("drmfb") && !cards.contains { isEmulation(driver, of: $0) }
        case .firmwareDRM, .firmwareFramebuffer: return false
        }
    }

    private static func isEmulation(_ id: String, of driver: String) -> Bool {
        let full = driver + "drmfb"
        return id == full || (id.utf8.count == 15 && full.hasPrefix(id))
    }
}

/// A display device found on the system, with what its driver calls itself.
package struct DisplayCandidate: Equatable, Sendable, CustomStringConvertible {
    package var kind: DeviceKind
    package var path: String
    package var driver: String

    package init(kind: DeviceKind, path: String, driver: String) {
        self.kind = kind
        self.path = path
        self.driver = driver
    }

    package var rank: DeviceRank { DeviceRank(kind: kind, driver: driver) }

    package var description: String { "\(kind.rawValue) \(path) \(driver)" }

    /// The candidates best first: by rank, and within a rank in the order given (card0
    /// before card1, as the kernel numbered them).
    package static func preferred(_ candidates: [DisplayCandidate]) -> [DisplayCandidate] {
        candidates.enumerated()
            .sorted { $0.element.rank != $1.element.rank ? $0.element.rank > $1.element.rank : $0.offset < $1.offset }
            .map { $0.element }
    }
}
