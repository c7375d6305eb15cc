import CGaugeLinux

/// Seconds on `CLOCK_MONOTONIC`: the time base of frames and animations (never jumps
/// with the wall clock, which at early boot may not even be set yet).
package enum MonotonicClock {
    package static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1_000_000_000
    }
}
