/// Whole numbers written as plain digits, as pids, counts, percentages and sizes are
/// in files, environment variables and protocol fields: the one reader of such fields.
package enum DecimalDigits {
    /// The value of `text` when it is only ASCII digits (no sign, point or spaces), at
    /// most `maxDigits` of them (18, which always fit an `Int64`, at most); nil otherwise.
    package static func value<S: StringProtocol>(_ text: S, maxDigits: Int = 18) -> Int64? {
        value(of: text.utf8, maxDigits: maxDigits)
    }

    /// The same for bytes (a file's contents).
    package static func value<C: Collection<UInt8>>(of bytes: C, maxDigits: Int = 18) -> Int64? {
        guard !bytes.isEmpty, bytes.count <= min(maxDigits, 18) else { return nil }
        var value: Int64 = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        return value
    }
}
