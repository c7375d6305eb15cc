/// Text from a foreign protocol (psplash, Plymouth, dialog, SWUpdate) made fit for a
/// request: invalid UTF-8 becomes U+FFFD, control characters (but tab) become spaces,
/// and the text is cut at a character boundary so its request line stays within
/// `Limits.maxLineBytes`.
package enum CompatText {
    /// Room for a text after the longest command word and value (`progress 100 `).
    package static let maxTextBytes = Limits.maxLineBytes - 32

    package static func clean<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        clean(String(decoding: bytes, as: UTF8.self))
    }

    package static func clean(_ text: String) -> String {
        var view = String.UnicodeScalarView()
        var count = 0
        for scalar in text.unicodeScalars {
            let kept: Unicode.Scalar = Request.isForbiddenControl(scalar) ? " " : scalar
            count += UTF8.width(kept)
            if count > maxTextBytes { break }
            view.append(kept)
        }
        return String(view)
    }

    /// `text` quoted for a log line, at most `limit` characters.
    package static func quoted<S: StringProtocol>(_ text: S, limit: Int = 40) -> String {
        let cleaned = clean(String(text))
        let scalars = cleaned.unicodeScalars
        guard scalars.count > limit else { return "'" + cleaned + "'" }
        var cut = String.UnicodeScalarView()
        cut.append(contentsOf: scalars.prefix(limit))
        return "'" + String(cut) + "…'"
    }

    /// A percentage as foreign tools write it: a plain decimal with optional spaces
    /// around it, clamped to 0...100 as psplash and dialog do. Nil when not a number.
    package static func percentage<S: StringProtocol>(_ text: S) -> Double? {
        let blank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        var bytes = Array(text.utf8)[...]
        while let first = bytes.first, blank(first) { bytes = bytes.dropFirst() }
        while let last = bytes.last, blank(last) { bytes = bytes.dropLast() }
        let word = String(decoding: bytes, as: UTF8.self)
        guard let value = PlainDecimal.parse(word), !value.isNaN else { return nil }
        return min(max(value, 0), 100)
    }
}
