import CGaugeLinux
import GaugeSystem

/// A theme file: `key = value` lines, `[section]` headers, `#` or `;` comments.
///
/// A key inside a section may be written plainly or as `section.key`; sections only group.
/// Unknown keys and bad values are reported with file and line and skipped, so the
/// defaults (or earlier values) stand.
public enum ThemeFile {
    public struct Problem: Equatable, Sendable, CustomStringConvertible {
        public var path: String
        public var line: Int
        public var message: String
        public var description: String { "\(path):\(line): \(message)" }
    }

    /// Applies the settings in `text` to `theme`; returns what was wrong.
    public static func apply(_ text: String, to theme: inout Theme, path: String = "<theme>") -> [Problem] {
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
            do {
                try theme.set(key, value)
            } catch {
                problems.append(Problem(path: path, line: lineNumber, message: error.description))
            }
        }
        return problems
    }

    /// Reads and applies the file at `path`.
    public static func load(_ path: String, into theme: inout Theme) throws(ThemeFileError) -> [Problem] {
        let bytes: [UInt8]
        do {
            bytes = try RegularFile.read(path, maxBytes: 1 << 20)
        } catch {
            throw ThemeFileError(description: "cannot read theme: \(error)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ThemeFileError(description: "theme \(path) is not UTF-8 text")
        }
        return apply(text, to: &theme, path: path)
    }
}

public struct ThemeFileError: Error, Sendable, CustomStringConvertible {
    public let description: String
}
