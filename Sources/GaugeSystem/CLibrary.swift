import CGaugeLinux

/// The calling thread's `errno`: the C library's is a macro, which Swift cannot import.
package var errno: Int32 {
    get { CGL_errno() }
    set { CGL_set_errno(newValue) }
}

/// Zeroes `bytes` so that no optimisation drops it (`CGL_wipe`): for what was typed
/// at a question, before its memory is reused or freed.
package func wipe(_ bytes: UnsafeMutableRawBufferPointer) {
    guard let base = bytes.baseAddress else { return }
    CGL_wipe(base, bytes.count)
}

/// Zeroes an array's storage (`wipe`), keeping its count.
package func wipe(_ array: inout [UInt8]) {
    array.withUnsafeMutableBytes { wipe($0) }
}

/// `Double(text)` for the decimal forms Gauge reads, as the C library converts them
/// (correctly rounded; an overflow is an infinity): the embedded standard library has no
/// parser of its own. Nil when `text` is not entirely a number.
package func parseDouble<S: StringProtocol>(_ text: S) -> Double? {
    var value = 0.0
    let parsed = String(text).withCString { CGL_parse_double($0, &value) }
    return parsed == 1 ? value : nil
}

extension StringProtocol {
    /// Whether `text` occurs in this string, byte for byte in UTF-8 (`contains(_:)` on a
    /// string needs the string-processing library, which the embedded build lacks).
    package func containsText(_ text: some StringProtocol) -> Bool {
        let needle = Array(text.utf8)
        guard !needle.isEmpty else { return true }
        let haystack = Array(utf8)
        guard haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<start + needle.count]) == needle { return true }
        }
        return false
    }
}

extension stat {
    /// Whether the file type bits of `st_mode` are `type`, one of the `S_IF*` constants
    /// (which Swift imports as `Int32`, `st_mode` being a `mode_t`).
    package func isType(_ type: Int32) -> Bool {
        st_mode & mode_t(S_IFMT) == mode_t(type)
    }
}
