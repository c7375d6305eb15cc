/// The one layout of `gauged --help` and `gaugectl --help`: paragraphs and two-column
/// tables (an option or command, then what it does) wrapped to fit 80 columns.
///
/// A table row starts its description at `column`; a label too long for that gets a
/// line of its own and the description starts on the next one, at the same column.
package enum HelpText {
    package static let width = 80
    package static let column = 22

    /// `text` wrapped at spaces to `width`, every line starting with `indent` spaces.
    /// Line breaks in `text` are spaces: each call is one paragraph.
    package static func paragraph(_ text: String, indent: Int = 0, first: String? = nil) -> [String] {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
        let pad = String(repeating: " ", count: indent)
        var lines: [String] = []
        var line = first ?? pad
        var lineHasWord = false
        for word in words {
            if lineHasWord && line.count + 1 + word.count > width {
                lines.append(line)
                line = pad
                lineHasWord = false
            }
            line += (lineHasWord ? " " : "") + word
            lineHasWord = true
        }
        if lineHasWord || first != nil { lines.append(line) }
        return lines
    }

    /// Rows of `  LABEL  description`, the descriptions aligned at `column`.
    package static func table(_ rows: [(label: String, text: String)]) -> [String] {
        var lines: [String] = []
        for (label, text) in rows {
            let head = "  " + label
            if head.count + 2 <= column {
                let first = head + String(repeating: " ", count: column - head.count)
                lines += paragraph(text, indent: column, first: first)
            } else {
                lines.append(head)
                lines += paragraph(text, indent: column)
            }
        }
        return lines
    }
}
