import Glibc

/// Bytes on their way to a terminal, written without ever blocking the caller.
///
/// The descriptor is made non-blocking without disturbing anyone else who shares it:
/// a terminal is opened again through `/proc/self/fd` (a private open file description
/// with `O_NONBLOCK`), a pipe or socket gets `O_NONBLOCK` set and its old flags back in
/// `finish`, and a regular file is written as it is (writes to files do not wait on a
/// reader). Whatever the descriptor does not take now stays in `pending` for the next
/// `flush`; the owner decides how much it queues.
final class TerminalOutput {
    /// The descriptor written to (the private reopen, when there is one).
    let fd: Int32
    private let callerFD: Int32
    private let ownsFD: Bool
    /// The caller's flags from before `O_NONBLOCK` was set, to put back.
    private let savedFlags: Int32?
    private var pending: [UInt8] = []
    private var written = 0
    /// Set once a write fails for good (terminal hung up, pipe reader gone).
    private(set) var failure: DisplayError?

    init(fd callerFD: Int32) throws(DisplayError) {
        var st = stat()
        guard fstat(callerFD, &st) == 0 else {
            throw DisplayError("terminal: output fd \(callerFD): \(Self.errnoText())")
        }
        self.callerFD = callerFD
        let type = st.st_mode & S_IFMT
        if type == S_IFREG {
            (fd, ownsFD, savedFlags) = (callerFD, false, nil)
            return
        }
        if type == S_IFCHR && isatty(callerFD) == 1 {
            let reopened = open("/proc/self/fd/\(callerFD)", O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)
            if reopened >= 0 {
                (fd, ownsFD, savedFlags) = (reopened, true, nil)
                return
            }
        }
        // No /proc (an early initramfs) or not a terminal: flip the shared flag, and flip it back later.
        let flags = fcntl(callerFD, F_GETFL)
        guard flags >= 0 else {
            throw DisplayError("terminal: output fd \(callerFD): \(Self.errnoText())")
        }
        if flags & O_NONBLOCK == 0 {
            guard fcntl(callerFD, F_SETFL, flags | O_NONBLOCK) == 0 else {
                throw DisplayError("terminal: cannot make output fd \(callerFD) non-blocking: \(Self.errnoText())")
            }
            savedFlags = flags
        } else {
            savedFlags = nil
        }
        (fd, ownsFD) = (callerFD, false)
    }

    /// True when everything queued has been written.
    var isIdle: Bool { written == pending.count }

    var pendingCount: Int { pending.count - written }

    func append(_ bytes: [UInt8]) {
        compact()
        pending.append(contentsOf: bytes)
    }

    /// Drops what has not been written yet and queues `bytes` instead. `bytes` must start
    /// with ESC, which ends any escape sequence the dropped text left half written.
    func replacePending(with bytes: [UInt8]) {
        pending.removeAll(keepingCapacity: true)
        written = 0
        pending.append(contentsOf: bytes)
    }

    /// Writes as much as the descriptor takes without waiting. Throws once, on the write
    /// that finds the output gone; after that everything queued is discarded.
    func flush() throws(DisplayError) {
        guard failure == nil else {
            replacePending(with: [])
            return
        }
        while written < pending.count {
            let n = pending.withUnsafeBytes { buf in
                write(fd, buf.baseAddress! + written, buf.count - written)
            }
            if n > 0 {
                written += n
                continue
            }
            if n == 0 { break }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { break }
            let error = DisplayError("terminal: write failed: \(Self.errnoText(code))")
            failure = error
            replacePending(with: [])
            throw error
        }
        compact()
    }

    /// Drops what is queued, writes `bytes` waiting at most `timeoutMilliseconds` for the
    /// terminal to take them, and gives the descriptor back as it was found.
    func finish(with bytes: [UInt8], timeoutMilliseconds: Int) {
        replacePending(with: bytes)
        if failure == nil {
            let deadline = Self.monotonicMilliseconds() + timeoutMilliseconds
            while !isIdle {
                do { try flush() } catch { break }
                if isIdle { break }
                let left = deadline - Self.monotonicMilliseconds()
                if left <= 0 { break }
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&p, 1, Int32(left))
            }
        }
        replacePending(with: [])
        if ownsFD {
            Glibc.close(fd)
        } else if let savedFlags {
            _ = fcntl(callerFD, F_SETFL, savedFlags)
        }
    }

    private func compact() {
        if written == pending.count {
            pending.removeAll(keepingCapacity: true)
            written = 0
        } else if written > 65536 {
            pending.removeFirst(written)
            written = 0
        }
    }

    static func errnoText(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }

    private static func monotonicMilliseconds() -> Int {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return ts.tv_sec * 1000 + ts.tv_nsec / 1_000_000
    }
}
