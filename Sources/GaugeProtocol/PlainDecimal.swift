import GaugeSystem

/// Decimal numbers as the wire writes them: shortest digits that read back to the same
/// `Double`, never an exponent (`42.5`, `0`, `0.00001`), and the strict reader for them.
package enum PlainDecimal {
    /// `x` in plain decimal notation. Non-finite values have no such form and become `0`;
    /// negative zero becomes `0`.
    package static func format(_ x: Double) -> String {
        guard x.isFinite, x != 0 else { return "0" }
        // `description` is the shortest round-tripping form, possibly with an exponent
        // ("1e-05", "1.2345e+20"); move the point instead.
        var text = Substring(x.magnitude.description)
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            exponent = Int(text[text.index(after: e)...]) ?? 0
            text = text[..<e]
        }
        let integerPart: Substring
        let fractionPart: Substring
        if let dot = text.firstIndex(of: ".") {
            integerPart = text[..<dot]
            fractionPart = text[text.index(after: dot)...]
        } else {
            integerPart = text
            fractionPart = ""
        }
        let digits = Array(integerPart.utf8) + Array(fractionPart.utf8)
        let point = integerPart.utf8.count + exponent  // digits before the decimal point
        var whole: [UInt8]
        var fraction: [UInt8]
        if point <= 0 {
            whole = []
            fraction = [UInt8](repeating: UInt8(ascii: "0"), count: -point) + digits
        } else if point >= digits.count {
            whole = digits + [UInt8](repeating: UInt8(ascii: "0"), count: point - digits.count)
            fraction = []
        } else {
            whole = Array(digits[..<point])
            fraction = Array(digits[point...])
        }
        while whole.first == UInt8(ascii: "0") { whole.removeFirst() }
        while fraction.last == UInt8(ascii: "0") { fraction.removeLast() }
        if whole.isEmpty { whole = [UInt8(ascii: "0")] }
        var out = x < 0 ? [UInt8(ascii: "-")] : []
        out += whole
        if !fraction.isEmpty { out += [UInt8(ascii: ".")] + fraction }
        return String(decoding: out, as: UTF8.self)
    }

    /// Reads `[+-]digits[.digits]` or `[+-].digits`; nothing else (no exponent, hex,
    /// `inf`, `nan`, spaces). Returns nil when `text` is not of that form. A well-formed
    /// number too large for a `Double` reads as an infinity, so callers range-check it.
    package static func parse<S: StringProtocol>(_ text: S) -> Double? {
        var sawDigit = false
        var sawPoint = false
        for (offset, byte) in text.utf8.enumerated() {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                sawDigit = true
            case UInt8(ascii: "."):
                if sawPoint { return nil }
                sawPoint = true
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                if offset != 0 { return nil }
            default:
                return nil
            }
        }
        guard sawDigit else { return nil }
        return parseDouble(text)
    }

    /// A whole number written as plain digits (no sign, point or spaces), at most
    /// `maxDigits` of them (18, which always fit an `Int64`, at most); nil for anything
    /// else. The one reader of digits-only fields (pids, counts, percentages, sizes).
    package static func digits<S: StringProtocol>(_ text: S, maxDigits: Int = 18) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= min(maxDigits, 18) else { return nil }
        var value: Int64 = 0
        for byte in text.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        return value
    }
}
