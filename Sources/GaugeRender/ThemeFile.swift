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
/// `base = NAME` builds the file on a shipped theme (`ThemeBase`).
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
    package static func apply(_ text: String, to theme: inout Theme, path: String = "<theme>", themes: String? = nil) -> [Problem] {
        var applied: [(key: String, value: String)] = []
        return apply(text, to: &theme, path: path, applied: &applied, themes: themes)
    }

    /// The same, also giving the settings applied, in order (paths as resolved). A
    /// `base = NAME` line applies the theme `NAME.theme` in `themes` first, wherever the
    /// line stands, so every other line of `text` applies over it (`ThemeBase`); with
    /// `themes` nil a base is a problem.
    package static func apply(
        _ text: String, to theme: inout Theme, path: String, applied: inout [(key: String, value: String)],
        themes: String? = nil
    ) -> [Problem] {
        var problems: [Problem] = []
        if let base = ThemeBase.named(in: text) {
            problems += applyBase(base, to: &theme, path: path, applied: &applied, themes: themes)
        }
        return problems + applyLines(text, to: &theme, path: path, applied: &applied, isBase: false)
    }

    /// The base theme `base` names, applied; a missing or unreadable one is a problem of
    /// the `base` line, the base's own problems are its file's.
    private static func applyBase(
        _ base: (name: String, line: Int), to theme: inout Theme, path: String,
        applied: inout [(key: String, value: String)], themes: String?
    ) -> [Problem] {
        func problem(_ message: String) -> [Problem] { [Problem(path: path, line: base.line, message: "base: " + message)] }
        guard let themes else { return problem("a base theme is named only in a theme file") }
        guard ThemeBase.isName(base.name) else {
            return problem("'\(base.name)' is not a theme's name (letters, digits, _ and - only)")
        }
        let basePath = ThemeBase.path(of: base.name, in: themes)
        if case .success(nil) = Result(catching: { () throws(SystemError) in try Syscall.fileStatus(basePath) }) {
            return problem("no theme '\(base.name)' in \(themes) (gaugectl theme --list)")
        }
        let text: String
        do {
            let bytes = try RegularFile.read(basePath, maxBytes: 1 << 20)
            guard let decoded = String(validating: bytes, as: UTF8.self) else { return problem("\(basePath) is not UTF-8 text") }
            text = decoded
        } catch {
            return problem("\(error)")
        }
        return applyLines(text, to: &theme, path: basePath, applied: &applied, isBase: true)
    }

    /// Every `key = value` line of `text` but `base` (which a base theme may not name).
    private static func applyLines(
        _ text: String, to theme: inout Theme, path: String, applied: inout [(key: String, value: String)], isBase: Bool
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
            if key == ThemeBase.key {
                if isBase { problems.append(Problem(path: path, line: lineNumber, message: "base: a base theme is built on none")) }
                continue
            }
            switch resolvedValue(key: key, value: value, path: path) {
            case .failure(let message):
                problems.append(Problem(path: path, line: lineNumber, message: message.description))
                continue
            case .success(let resolved):
                value = resolved
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

    /// `value` with the files it names resolved (a font family found, relative paths from
    /// the theme's directory), or why one cannot be used.
    private static func resolvedValue(key: String, value: String, path: String) -> Result<String, ThemeFileError> {
        if key == "font" || key == "bold_font", ThemeSetting.isFontFamily(value) {
            do throws(AssetError) {
                return .success(try FontFinder.find(value, bold: key == "bold_font"))
            } catch {
                return .failure(ThemeFileError(description: error.description))
            }
        }
        guard fileKeys.contains(key), !(key == "logo" && value == ThemeSetting.firmwareLogo) else { return .success(value) }
        let paths = key == "fallback_fonts"
            ? value.split(separator: ",").map { resolved(String($0).trimmingSpaces, from: path) }
            : [resolved(value, from: path)]
        if let missing = paths.lazy.compactMap({ unreadable($0, key: key) }).first {
            return .failure(ThemeFileError(description: missing))
        }
        return .success(paths.joined(separator: ", "))
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

    /// Reads and applies the file at `path` (its base from `themes`).
    package static func load(_ path: String, into theme: inout Theme, themes: String? = ThemeBase.directory) throws(ThemeFileError) -> [Problem] {
        var applied: [(key: String, value: String)] = []
        return try load(path, into: &theme, applied: &applied, themes: themes)
    }

    /// The same, also giving the settings applied, in order.
    package static func load(
        _ path: String, into theme: inout Theme, applied: inout [(key: String, value: String)],
        themes: String? = ThemeBase.directory
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
        return apply(text, to: &theme, path: path, applied: &applied, themes: themes)
    }
}

package struct ThemeFileError: Error, Sendable, CustomStringConvertible {
    package let description: String
}
