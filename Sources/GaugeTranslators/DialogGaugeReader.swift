import GaugeProtocol

/// Reads what installer scripts pipe into `dialog --gauge` / `whiptail --gauge` and
/// turns it into requests (`gaugectl gauge`):
///
/// - a line holding a number sets the bar: `.progress(n, message: nil)`; decimals are
///   taken, values outside 0...100 are clamped as dialog clamps them;
/// - a line `XXX` opens a block: the next line is the number (if it is one; otherwise
///   it is already text, as dialog reads it), the following lines are the new message,
///   joined with spaces, up to a closing `XXX`; a literal `\n` in them (backslash, n) is
///   a line break, as dialog draws it (`Request.lineBreak`; the screen drops the blanks
///   at the ends of each line).
///   The block gives
///   `.progress(n, message: text)`, or `.message(text)` without a number; an empty
///   text clears the message, as an empty dialog prompt does;
/// - empty lines are skipped; any other line outside a block is ignored with a warning;
/// - at EOF a block still open is applied as far as it got, and a last line without
///   its newline counts.
///
/// Lines longer than `Limits.maxLineBytes` are dropped with a warning. A block keeps only
/// as much of its text as a message can show, so a block that never closes holds a few
/// KiB however many lines it runs to. Pure.
package struct DialogGaugeReader: Sendable {
    package enum Event: Equatable, Sendable {
        case request(Request)
        case warning(String)
    }

    private struct Block {
        var percent: Double?
        var expectingPercent = true
        /// The text lines so far, joined with spaces (dialog's `\n` already a line break), as far
        /// as they can matter: blanks before the text are kept as one (it may join with a
        /// combining mark that follows), and once the text is longer than a message can be,
        /// later lines only tell whether more text came after it.
        var text = ""
        var hasLines = false
        /// `text` holds a character that is not blank.
        var hasText = false
        /// Scalars of `text` after its leading blanks, once it has text.
        var contentCount = 0
        var isFull = false
        var textAfterFull = false

        /// Takes one line; the work is linear in the line's length.
        mutating func add(_ line: String) {
            let piece = DialogGaugeReader.literalNewlinesAsBreaks(line)
            if isFull {
                if !DialogGaugeReader.trimmed(piece).isEmpty { textAfterFull = true }
                return
            }
            let addition = hasLines ? " " + piece : piece
            hasLines = true
            text += addition
            if hasText {
                contentCount += addition.unicodeScalars.count
            } else if DialogGaugeReader.trimmed(text).isEmpty {
                text = text.unicodeScalars.last.map { String($0) } ?? ""
            } else {
                hasText = true
                contentCount = text.unicodeScalars.drop { $0 == " " || $0 == "\t" }.count
            }
            // One scalar more than `clean` can keep.
            if contentCount > CompatText.maxTextBytes + 1 { isFull = true }
        }

        /// The message the block's lines make, as if every line had been kept.
        var message: String {
            var slice = Substring(text)
            while let first = slice.first, DialogGaugeReader.isBlank(first) { slice = slice.dropFirst() }
            // Text came after the part kept: blanks at its end are inside the message.
            if !textAfterFull { slice = DialogGaugeReader.trimmed(String(slice)) }
            return CompatText.clean(String(slice))
        }
    }

    package var maxLineBytes: Int { splitter.maxLineBytes }
    private var splitter: LineSplitter
    private var block: Block?
    /// Lines read so far, for warnings.
    package private(set) var lineNumber = 0

    /// Bytes held back: an unfinished line and the text of an open block.
    package var pendingByteCount: Int { splitter.pendingByteCount + (block?.text.utf8.count ?? 0) }

    package init(maxLineBytes: Int = Limits.maxLineBytes) {
        splitter = LineSplitter(maxLineBytes: maxLineBytes)
    }

    package mutating func consume<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> [Event] {
        var events: [Event] = []
        var pieces: [LineSplitter.Piece] = []
        splitter.split(bytes) { pieces.append($0) }
        for piece in pieces { events += take(piece) }
        return events
    }

    /// The end of the stream.
    package mutating func finish() -> [Event] {
        var events: [Event] = []
        if let last = splitter.finish() { events += take(last) }
        if let open = block {
            block = nil
            if open.percent != nil || open.hasLines {
                events += Self.requests(for: open)
            }
        }
        return events
    }

    private mutating func take(_ piece: LineSplitter.Piece) -> [Event] {
        lineNumber += 1
        switch piece {
        case .tooLong: return [.warning("line \(lineNumber): longer than \(maxLineBytes) bytes, ignored")]
        case .line(let bytes): return line(bytes)
        }
    }

    private mutating func line(_ raw: [UInt8]) -> [Event] {
        var bytes = raw[...]
        if bytes.last == UInt8(ascii: "\r") { bytes = bytes.dropLast() }
        let text = String(decoding: bytes, as: UTF8.self)
        let isMarker = Self.trimmed(text) == "XXX"
        if block != nil {
            if isMarker {
                let open = block!
                block = nil
                return Self.requests(for: open)
            }
            // Changed in place: a copy of the block would copy its text on every line.
            if block!.expectingPercent {
                block!.expectingPercent = false
                if let value = CompatText.percentage(text) {
                    block!.percent = value
                    return []
                }
            }
            block!.add(text)
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

    /// dialog's `\n` (backslash, n) in gauge text as a line break (one scalar for two, so
    /// what a block keeps is counted as it will show). Written out by hand:
    /// `String.replacing` would link Swift's regex engine into the executable (1.7 MB).
    fileprivate static func literalNewlinesAsBreaks(_ line: String) -> String {
        var out = ""
        var pendingBackslash = false
        for scalar in line.unicodeScalars {
            if pendingBackslash {
                pendingBackslash = false
                if scalar == "n" {
                    out.unicodeScalars.append(Request.lineBreak)
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
        let text = block.message
        guard let percent = block.percent else { return [.request(.message(text))] }
        if text.isEmpty {
            return [.request(.progress(percent, message: nil)), .request(.message(""))]
        }
        return [.request(.progress(percent, message: text))]
    }

    fileprivate static func isBlank(_ character: Character) -> Bool { character == " " || character == "\t" }

    /// Walks in from each end, so it is linear in the blanks (`dropLast()` on a string
    /// counts it whole each time).
    fileprivate static func trimmed(_ text: String) -> Substring {
        guard let first = text.firstIndex(where: { !isBlank($0) }), let last = text.lastIndex(where: { !isBlank($0) }) else { return "" }
        return text[first...last]
    }
}
