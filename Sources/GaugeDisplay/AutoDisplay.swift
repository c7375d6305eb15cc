import CDRM
import CGaugeLinux
import GaugeSystem

/// A display device node: its kind and path.
package struct DeviceNode: Equatable, Sendable {
    package var kind: DeviceKind
    package var path: String

    package init(kind: DeviceKind, path: String) {
        self.kind = kind
        self.path = path
    }
}

/// The display device nodes there are now: `/dev/dri/card*` by card number, then
/// `/dev/fb*` by number. Reads two directories; opens nothing.
package func displayDeviceNodes(dri: String = "/dev/dri", dev: String = "/dev") -> [DeviceNode] {
    numberedEntries(dri, prefix: "card").map { DeviceNode(kind: .drm, path: "\(dri)/card\($0)") }
        + numberedEntries(dev, prefix: "fb").map { DeviceNode(kind: .fbdev, path: "\(dev)/fb\($0)") }
}

/// What the node's driver calls itself: `drmGetVersion`'s name for a DRM card, `fix.id`
/// for a framebuffer. Opens the node without blocking and closes it again.
package func probeDisplayDriver(_ node: DeviceNode) -> Result<String, DisplayError> {
    let flags = node.kind == .drm ? O_RDWR | O_NONBLOCK : O_RDONLY | O_NONBLOCK
    let fd: Int32
    do throws(SystemError) {
        fd = try Syscall.open(node.path, flags: flags)
    } catch {
        return .failure(DisplayError("\(node.kind.rawValue) \(node.path): cannot open: \(errnoText(error.errno))"))
    }
    defer { Syscall.close(fd) }
    switch node.kind {
    case .drm:
        guard let version = drmGetVersion(fd) else {
            return .failure(DisplayError("drm \(node.path): no driver version (\(errnoText()))"))
        }
        defer { drmFreeVersion(version) }
        return .success(version.pointee.name.map { String(cString: $0) } ?? "unknown")
    case .fbdev:
        var fixed = fb_fix_screeninfo()
        do throws(SystemError) {
            try Syscall.ioctl(fd, CGL_FBIOGET_FSCREENINFO, &fixed, "FBIOGET_FSCREENINFO")
        } catch {
            return .failure(DisplayError("fbdev \(node.path): not a framebuffer (\(errnoText(error.errno)))"))
        }
        return .success(framebufferID(fixed))
    }
}

/// Opens the display on a node: DRM master and a mode set for a card, the mapping for a
/// framebuffer.
package func openDeviceDisplay(_ node: DeviceNode) throws(DisplayError) -> any DeviceDisplay {
    switch node.kind {
    case .drm: return try DRMDisplay(path: node.path)
    case .fbdev: return try FBDevDisplay(path: node.path)
    }
}

/// `drm:/dev/dri/card1` → ("drm", "/dev/dri/card1"); `auto` → ("auto", nil).
package func splitDisplaySpec(_ spec: String) -> (kind: String, path: String?) {
    guard let colon = spec.firstIndex(of: ":") else { return (spec, nil) }
    let path = String(spec[spec.index(after: colon)...])
    return (String(spec[..<colon]), path.isEmpty ? nil : path)
}

/// `/dev/dri/card0`, `/dev/dri/card1`, ... that exist, by card number.
package func drmCardPaths(directory: String = "/dev/dri") -> [String] {
    numberedEntries(directory, prefix: "card").map { "\(directory)/card\($0)" }
}

/// `fix.id`, up to its first NUL.
func framebufferID(_ fixed: fb_fix_screeninfo) -> String {
    withUnsafeBytes(of: fixed.id) { bytes in
        String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
    }
}

/// The numbers N of the entries `<prefix>N` in `directory`, ascending (at most 256).
private func numberedEntries(_ directory: String, prefix: String) -> [Int] {
    guard let names = try? Syscall.directoryEntries(directory) else { return [] }
    var numbers: [Int] = []
    for name in names where numbers.count < 256 && name.hasPrefix(prefix) {
        guard let number = DecimalDigits.value(name.dropFirst(prefix.count), maxDigits: 9) else { continue }
        numbers.append(Int(number))
    }
    return numbers.sorted()
}
