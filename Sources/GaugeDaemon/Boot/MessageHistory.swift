/// The boot's messages and steps so far, as the details view shows them: each text once
/// in a row (a repeat of the last is not kept), blanks at the ends and empty texts left
/// out, line breaks made spaces, each cut to `maxCharacters`; only the newest `maxLines`
/// are kept, so a client sending messages forever costs a fixed amount of memory.
struct MessageHistory {
    static let maxLines = 100
    static let maxCharacters = 200

    private(set) var lines: [String] = []

    /// `text` as a line: cut to `maxCharacters`, C0 controls and line breaks made spaces
    /// (the inputs let no other control character through), no blanks at the ends.
    static func line(_ text: String) -> String {
        var line = String(String.UnicodeScalarView(text.unicodeScalars.prefix(maxCharacters).map {
            $0.value < 0x20 || $0 == "\u{2028}" || $0 == "\u{2029}" ? " " : $0
        }))
        while line.hasPrefix(" ") { line.removeFirst() }
        while line.hasSuffix(" ") { line.removeLast() }
        return line
    }

    /// Adds `text`; false when nothing was added.
    mutating func append(_ text: String) -> Bool {
        let line = Self.line(text)
        guard !line.isEmpty, line != lines.last else { return false }
        if lines.count == Self.maxLines { lines.removeFirst() }
        lines.append(line)
        return true
    }

    /// Makes the newest line `new` when it is `old` (a step's name whose description came
    /// after it); false when it is not.
    mutating func replaceLast(_ old: String, with new: String) -> Bool {
        guard lines.last == old else { return false }
        lines[lines.count - 1] = new
        return true
    }
}
