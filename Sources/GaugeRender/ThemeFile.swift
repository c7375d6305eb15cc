import CGaugeLinux
import GaugeProtocol
import GaugeSystem

/// A theme file: `key = value` lines, `[section]` headers, `#` or `;` comments.
///
/// A key inside a section may be written plainly or as `section.key`; sections only group.
/// Unknown keys and bad values are reported with file and line and skipped, so the
/// defaults (or earlier values) stand. The files a theme names (`logo` unless it says
/// `firmware`, `logo_fallback`, `font`, `bold_font`, `fallback_fonts`) may be relative
/// to the theme file's directory, and one that cannot be opened is such a problem too.
/// `font` and `bold_font` may name a family instead (`DejaVu Sans`, `DejaVu Sans:Bold`):
/// the file is found by `FontFinder`, and a family no file has is such a problem.
package enum ThemeFile {
    /// The keys whose values are file paths (`fallback_fonts`: several, comma-separated).
    package static var fileKeys: Set<String> { ThemeSetting.fileKeys }

    package struct Problem: Equatable, Sendable, CustomStringConvertible {
        package var path: String
        package var line: Int
        package var message: String
        package var description: String { "\(path):\(line): \(message)" }
    }

    /// Applies the settings in `text` to `theme`; returns what was wrong.
    package static func apply(_ text: String, to theme: inout Theme, path: String = "<theme>") -> [Problem] {
        var applied: [(key: String, value: String)] = []
        return apply(text, to: &theme, path: path, applied: &applied)
    }

    /// The same, also giving the settings applied, in order (paths as resolved).
    package static func apply(
        _ text: String, to theme: inout Theme, path: String, applied: inout [(key: String, value: String)]
    ) -> [Problem] {
        var problems: [Problem] = []
        var lineNumber = 0
        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = String(raw).trimmingSpaces
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") || line.hasPrefix("[") { continue }
            guard let eq = line.firstIndex(of: "=") else {
                problems.append(Problem(path: path, line: lineNumber, message: "expected key = value"))
                continue
            }
            var key = String(line[..<eq]).trimmingSpaces
            if let dot = key.lastIndex(of: ".") { key = String(key[key.index(after: dot)...]) }
            var value = String(line[line.index(after: eq)...]).trimmingSpaces
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            if key == "font" || key == "bold_font", ThemeSetting.isFontFamily(value) {
                do throws(AssetError) {
                    value = try FontFinder.find(value, bold: key == "bold_font")
                } catch {
                    problems.append(Problem(path: path, line: lineNumber, message: error.description))
                    continue
                }
            } else if fileKeys.contains(key), !(key == "logo" && value == ThemeSetting.firmwareLogo) {
                let paths = key == "fallback_fonts"
                    ? value.split(separator: ",").map { resolved(String($0).trimmingSpaces, from: path) }
                    : [resolved(value, from: path)]
                if let missing = paths.lazy.compactMap({ unreadable($0, key: key) }).first {
                    problems.append(Problem(path: path, line: lineNumber, message: missing))
                    continue
                }
                value = paths.joined(separator: ", ")
            }
            do {
                try theme.set(key, value)
                applied.append((key, value))
            } catch {
                problems.append(Problem(path: path, line: lineNumber, message: error.description))
            }
        }
        return problems
    }

    /// `file` as named in the theme at `themePath`: a relative one is in the theme's directory.
    package static func resolved(_ file: String, from themePath: String) -> String {
        guard !file.isEmpty, !file.hasPrefix("/"), let slash = themePath.lastIndex(of: "/") else { return file }
        return String(themePath[...slash]) + file
    }

    /// Why the file a theme key names cannot be used (nil: it can, or none is named).
    private static func unreadable(_ file: String, key: String) -> String? {
        guard !file.isEmpty else { return nil }
        do {
            let logo = key == "logo" || key == "logo_fallback"
            _ = try RegularFile(file, maxBytes: logo ? Assets.maxLogoFileBytes : Assets.maxFontFileBytes)
            return nil
        } catch {
            return "\(key == "logo" ? "logo" : key == "logo_fallback" ? "logo_fallback" : "font"): \(error)"
        }
    }

    /// Reads and applies the file at `path`.
    package static func load(_ path: String, into theme: inout Theme) throws(ThemeFileError) -> [Problem] {
        var applied: [(key: String, value: String)] = []
        return try load(path, into: &theme, applied: &applied)
    }

    /// The same, also giving the settings applied, in order.
    package static func load(
        _ path: String, into theme: inout Theme, applied: inout [(key: String, value: String)]
    ) throws(ThemeFileError) -> [Problem] {
        let bytes: [UInt8]
        do {
            bytes = try RegularFile.read(path, maxBytes: 1 << 20)
        } catch {
            throw ThemeFileError(description: "cannot read theme: \(error)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ThemeFileError(description: "theme \(path) is not UTF-8 text")
        }
        return apply(text, to: &theme, path: path, applied: &applied)
    }
}

package struct ThemeFileError: Error, Sendable, CustomStringConvertible {
    package let description: String
}
