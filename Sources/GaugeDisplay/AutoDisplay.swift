import Glibc

/// `--display auto`: the first DRM card (`/dev/dri/card*`, in name order) that opens with
/// a connected connector and lets us be DRM master, else the framebuffer `/dev/fb0`.
///
/// Logs one line: what opened (and what was passed over on the way), or, when nothing
/// opens, every reason; then returns nil and the daemon goes on serving its socket.
public func openAutoDisplay(
    log: (String) -> Void,
    cards: [String]? = nil, framebuffer: String = "/dev/fb0"
) -> (any DeviceDisplay)? {
    var reasons: [String] = []
    let cards = cards ?? drmCardPaths()
    if cards.isEmpty { reasons.append("drm: no /dev/dri/card*") }
    for card in cards {
        do throws(DisplayError) {
            let display = try DRMDisplay(path: card)
            log(openedLine(display, passedOver: reasons))
            return display
        } catch {
            reasons.append(error.message)
        }
    }
    do throws(DisplayError) {
        let display = try FBDevDisplay(path: framebuffer)
        log(openedLine(display, passedOver: reasons))
        return display
    } catch {
        reasons.append(error.message)
    }
    log("no display (\(reasons.joined(separator: "; "))); serving without one")
    return nil
}

/// Opens what `--display` names for a device: `auto`, `drm`, `drm:PATH`, `fbdev`,
/// `fbdev:PATH`. Nil for `auto` when nothing opens (logged); a named device that does not
/// open is an error. Other specs (`memory:`, `terminal`) are not device displays: nil
/// and no log line, the caller handles them.
public func openDeviceDisplay(spec: String, log: (String) -> Void) throws(DisplayError) -> (any DeviceDisplay)? {
    let (kind, path) = splitDisplaySpec(spec)
    switch kind {
    case "auto":
        return openAutoDisplay(log: log)
    case "drm":
        let display = try DRMDisplay(path: path ?? "/dev/dri/card0")
        log("display: \(display.summary)")
        return display
    case "fbdev":
        let display = try FBDevDisplay(path: path ?? "/dev/fb0")
        log("display: \(display.summary)")
        return display
    default:
        return nil
    }
}

/// `drm:/dev/dri/card1` → ("drm", "/dev/dri/card1"); `auto` → ("auto", nil).
package func splitDisplaySpec(_ spec: String) -> (kind: String, path: String?) {
    guard let colon = spec.firstIndex(of: ":") else { return (spec, nil) }
    let path = String(spec[spec.index(after: colon)...])
    return (String(spec[..<colon]), path.isEmpty ? nil : path)
}

private func openedLine(_ display: any DeviceDisplay, passedOver: [String]) -> String {
    var line = "display: \(display.summary)"
    if !passedOver.isEmpty { line += " (passed over: \(passedOver.joined(separator: "; ")))" }
    return line
}

/// `/dev/dri/card0`, `/dev/dri/card1`, ... that exist, by card number.
package func drmCardPaths(directory: String = "/dev/dri") -> [String] {
    guard let dir = opendir(directory) else { return [] }
    defer { closedir(dir) }
    var numbers: [Int] = []
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
            String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        guard name.hasPrefix("card"), let number = Int(name.dropFirst(4)), number >= 0 else { continue }
        numbers.append(number)
    }
    return numbers.sorted().map { "\(directory)/card\($0)" }
}
