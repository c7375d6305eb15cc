import CFreeType
import CGaugeLinux
import GaugeProtocol
import GaugeSystem

/// A theme's font named by family, `font = DejaVu Sans` or `bold_font = DejaVu Sans:Bold`,
/// found by the names inside the font files under the system's font directories, read
/// with FreeType: gauged needs no fontconfig. (At install and initramfs time
/// `integration/gauge-files` asks fontconfig's `fc-match` which file to carry.)
package enum FontFinder {
    /// Where fonts are looked for, each with its subdirectories.
    package static let directories = ["/usr/share/fonts", "/usr/local/share/fonts"]
    /// Styles that mean "not bold, not italic".
    static let regularStyles: Set<String> = ["regular", "book", "roman", "normal"]
    /// Most files and directory levels looked at (a desktop has a few thousand fonts).
    static let maxFiles = 20000, maxDepth = 8

    /// The file holding `name`'s face (`FAMILY` or `FAMILY:STYLE`, fontconfig's
    /// `FAMILY:style=STYLE` too; the style is Regular, or Bold for the bold font, when not
    /// given), or why there is none. Files whose names look like the family's are opened
    /// first, so the common case reads a few headers.
    package static func find(_ name: String, bold: Bool, directories: [String] = directories) throws(AssetError) -> String {
        let (family, style) = family(name, bold: bold)
        var files: [String] = []
        for directory in directories { collect(directory, depth: 0, into: &files) }
        let squashed = squash(family)
        let likely = files.filter { squash(baseName($0)).hasPrefix(squashed) }
        var library: FT_Library?
        guard FT_Init_FreeType(&library) == 0, let library else { throw AssetError("font: FreeType cannot start") }
        defer { FT_Done_FreeType(library) }
        let wanted = style.asciiLowercased
        for path in likely + files.filter({ !squash(baseName($0)).hasPrefix(squashed) }) {
            guard let file = try? RegularFile(path, maxBytes: Assets.maxFontFileBytes) else { continue }
            var index = 0, count = 1
            while index < count {
                defer { index += 1 }
                guard let face = try? FontFace(library: library, data: FontData(file), path: path, index: index) else { break }
                count = face.faceCount
                guard face.familyName.asciiLowercased == family.asciiLowercased else { continue }
                let have = face.styleName.asciiLowercased
                if have == wanted || (regularStyles.contains(have) && regularStyles.contains(wanted)) { return path }
            }
        }
        throw AssetError("font: no font of family '\(family)' in style '\(style)' under \(directories.joined(separator: ", "))")
    }

    /// A family name's family and style: `FAMILY`, `FAMILY:STYLE` or fontconfig's
    /// `FAMILY:style=STYLE`; the style is Regular (Bold for the bold font) when not given.
    package static func family(_ value: String, bold: Bool) -> (family: String, style: String) {
        guard let colon = value.firstIndex(of: ":") else { return (value.trimmingSpaces, bold ? "Bold" : "Regular") }
        var style = String(value[value.index(after: colon)...]).trimmingSpaces
        if style.asciiLowercased.hasPrefix("style=") { style = String(style.dropFirst(6)).trimmingSpaces }
        return (String(value[..<colon]).trimmingSpaces, style.isEmpty ? (bold ? "Bold" : "Regular") : style)
    }

    private static func collect(_ directory: String, depth: Int, into files: inout [String]) {
        guard depth <= maxDepth, let names = try? Syscall.directoryEntries(directory) else { return }
        for name in names.sorted() where files.count < maxFiles && !name.hasPrefix(".") {
            let path = directory + "/" + name
            guard let status = try? Syscall.fileStatus(path) else { continue }
            if status.isType(S_IFDIR) {
                collect(path, depth: depth + 1, into: &files)
            } else if status.isType(S_IFREG), ThemeSetting.isFontFileName(name) {
                files.append(path)
            }
        }
    }

    private static func baseName(_ path: String) -> String {
        path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
    }

    /// Lower case, letters and digits only: "DejaVu Sans" and "DejaVuSans-Bold.ttf" alike.
    private static func squash(_ text: String) -> String {
        String(decoding: text.asciiLowercased.utf8.filter { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) }, as: UTF8.self)
    }
}
