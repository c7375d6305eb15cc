import CGaugeLinux
import GaugeDisplay
import GaugeSystem

/// `--replace` (the shutdown screens): a daemon still answering on the socket (a boot
/// screen the initramfs started, one whose boot went to an offline update, a boot cut
/// short) is asked to `quit retain` and waited for, while this process holds every DRM
/// card open. With a descriptor of the card still open the kernel sees no "last close"
/// when that daemon's goes, so it does not put its console back on the screen: the old
/// daemon's frame stays until this one's first frame replaces it, and no text shows
/// between the two (as it did while a unit quit the old daemon before the new one started).
///
/// Runs before anything of the daemon is set up, and waits (at most `timeout` seconds)
/// only where a daemon answers; where none does it costs one `connect`. The cards stay
/// open while the value lives.
final class DaemonReplacement {
    private var cards: [Int32] = []

    /// Replaces the daemon on `socketPath`, if one answers there; `log` says what happened.
    init(socketPath: String, cardDirectory: String = "/dev/dri", timeout: Double = 3, log: Log) {
        guard let address = try? UnixSocketAddress(socketPath),
            let connection = try? Syscall.socket(domain: CGL_AF_UNIX, type: CGL_SOCK_STREAM | CGL_SOCK_NONBLOCK)
        else { return }
        defer { Syscall.close(connection) }
        do throws(SystemError) {
            // A full backlog (false) is a daemon too busy to take the request: left alone.
            guard try Syscall.connect(connection, to: address) else {
                log.info("--replace: the daemon on \(socketPath) takes no connection now: not replaced")
                return
            }
        } catch {
            // Nobody there (no file, or a stale one): the usual case.
            return
        }
        let started = MonotonicClock.now()
        cards = drmCardPaths(directory: cardDirectory).compactMap {
            try? Syscall.open($0, flags: O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        }
        let deadline = started + timeout
        guard Self.send("quit retain\n", on: connection, until: deadline), Self.waitForEnd(of: connection, until: deadline) else {
            log.info("--replace: the daemon on \(socketPath) did not go within \(Int(timeout)) s")
            return
        }
        // Its listening socket and lock go as its process ends, a moment after the
        // connection: the bind that follows must find them gone.
        if !address.isAbstract { Self.waitForLock(ListeningSocket.lockPath(for: socketPath), until: deadline) }
        let took = Int((MonotonicClock.now() - started) * 1000)
        log.info("replaced the daemon on \(socketPath) (it left its frame; \(took) ms; \(cards.count) cards held meanwhile)")
    }

    deinit {
        for fd in cards { Syscall.close(fd) }
    }

    private static func milliseconds(until deadline: Double) -> Int32 {
        Int32(max(0, min(10_000, (deadline - MonotonicClock.now()) * 1000)))
    }

    private static func send(_ text: String, on fd: Int32, until deadline: Double) -> Bool {
        let ready = (try? Syscall.poll(fd, events: Int16(POLLOUT), timeoutMilliseconds: milliseconds(until: deadline))) ?? 0
        guard ready & Int16(POLLOUT) != 0 else { return false }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { (try? Syscall.write(fd, $0)) ?? nil }
        return written == bytes.count
    }

    /// Reads (the reply) until the daemon closes the connection as it exits.
    private static func waitForEnd(of fd: Int32, until deadline: Double) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 256)
        while true {
            // 0: the time is up, or a signal came (poll says nothing more then).
            guard (try? Syscall.poll(fd, events: Int16(POLLIN), timeoutMilliseconds: milliseconds(until: deadline))) ?? 0 != 0
            else {
                if MonotonicClock.now() >= deadline { return false }
                continue
            }
            // An error (ECONNRESET) is its end too; nil: nothing to read yet.
            let count = buffer.withUnsafeMutableBytes { buffer in Result { () throws(SystemError) in try Syscall.read(fd, into: buffer) } }
            switch count {
            case .success(0), .failure: return true
            case .success: continue
            }
        }
    }

    /// Takes and drops the lock the old daemon held while it listened.
    private static func waitForLock(_ path: String, until deadline: Double) {
        guard let fd = try? Syscall.open(path, flags: O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) else { return }
        defer { Syscall.close(fd) }
        while (try? Syscall.lockExclusive(fd, path)) == false, MonotonicClock.now() < deadline {
            _ = try? Syscall.poll(-1, events: 0, timeoutMilliseconds: 5)
        }
    }
}
