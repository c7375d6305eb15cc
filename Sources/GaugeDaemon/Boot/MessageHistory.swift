/// The boot's messages and steps so far, as the details view shows them: each text once
/// in a row (a repeat of the last is not kept), blanks at the ends and empty texts left
/// out, line breaks made spaces, each cut to `maxCharacters`; only the newest `maxLines`
/// are kept, so a client sending messages forever costs a fixed amount of memory.
struct MessageHistory {
    static let maxLines = 100
    static let maxCharacters = 200

    private(set) var lines: [String] = []

    /// Adds `text`; false when nothing was added.
    mutating func append(_ text: String) -> Bool {
        var line = String(String.UnicodeScalarView(text.unicodeScalars.prefix(Self.maxCharacters).map {
            $0.value < 0x20 || $0 == "\u{2028}" || $0 == "\u{2029}" ? " " : $0
        }))
        while line.hasPrefix(" ") { line.removeFirst() }
        while line.hasSuffix(" ") { line.removeLast() }
        guard !line.isEmpty, line != lines.last else { return false }
        if lines.count == Self.maxLines { lines.removeFirst() }
        lines.append(line)
        return true
    }
}
