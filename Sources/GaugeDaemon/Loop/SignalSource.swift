import CGaugeLinux
import GaugeSystem

/// Signals delivered through the event loop: the signals are blocked and read from a
/// `signalfd`, so a handler runs on the loop's thread like any other event, never inside
/// an asynchronous signal handler.
///
/// Create it before any other thread starts (the mask is per thread; threads created later
/// inherit it). `close()` restores the mask that was in force before. Creating one also
/// ignores SIGPIPE process-wide: a client that vanishes must cost an EPIPE, not the daemon.
/// The loop holds the source, and the source its handler, until `close()`.
package final class SignalSource {
    package typealias Handler = (_ signal: Int32) -> Void

    /// What the daemon handles by default: stop on SIGTERM and SIGINT, reload on SIGHUP.
    package static let defaultSignals: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    private let loop: EventLoop
    private var handler: Handler
    private var fd: Int32 = -1
    private var mask = sigset_t()
    private var previousMask: sigset_t?

    /// `restoring`: the mask before `block` blocked the signals ahead of this source, the
    /// one `close()` then restores.
    package init(
        loop: EventLoop, signals: [Int32] = SignalSource.defaultSignals, restoring previous: sigset_t? = nil,
        handler: @escaping Handler
    ) throws(SystemError) {
        self.loop = loop
        self.handler = handler
        previousMask = previous
        Self.ignoreBrokenPipe()
        sigemptyset(&mask)
        try add(signals)
        do {
            try loop.register(fd, events: .readable) { [self] _ in readSignals() }
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    /// Adds signals to those delivered (for example SIGUSR1/SIGUSR2 for VT switching).
    package func add(_ signals: [Int32]) throws(SystemError) {
        for signal in signals { sigaddset(&mask, signal) }
        let previous = try Syscall.signalMask(SIG_BLOCK, mask)
        if previousMask == nil { previousMask = previous }
        fd = try Syscall.signalDescriptor(fd, mask: mask)
    }

    /// Stops delivering: drops signals still queued and restores the previous mask.
    package func close() {
        guard fd >= 0 else { return }
        loop.unregister(fd)
        var info = signalfd_siginfo()
        while let count = withUnsafeMutableBytes(of: &info, { try? Syscall.read(fd, into: $0) }), count > 0 {}
        Syscall.close(fd)
        fd = -1
        if let previousMask { _ = try? Syscall.signalMask(SIG_SETMASK, previousMask) }
        previousMask = nil
        handler = { _ in }
    }

    /// Blocks `signals` ahead of their source (they stay pending until it reads them), and
    /// returns the mask in force before, for the source to restore (`init(restoring:)`).
    package static func block(_ signals: [Int32]) -> sigset_t? {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        return try? Syscall.signalMask(SIG_BLOCK, set)
    }

    /// A write to a closed socket must fail with EPIPE, not kill the daemon.
    package static func ignoreBrokenPipe() {
        Syscall.ignoreSignal(SIGPIPE)
    }

    /// Signals the daemon has no use for and whose default action is to end it: a stray
    /// one is ignored (SIGXFSZ then makes a write past the file size limit fail with
    /// EFBIG instead). SIGUSR1 and SIGUSR2 go through the loop instead (VT switching).
    static func ignoreStraySignals() {
        for stray in [SIGALRM, SIGVTALRM, SIGPROF, SIGIO, SIGXFSZ, SIGPWR, SIGSTKFLT] {
            Syscall.ignoreSignal(stray)
        }
    }

    private func readSignals() {
        // Bounded: a flood of signals cannot keep the loop here.
        for _ in 0..<16 {
            var info = signalfd_siginfo()
            let count = withUnsafeMutableBytes(of: &info) { try? Syscall.read(fd, into: $0) }
            guard count == MemoryLayout<signalfd_siginfo>.size else { return }
            handler(Int32(bitPattern: info.ssi_signo))
            guard fd >= 0 else { return }
        }
    }
}
