/// A theme file's `base = NAME`: the shipped theme it is built on.
///
/// The shipped themes are `NAME.theme` in `directory` (`/usr/share/gauge/themes`, upgraded
/// with the package); `/etc/gauge/gauge.theme` names one with `base` and may set keys of
/// its own, which apply over the base's wherever they stand in the file. The daemon's
/// theme reader (`ThemeFile`), `gaugectl theme --list` and `--set`, and the initramfs
/// hooks' `gauge-files` all read it this way; the last `base` line wins, as for every key.
package enum ThemeBase {
    /// Where the shipped themes are; `GAUGE_THEMES` in the environment names another
    /// (the tests', a checkout's `data/themes`).
    package static let directory = "/usr/share/gauge/themes"
    package static let key = "base"
    /// The file `gaugectl theme --set` writes, and the one the boot reads.
    package static let chosenFile = "/etc/gauge/gauge.theme"

    /// Whether `name` can name a shipped theme: letters, digits, `_` and `-` (no `/` or
    /// `.`, so it never leaves the directory).
    package static func isName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                return true
            default:
                return false
            }
        }
    }

    /// The file of the theme `name` in `directory`.
    package static func path(of name: String, in directory: String) -> String {
        (directory.hasSuffix("/") ? directory : directory + "/") + name + ".theme"
    }

    /// The names of the themes in `directory` (`NAME.theme` files), sorted.
    package static func names(in entries: [String]) -> [String] {
        entries.compactMap { entry -> String? in
            guard entry.hasSuffix(".theme") else { return nil }
            let name = String(entry.dropLast(6))
            return isName(name) ? name : nil
        }.sorted()
    }

    /// The key and value of a theme file's line (`key = value`, `section.key = value`,
    /// quotes removed); nil for a comment, a section header, a blank or a bad line.
    package static func setting(of line: Substring) -> (key: String, value: String)? {
        let text = trimmed(line)
        guard let first = text.first, first != "#", first != ";", first != "[",
            let equals = text.firstIndex(of: "=")
        else { return nil }
        var key = text[..<equals]
        if let dot = key.lastIndex(of: ".") { key = key[key.index(after: dot)...] }
        var value = trimmed(text[text.index(after: equals)...])
        if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = value.dropFirst().dropLast() }
        return (String(trimmed(key)), String(value))
    }

    /// The base `text` names (its last `base` line), with that line's number.
    package static func named(in text: String) -> (name: String, line: Int)? {
        var found: (name: String, line: Int)?
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if let setting = setting(of: line), setting.key == key { found = (setting.value, index + 1) }
        }
        return found
    }

    /// `text` (a theme file's, nil: none yet) with `base = name` as its only base line: in
    /// the first one's place, or after the comments it starts with. Every other line, the
    /// administrator's own keys among them, stays as it was.
    package static func choosing(_ name: String, in text: String?) -> String {
        guard let text, !text.isEmpty else {
            return """
                # The look of Gauge's splash: a theme from \(directory) (gaugectl theme --list;
                # gaugectl theme --set NAME changes this line). Keys set below apply over it (gauge.theme(5)).
                \(key) = \(name)

                """
        }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let bases = lines.indices.filter { setting(of: lines[$0][...])?.key == key }
        if let first = bases.first {
            lines[first] = "\(key) = \(name)"
            for index in bases.dropFirst().reversed() { lines.remove(at: index) }
        } else {
            let place = lines.firstIndex { line in
                let text = trimmed(line[...])
                return !text.hasPrefix("#") && !text.hasPrefix(";")
            } ?? lines.count
            lines.insert("\(key) = \(name)", at: place)
        }
        return lines.joined(separator: "\n")
    }

    private static func trimmed(_ text: Substring) -> Substring {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = text.firstIndex(where: { !blank($0) }), let last = text.lastIndex(where: { !blank($0) }) else {
            return text[text.endIndex...]
        }
        return text[first...last]
    }
}
