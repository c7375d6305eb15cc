import CGaugeLinux
import CGaugeQR
import CPixman
import GaugeProtocol

/// A QR code's modules (libqrencode's, level M, byte mode), and what it carries.
package struct QRCode: Equatable {
    /// Modules on a side (21 for version 1, 4 more each version).
    package let width: Int
    /// `width` * `width`, row after row, true for a dark module.
    package let dark: [Bool]
    /// The bytes it encodes.
    package let payload: [UInt8]

    /// The largest version the failure screen uses: 97 modules, 666 bytes at level M. Denser
    /// codes hold more but a phone's photo of a screen reads them less surely.
    package static let maxVersion = 20

    /// Modules of quiet (light) border a reader needs on each side.
    static let quietZone = 4

    private init(width: Int, dark: [Bool], payload: [UInt8]) {
        self.width = width
        self.dark = dark
        self.payload = payload
    }

    /// What encoding gave: the code, none (the payload does not fit in `maxVersion`), or why
    /// no code can be made at all (libqrencode missing or failing).
    package enum Made: Equatable {
        case code(QRCode)
        case tooLong
        case failed(String)
    }

    /// The code for `payload` in the smallest version up to `maxVersion`.
    package static func make(_ payload: [UInt8], maxVersion: Int) -> Made {
        var modules: UnsafeMutablePointer<UInt8>?
        var message = [CChar](repeating: 0, count: 160)
        let width = payload.withUnsafeBufferPointer { bytes in
            message.withUnsafeMutableBufferPointer { text in
                gauge_qr_encode(bytes.baseAddress, bytes.count, Int32(maxVersion), &modules, text.baseAddress, text.count)
            }
        }
        guard width > 0, let modules else {
            guard width < 0 else { return .tooLong }
            return .failed(message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        }
        defer { free(modules) }
        let dark = (0..<Int(width) * Int(width)).map { modules[$0] != 0 }
        return .code(QRCode(width: Int(width), dark: dark, payload: payload))
    }

    /// The failure screen's code: its title, its summary, the boot's identifier ("Boot" and
    /// `FailureReport.bootID`, to search `journalctl --list-boots` for), then the newest
    /// detail lines that fit, one a line, as plain UTF-8 text a phone's camera shows as it
    /// is; where lines are left out (those that do not fit, and those the daemon dropped), a
    /// line before them says how many (`omittedNote`). `.tooLong` when not even the title,
    /// summary and identifier fit in `maxVersion`.
    package static func failureReport(_ report: FailureReport, maxVersion: Int) -> Made {
        func payload(_ count: Int) -> [UInt8] {
            var text = Array(report.shownTitle.utf8)
            if !report.summary.isEmpty { text += [0x0A] + Array(report.summary.utf8) }
            if !report.bootID.isEmpty { text += Array("\nBoot ".utf8) + Array(report.bootID.utf8) }
            let omitted = report.dropped + report.lines.count - count
            if omitted > 0 { text += [0x0A] + Array(omittedNote(omitted).utf8) }
            for line in report.lines.suffix(count) { text += [0x0A] + Array(line.utf8) }
            return text
        }
        let least = make(payload(0), maxVersion: maxVersion)
        guard case .code = least else { return least }
        var best = least
        // The most lines that fit: more lines never take fewer bytes.
        var low = 0, high = report.lines.count
        while low < high {
            let middle = (low + high + 1) / 2
            let made = make(payload(middle), maxVersion: maxVersion)
            if case .code = made {
                best = made
                low = middle
            } else {
                high = middle - 1
            }
        }
        return best
    }

    /// The code's line before its detail lines when `count` earlier ones are not in it:
    /// "... 12 earlier lines not in this code". ASCII: a code without ECI whose only other
    /// bytes are ASCII is read as Shift JIS by decoders that guess (zbar made "…" "窶ｦ").
    static func omittedNote(_ count: Int) -> String {
        "... \(count) earlier \(count == 1 ? "line" : "lines") not in this code"
    }

    /// The modules as an a8 mask of `module` pixels each, quiet zone included (transparent),
    /// dark modules opaque.
    func mask(module: Int) -> PixmanImage {
        let side = (width + 2 * Self.quietZone) * module
        let mask = PixmanImage(format: PIXMAN_a8, width: side, height: side)
        for row in 0..<width {
            var column = 0
            while column < width {
                guard dark[row * width + column] else { column += 1; continue }
                let start = column
                while column < width && dark[row * width + column] { column += 1 }
                mask.fill(Rect(x: (Self.quietZone + start) * module, y: (Self.quietZone + row) * module,
                               width: (column - start) * module, height: module), color: .white)
            }
        }
        return mask
    }
}
