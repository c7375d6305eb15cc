import CGaugeLinux

/// `CLOCK_MONOTONIC`: the one time base of frames, animations, timeouts and measurements
/// (never jumps with the wall clock, which at early boot may not even be set yet).
package enum MonotonicClock {
    /// Seconds.
    package static func now() -> Double {
        let time = reading()
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1_000_000_000
    }

    /// Nanoseconds, whole: for deadlines compared exactly.
    package static func nanoseconds() -> UInt64 {
        let time = reading()
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Milliseconds, 64 bits: in a 32-bit `Int` the milliseconds since boot overflow
    /// after 24.8 days.
    package static func milliseconds() -> Int64 {
        let time = reading()
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    private static func reading() -> timespec {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return time
    }
}
