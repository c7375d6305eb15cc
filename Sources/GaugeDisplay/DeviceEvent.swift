import GaugeSystem

/// A display device coming, going or changing, as the kernel or udev announces it.
package struct DeviceEvent: Equatable, Sendable {
    package enum Action: String, Sendable {
        case add, remove, change
        /// bind, unbind, move, online, offline: nothing a display follows by itself.
        case other
    }

    package var action: Action
    package var subsystem: String
    /// The node under /dev ("dri/card0", "fb0"), when the device has one.
    package var devname: String?
    /// What matches a remove event to the device in use, whatever path it was opened
    /// through. Numbers are given again once a device is gone, so whether the device in
    /// use is still there is asked of the kernel through its descriptor
    /// (`DeviceDisplay.isPresent()`).
    package var number: DeviceNumber?

    package init(action: Action, subsystem: String, devname: String?, number: DeviceNumber? = nil) {
        self.action = action
        self.subsystem = subsystem
        self.devname = devname
        self.number = number
    }

    /// `/dev/<devname>`.
    package var path: String? { devname.map { "/dev/" + $0 } }

    /// A DRM card or a framebuffer, the devices a display is made on (not DRM's render
    /// nodes or connectors).
    package var isDisplayDevice: Bool {
        guard let devname else { return false }
        switch subsystem {
        case "drm": return devname.hasPrefix("dri/card")
        case "graphics": return devname.hasPrefix("fb")
        default: return false
        }
    }

    /// The longest uevent the kernel sends (`UEVENT_BUFFER_SIZE`); longer input is cut here.
    package static let maximumLength = 2048

    /// Parses one datagram of the kernel's uevent netlink group: a header `ACTION@DEVPATH`,
    /// then `KEY=VALUE` fields, each ended by a NUL byte. Reads at most `maximumLength`
    /// bytes; nil for anything else (udev's own messages start with "libudev").
    package static func parseKernelUevent(_ bytes: UnsafeRawBufferPointer) -> DeviceEvent? {
        let bytes = UnsafeRawBufferPointer(rebasing: bytes.prefix(maximumLength))
        var fields: [String: String] = [:]
        var header: String?
        var start = 0
        for index in 0...bytes.count where index == bytes.count || bytes[index] == 0 {
            defer { start = index + 1 }
            guard index > start else { continue }
            let field = String(decoding: bytes[start..<index], as: UTF8.self)
            if header == nil {
                // The header is the only field with '@' before any '='.
                guard let at = field.firstIndex(of: "@"), !field[..<at].contains("=") else { return nil }
                header = field
                continue
            }
            guard let equals = field.firstIndex(of: "=") else { continue }
            let key = String(field[..<equals])
            if Self.keys.contains(key) { fields[key] = String(field[field.index(after: equals)...]) }
        }
        guard header != nil else { return nil }
        return make(fields)
    }

    /// From udev's properties (ACTION, SUBSYSTEM, DEVNAME, MAJOR, MINOR); nil without an
    /// action or subsystem. DEVNAME may be the full `/dev/...` path, as udev gives it.
    package static func make(_ properties: [String: String]) -> DeviceEvent? {
        guard let actionText = properties["ACTION"], let subsystem = properties["SUBSYSTEM"] else { return nil }
        var devname = properties["DEVNAME"]
        if let name = devname, name.hasPrefix("/dev/") { devname = String(name.dropFirst(5)) }
        var number: DeviceNumber?
        if let major = properties["MAJOR"].flatMap({ UInt32($0) }), let minor = properties["MINOR"].flatMap({ UInt32($0) }) {
            number = DeviceNumber(major: major, minor: minor)
        }
        return DeviceEvent(
            action: Action(rawValue: actionText) ?? .other, subsystem: subsystem,
            devname: devname?.isEmpty == true ? nil : devname, number: number)
    }

    private static let keys: Set<String> = ["ACTION", "SUBSYSTEM", "DEVNAME", "MAJOR", "MINOR"]
}

/// What a burst of device events means for the display in use: whether it went away, and
/// whether anything else came, went or changed (then the devices are looked at again, once
/// for the whole burst).
package struct DeviceEventSummary: Equatable, Sendable {
    /// A display device was added, removed or changed: worth looking at the devices again.
    package var displaysChanged = false
    /// The device in use was removed.
    package var currentRemoved = false
    /// A framebuffer device was added: a DRM card's own fbdev emulation, registered after
    /// the card, among them (never the one in use, which was there before).
    package var framebufferAdded = false

    package init(displaysChanged: Bool = false, currentRemoved: Bool = false, framebufferAdded: Bool = false) {
        self.displaysChanged = displaysChanged
        self.currentRemoved = currentRemoved
        self.framebufferAdded = framebufferAdded
    }

    /// Folds `events` for the device in use at `path` with `number` (either may be unknown).
    package static func of(
        _ events: [DeviceEvent], currentPath: String?, currentNumber: DeviceNumber?
    ) -> DeviceEventSummary {
        var summary = DeviceEventSummary()
        for event in events where event.isDisplayDevice && event.action != .other {
            summary.displaysChanged = true
            if event.action == .add, event.subsystem == "graphics" { summary.framebufferAdded = true }
            guard event.action == .remove else { continue }
            if let number = event.number, let currentNumber {
                if number == currentNumber { summary.currentRemoved = true }
            } else if let path = event.path, path == currentPath {
                summary.currentRemoved = true
            }
        }
        return summary
    }
}
