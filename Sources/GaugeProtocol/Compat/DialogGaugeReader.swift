/// Reads what installer scripts pipe into `dialog --gauge` / `whiptail --gauge` and
/// turns it into requests (`gaugectl gauge`):
///
/// - a line holding a number sets the bar: `.progress(n, message: nil)`; decimals are
///   taken, values outside 0...100 are clamped as dialog clamps them;
/// - a line `XXX` opens a block: the next line is the number (if it is one; otherwise
///   it is already text, as dialog reads it), the following lines are the new message,
///   joined with spaces (a literal `\n` in them, which dialog shows as a line break,
///   becomes a space too), up to a closing `XXX`. The block gives
///   `.progress(n, message: text)`, or `.message(text)` without a number; an empty
///   text clears the message, as an empty dialog prompt does;
/// - empty lines are skipped; any other line outside a block is ignored with a warning;
/// - at EOF a block still open is applied as far as it got, and a last line without
///   its newline counts.
///
/// Lines longer than `Limits.maxLineBytes` are dropped with a warning. Pure.
package struct DialogGaugeReader: Sendable {
    package enum Event: Equatable, Sendable {
        case request(Request)
        case warning(String)
    }

    private struct Block {
        var percent: Double?
        var expectingPercent = true
        var lines: [String] = []
    }

    package let maxLineBytes: Int
    private var pending: [UInt8] = []
    private var discarding = false
    private var block: Block?
    /// Lines read so far, for warnings.
    package private(set) var lineNumber = 0

    package init(maxLineBytes: Int = Limits.maxLineBytes) {
        self.maxLineBytes = maxLineBytes
    }

    package mutating func consume<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> [Event] {
        var events: [Event] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                lineNumber += 1
                if discarding {
                    discarding = false
                } else {
                    events += line(pending)
                }
                pending.removeAll(keepingCapacity: true)
            } else if !discarding {
                if pending.count == maxLineBytes {
                    events.append(.warning("line \(lineNumber + 1): longer than \(maxLineBytes) bytes, ignored"))
                    pending.removeAll(keepingCapacity: true)
                    discarding = true
                } else {
                    pending.append(byte)
                }
            }
        }
        return events
    }

    /// The end of the stream.
    package mutating func finish() -> [Event] {
        var events: [Event] = []
        if !pending.isEmpty && !discarding {
            lineNumber += 1
            events += line(pending)
        }
        pending.removeAll()
        discarding = false
        if let open = block {
            block = nil
            if open.percent != nil || !open.lines.isEmpty {
                events += Self.requests(for: open)
            }
        }
        return events
    }

    private mutating func line(_ raw: [UInt8]) -> [Event] {
        var bytes = raw[...]
        if bytes.last == UInt8(ascii: "\r") { bytes = bytes.dropLast() }
        let text = String(decoding: bytes, as: UTF8.self)
        let isMarker = Self.trimmed(text) == "XXX"
        if var open = block {
            if isMarker {
                block = nil
                return Self.requests(for: open)
            }
            if open.expectingPercent {
                open.expectingPercent = false
                if let value = CompatText.percentage(text) {
                    open.percent = value
                    block = open
                    return []
                }
            }
            open.lines.append(text)
            block = open
            return []
        }
        if isMarker {
            block = Block()
            return []
        }
        if Self.trimmed(text).isEmpty { return [] }
        if let value = CompatText.percentage(text) {
            return [.request(.progress(value, message: nil))]
        }
        return [.warning("line \(lineNumber): \(CompatText.quoted(text)) is not a number 0-100 or XXX, ignored")]
    }

    /// dialog's `\n` (backslash, n) in gauge text becomes a space. Written out by hand:
    /// `String.replacing` would link Swift's regex engine into both binaries (1.7 MB).
    private static func literalNewlinesAsSpaces(_ line: String) -> String {
        var out = ""
        var pendingBackslash = false
        for scalar in line.unicodeScalars {
            if pendingBackslash {
                pendingBackslash = false
                if scalar == "n" {
                    out.unicodeScalars.append(" ")
                    continue
                }
                out.unicodeScalars.append("\\")
            }
            if scalar == "\\" {
                pendingBackslash = true
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        if pendingBackslash { out.unicodeScalars.append("\\") }
        return out
    }

    private static func requests(for block: Block) -> [Event] {
        let joined = block.lines.map(Self.literalNewlinesAsSpaces).joined(separator: " ")
        let text = CompatText.clean(String(trimmed(joined)))
        guard let percent = block.percent else { return [.request(.message(text))] }
        if text.isEmpty {
            return [.request(.progress(percent, message: nil)), .request(.message(""))]
        }
        return [.request(.progress(percent, message: text))]
    }

    private static func trimmed(_ text: String) -> Substring {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        var slice = Substring(text)
        while let first = slice.first, blank(first) { slice = slice.dropFirst() }
        while let last = slice.last, blank(last) { slice = slice.dropLast() }
        return slice
    }
}
