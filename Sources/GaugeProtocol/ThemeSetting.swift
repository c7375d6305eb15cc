/// One `key=value` of a `theme` request.
///
/// On the wire a value is either bare (no spaces, no `"`) or double-quoted; inside quotes
/// `\"` stands for `"` and `\\` for `\` (any other backslash is kept as it is).
package struct ThemeSetting: Equatable, Sendable {
    package var key: String
    package var value: String

    package init(key: String, value: String) {
        self.key = key
        self.value = value
    }

    /// Whether `key` is a possible theme key: letters, digits, `_`, `-`, `.`.
    package static func isValidKey<S: StringProtocol>(_ key: S) -> Bool {
        !key.isEmpty && key.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"),
                UInt8(ascii: "."):
                return true
            default:
                return false
            }
        }
    }

    /// `key=value`, quoting the value when it needs it.
    package var encoded: String {
        let needsQuotes = value.utf8.contains { byte in
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
        }
        guard needsQuotes else { return key + "=" + value }
        var quoted = "\""
        for scalar in value.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { quoted.unicodeScalars.append("\\") }
            quoted.unicodeScalars.append(scalar)
        }
        quoted += "\""
        return key + "=" + quoted
    }

    /// Reads the settings of a `theme` line: the bytes after the command word.
    /// The keys whose values name files (`fallback_fonts`: several, comma-separated;
    /// `logo` may say `firmware` instead, `firmwareLogo`).
    package static let fileKeys: Set<String> = ["logo", "logo_fallback", "font", "bold_font", "fallback_fonts"]
    /// Whether a `font` or `bold_font` value names a font family (`DejaVu Sans`,
    /// `DejaVu Sans:Bold`) rather than a file: no `/`, and not a font file's name.
    package static func isFontFamily(_ value: String) -> Bool {
        !value.isEmpty && !value.contains("/") && !isFontFileName(value)
    }

    /// Whether `name` is a scalable font file's (TrueType, OpenType, their collections, Type 1).
    package static func isFontFileName(_ name: String) -> Bool {
        let lower = name.asciiLowercased
        return [".ttf", ".otf", ".ttc", ".otc", ".pfb", ".pfa"].contains { lower.hasSuffix($0) }
    }

    /// The `logo` that is no file: the firmware's own logo (ACPI's BGRT), read at run time.
    package static let firmwareLogo = "firmware"

    static func parseList(_ bytes: ArraySlice<UInt8>) -> Result<[ThemeSetting], ProtocolError> {
        let space = UInt8(ascii: " ")
        let quote = UInt8(ascii: "\"")
        let backslash = UInt8(ascii: "\\")
        var settings: [ThemeSetting] = []
        var i = bytes.startIndex
        while true {
            while i < bytes.endIndex, bytes[i] == space { i += 1 }
            if i == bytes.endIndex { break }
            let keyStart = i
            while i < bytes.endIndex, bytes[i] != UInt8(ascii: "="), bytes[i] != space { i += 1 }
            let key = String(decoding: bytes[keyStart..<i], as: UTF8.self)
            guard i < bytes.endIndex, bytes[i] == UInt8(ascii: "=") else {
                return .failure(ProtocolError(.syntax, "theme expects key=value, got '\(Abbreviated(key))'"))
            }
            guard isValidKey(key) else {
                return .failure(ProtocolError(.syntax, "bad theme key '\(Abbreviated(key))'"))
            }
            i += 1
            var value: [UInt8] = []
            if i < bytes.endIndex, bytes[i] == quote {
                i += 1
                var closed = false
                while i < bytes.endIndex {
                    let byte = bytes[i]
                    i += 1
                    if byte == quote { closed = true; break }
                    if byte == backslash, i < bytes.endIndex, bytes[i] == quote || bytes[i] == backslash {
                        value.append(bytes[i])
                        i += 1
                    } else {
                        value.append(byte)
                    }
                }
                guard closed else {
                    return .failure(ProtocolError(.syntax, "unterminated quote in theme value for '\(Abbreviated(key))'"))
                }
                guard i == bytes.endIndex || bytes[i] == space else {
                    return .failure(ProtocolError(.syntax, "theme value for '\(Abbreviated(key))' continues after its closing quote"))
                }
            } else {
                while i < bytes.endIndex, bytes[i] != space {
                    if bytes[i] == quote {
                        return .failure(ProtocolError(.syntax, "stray '\"' in theme value for '\(Abbreviated(key))'"))
                    }
                    value.append(bytes[i])
                    i += 1
                }
            }
            settings.append(ThemeSetting(key: key, value: String(decoding: value, as: UTF8.self)))
        }
        // None: `theme` alone asks for the theme in use.
        return .success(settings)
    }
}

extension String {
    /// The string with its ASCII letters in lower case: how font and file names are
    /// compared (Embedded Swift has no Unicode case tables).
    package var asciiLowercased: String {
        String(decoding: utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
    }
}
