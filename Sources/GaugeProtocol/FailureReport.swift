/// What the failure screen says (`failure`, `failure-summary`, `failure-line`): a title,
/// a summary line and a producer's own detail lines, the newest kept within
/// `Limits.maxFailureLines` and `Limits.maxFailureBytes`.
package struct FailureReport: Equatable, Sendable {
    /// The title shown when a producer gives none.
    package static let defaultTitle = "Something went wrong"

    /// The title as given (empty: `defaultTitle` shows).
    package var title: String
    package var summary = ""
    /// The boot's identifier ("" where unknown): the first 8 hex digits of the kernel's boot
    /// ID, under which the journal files the boot's lines. The QR code carries it: it finds
    /// the boot in `journalctl --list-boots` later, and so the failed boot's whole log.
    package var bootID = ""
    /// The detail lines kept, the oldest first.
    package private(set) var lines: [String] = []
    /// Detail lines dropped to keep within the limits, oldest first.
    package private(set) var dropped = 0
    private var bytes = 0

    package init(title: String = "") {
        self.title = title
    }

    /// The title to show: the producer's, or `defaultTitle`.
    package var shownTitle: String { title.isEmpty ? Self.defaultTitle : title }

    /// Adds `line` as the newest; the oldest go while more than `maxLines` lines or
    /// `maxBytes` bytes are kept (a line longer than `maxBytes` alone is kept cut to it).
    package mutating func append(_ line: String, maxLines: Int = Limits.maxFailureLines, maxBytes: Int = Limits.maxFailureBytes) {
        let kept = Self.prefix(line, bytes: maxBytes)
        lines.append(kept)
        bytes += kept.utf8.count
        var excess = 0
        while lines.count - excess > maxLines || bytes > maxBytes {
            bytes -= lines[excess].utf8.count
            excess += 1
        }
        if excess > 0 {
            lines.removeFirst(excess)
            dropped += excess
        }
    }

    /// The longest start of `text` of at most `bytes` UTF-8 bytes that ends between
    /// characters.
    package static func prefix(_ text: String, bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        var out = String.UnicodeScalarView()
        var used = 0
        for scalar in text.unicodeScalars {
            let size = UTF8.width(scalar)
            guard used + size <= bytes else { break }
            out.append(scalar)
            used += size
        }
        return String(out)
    }
}
