import GaugeProtocol

/// The detail lines `gaugectl failure --details` sends: a producer's log, bytes as they
/// come, made into lines the failure screen can show. Bytes that are not UTF-8 become
/// U+FFFD; escape sequences (CSI, OSC, DCS and the like, 7-bit or C1) are left out; a tab
/// becomes spaces to the next multiple of 8; a carriage return starts the line over, as
/// on a terminal (a progress counter shows its last state); other control characters are
/// left out. Each line is cut at `Limits.maxFailureTextBytes` between characters. Only the
/// newest `maxLines` lines within `maxBytes` are kept, and `dropped` counts the others,
/// so a log of any size is read in bounded memory.
package struct FailureDetails {
    /// The newest lines, kept by the failure screen's own rule (`FailureReport.append`).
    private var kept = FailureReport(title: "")
    package var lines: [String] { kept.lines }
    package var dropped: Int { kept.dropped }
    private var current: [UInt8] = []
    /// Bytes of the current line past what is kept of it are skipped to its newline.
    private var overlong = false
    private let maxLines: Int
    private let maxBytes: Int

    /// Raw bytes held for one line: room for escape sequences around its text.
    private static let maxRawLineBytes = 4 * Limits.maxFailureTextBytes

    package init(maxLines: Int = Limits.maxFailureLines, maxBytes: Int = Limits.maxFailureBytes) {
        self.maxLines = maxLines
        self.maxBytes = maxBytes
    }

    package mutating func consume<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                endLine()
            } else if current.count < Self.maxRawLineBytes {
                current.append(byte)
            } else {
                overlong = true
            }
        }
    }

    /// The end of the input: a last line without its newline counts.
    package mutating func finish() {
        if !current.isEmpty || overlong { endLine() }
    }

    private mutating func endLine() {
        kept.append(Self.clean(current), maxLines: maxLines, maxBytes: maxBytes)
        current.removeAll(keepingCapacity: true)
        overlong = false
    }

    /// One line's bytes as text the screen may show (see the type), cut at
    /// `Limits.maxFailureTextBytes`.
    package static func clean<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let text = String(decoding: bytes, as: UTF8.self)
        var out = String.UnicodeScalarView()
        var column = 0
        var escape = EscapeState.none
        for scalar in text.unicodeScalars {
            if escape.consume(scalar) { continue }
            switch scalar.value {
            case 0x09:
                let spaces = 8 - column % 8
                out.append(contentsOf: repeatElement(" ", count: spaces))
                column += spaces
            case 0x0D:
                out.removeAll()
                column = 0
            case 0x1B, 0x9B, 0x9D, 0x90, 0x98, 0x9E, 0x9F:
                escape = EscapeState(introducer: scalar)
            case 0x00...0x1F, 0x7F...0x9F:
                continue
            default:
                out.append(scalar)
                column += 1
            }
        }
        return FailureReport.prefix(String(out), bytes: Limits.maxFailureTextBytes)
    }

    /// Where an escape sequence being skipped stands.
    private enum EscapeState {
        case none
        /// After ESC: the next character says which kind.
        case escape
        /// A control sequence (ESC [ or CSI): parameters and intermediates up to a final
        /// byte 0x40-0x7E.
        case control
        /// A string (OSC, DCS, SOS, PM, APC) up to BEL, ST (ESC \ or U+009C).
        case string
        /// ESC inside a string: `\` ends it.
        case stringEscape
        /// ESC and intermediates 0x20-0x2F up to a final byte.
        case intermediate

        init(introducer: Unicode.Scalar) {
            switch introducer.value {
            case 0x9B: self = .control
            case 0x1B: self = .escape
            default: self = .string
            }
        }

        /// Whether `scalar` belongs to the sequence (and is skipped).
        mutating func consume(_ scalar: Unicode.Scalar) -> Bool {
            let v = scalar.value
            switch self {
            case .none: return false
            case .escape:
                switch v {
                case 0x5B: self = .control
                case 0x5D, 0x50, 0x58, 0x5E, 0x5F: self = .string
                case 0x20...0x2F: self = .intermediate
                default: self = .none
                }
            case .control:
                if (0x40...0x7E).contains(v) { self = .none }
            case .intermediate:
                if (0x30...0x7E).contains(v) { self = .none }
            case .string:
                if v == 0x07 || v == 0x9C { self = .none } else if v == 0x1B { self = .stringEscape }
            case .stringEscape:
                self = v == 0x5C ? .none : .string
            }
            return true
        }
    }
}
