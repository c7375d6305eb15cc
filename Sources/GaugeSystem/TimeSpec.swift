import CGaugeLinux

extension timespec {
    /// `seconds` (a delay, or a time on a clock) as a `timespec`, to the nearest
    /// nanosecond: the whole seconds and the nanoseconds worked out apart, so nothing
    /// overflows where `Int` is 32 bits (seconds × 10⁹ does from 2.15 s on). Clamped to
    /// 0 ... 2³¹ − 1 s, which `time_t` holds on every target (a NaN is 0).
    package init(seconds: Double) {
        let clamped = seconds.isNaN ? 0 : min(max(seconds, 0), Double(Int32.max))
        var whole = clamped.rounded(.down)
        var nanoseconds = ((clamped - whole) * 1_000_000_000).rounded()
        if nanoseconds >= 1_000_000_000 {
            whole += 1
            nanoseconds = 0
        }
        self.init(tv_sec: time_t(whole), tv_nsec: Int(nanoseconds))
    }

    /// Whether this is all zeros, which disarms a timer rather than arming it for now.
    package var isZero: Bool { tv_sec == 0 && tv_nsec == 0 }
}

#if _pointerBitWidth(_32)
/// Compiles only where C's `time_t` and `off_t` are 64 bits on a 32-bit target
/// (`-Xcc -D_TIME_BITS=64 -Xcc -D_FILE_OFFSET_BITS=64`, as tools/build-release builds
/// armv7): the C shim asserts the same for its side, and both sides must agree.
private func requireWideTimesAndOffsets(_ time: time_t, _ offset: off_t) -> (Int64, Int64) { (time, offset) }
#endif
