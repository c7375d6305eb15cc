import CGaugeLinux

/// The calling thread's `errno`: the C library's is a macro, which Swift cannot import.
package var errno: Int32 {
    get { CGL_errno() }
    set { CGL_set_errno(newValue) }
}

/// `Double(text)` for the decimal forms Gauge reads, as the C library converts them
/// (correctly rounded; an overflow is an infinity): the embedded standard library has no
/// parser of its own. Nil when `text` is not entirely a number.
package func parseDouble<S: StringProtocol>(_ text: S) -> Double? {
    var value = 0.0
    let parsed = String(text).withCString { CGL_parse_double($0, &value) }
    return parsed == 1 ? value : nil
}

extension stat {
    /// Whether the file type bits of `st_mode` are `type`, one of the `S_IF*` constants
    /// (which Swift imports as `Int32`, `st_mode` being a `mode_t`).
    package func isType(_ type: Int32) -> Bool {
        st_mode & mode_t(S_IFMT) == mode_t(type)
    }
}
