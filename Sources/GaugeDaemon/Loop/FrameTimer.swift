import CGaugeLinux
import GaugeSystem

/// The frame clock: a `timerfd` on `CLOCK_MONOTONIC` in the event loop, armed only while
/// something animates. `stop()` disarms it, so a still screen causes no wakeups at all.
///
/// The handler gets the number of periods elapsed since the last call (more than 1 when
/// frames were missed); draw one frame for the current time, not one per period.
///
/// The loop holds the timer, and the timer its handler, until `close()`: its owner closes it.
package final class FrameTimer {
    package typealias Handler = (_ expirations: UInt64) -> Void

    private let loop: EventLoop
    private let fd: Int32
    private var handler: Handler
    package private(set) var isRunning = false
    /// Frames per second while running.
    package private(set) var fps: Double = 0
    /// The tick times of `start(period:first:)` (nil for `start(fps:)`): `first` and its
    /// period, to tell whether a later call asks for the same ticks.
    private var aligned: (period: Double, first: Double)?
    private var isClosed = false

    package init(loop: EventLoop, handler: @escaping Handler) throws(SystemError) {
        self.loop = loop
        self.handler = handler
        fd = try Syscall.timerCreate()
        do {
            try loop.register(fd, events: .readable) { [self] _ in expired() }
        } catch {
            Syscall.close(fd)
            throw error
        }
    }

    deinit {
        close()
    }

    /// Arms a periodic timer, the first frame one period from now, or at once with
    /// `immediately` (a change to a still screen is drawn without waiting a period; the
    /// requests read in the same loop turn still coalesce into that frame). Calling it
    /// again with the same rate while running keeps the current phase.
    package func start(fps: Double, immediately: Bool = false) throws(SystemError) {
        guard fps.isFinite, fps > 0, fps <= 1000 else { throw SystemError("frame timer \(fps) fps", errno: EINVAL) }
        guard !isClosed, !(isRunning && self.fps == fps && aligned == nil) else { return }
        let period = Self.timespec(seconds: 1 / fps)
        // An all-zero first expiration would disarm the timer: 1 ns is "now".
        let first = immediately ? CGaugeLinux.timespec(tv_sec: 0, tv_nsec: 1) : period
        try Syscall.timerSet(fd, interval: period, firstExpiration: first)
        self.fps = fps
        aligned = nil
        isRunning = true
    }

    /// Arms a periodic timer ticking at `first`, `first + period`, ... (seconds on
    /// `MonotonicClock`): for a picture that changes at known times, one tick per change.
    /// Calling it again for the same ticks (`first` one or more periods on) keeps them.
    package func start(period: Double, first: Double) throws(SystemError) {
        guard period.isFinite, period >= 0.001, first.isFinite, first > 0 else {
            throw SystemError("frame timer period \(period) s", errno: EINVAL)
        }
        guard !isClosed else { return }
        if isRunning, let aligned, aligned.period == period {
            let periods = (first - aligned.first) / period
            if abs(periods - periods.rounded()) < 1e-6 { return }
        }
        try Syscall.timerSet(fd, interval: Self.timespec(seconds: period), firstExpiration: Self.timespec(seconds: first), absolute: true)
        fps = 1 / period
        aligned = (period, first)
        isRunning = true
    }

    /// Disarms the timer; expirations not yet handled are dropped.
    package func stop() {
        guard isRunning, !isClosed else { return }
        isRunning = false
        try? Syscall.timerSet(fd, interval: CGaugeLinux.timespec(), firstExpiration: CGaugeLinux.timespec())
    }

    package func close() {
        guard !isClosed else { return }
        isClosed = true
        isRunning = false
        loop.unregister(fd)
        Syscall.close(fd)
        handler = { _ in }
    }

    private func expired() {
        var count: UInt64 = 0
        let read = withUnsafeMutableBytes(of: &count) { try? Syscall.read(fd, into: $0) }
        guard read == MemoryLayout<UInt64>.size, isRunning else { return }
        handler(count)
    }

    /// At least 1 ns: all zeros would disarm the timer.
    private static func timespec(seconds: Double) -> CGaugeLinux.timespec {
        let time = CGaugeLinux.timespec(seconds: seconds)
        return time.isZero ? CGaugeLinux.timespec(tv_sec: 0, tv_nsec: 1) : time
    }
}
