import GaugeSystem
#if canImport(Glibc)
    import Glibc
#endif

/// The psplash FIFO (default `/run/psplash_fifo`), ready for an epoll loop.
///
/// Watch `fd` for `EPOLLIN`; when it is readable call `readAvailable()` and feed the
/// bytes to `PsplashCommands`.
///
/// psplash keeps its FIFO readable when the last writer closes by reopening it on EOF.
/// This type instead holds a write descriptor of its own for as long as it is open, so
/// the read side never sees EOF: no `EPOLLHUP` storm in a level-triggered loop, and no
/// window between close and reopen in which `psplash-write` (which opens with
/// `O_NONBLOCK`) would fail with `ENXIO` and drop its command.
package final class PsplashFIFO {
    package static let defaultPath = "/run/psplash_fifo"

    package let path: String
    /// The read end: non-blocking, close-on-exec.
    package let fd: Int32
    private let keepAliveWriter: Int32
    private let created: Bool
    private var isOpen = true

    /// Makes the FIFO at `path` (mode `mode`, 0620 by default: the owner reads and
    /// writes, the group writes) unless a FIFO is already there, and opens it. A
    /// non-FIFO at `path` is an error (`EEXIST`), never replaced.
    package init(path: String = PsplashFIFO.defaultPath, mode: mode_t = 0o620) throws(CompatSystemError) {
        self.path = path
        var created = false
        if mkfifo(path, mode) == 0 {
            created = true
            // mkfifo applies the umask; the mode asked for is the mode meant.
            if chmod(path, mode) != 0 {
                let error = CompatSystemError.last("chmod \(path)")
                unlink(path)
                throw error
            }
        } else if errno != EEXIST {
            throw CompatSystemError.last("mkfifo \(path)")
        }
        var info = stat()
        guard lstat(path, &info) == 0 else { throw CompatSystemError.last("stat \(path)") }
        guard info.st_mode & S_IFMT == S_IFIFO else {
            throw CompatSystemError("\(path) exists and is not a FIFO", errno: EEXIST)
        }
        let reader = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard reader >= 0 else {
            let error = CompatSystemError.last("open \(path)")
            if created { unlink(path) }
            throw error
        }
        // With a reader open, a non-blocking open for writing succeeds at once.
        let writer = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        guard writer >= 0 else {
            let error = CompatSystemError.last("open \(path) for writing")
            Glibc.close(reader)
            if created { unlink(path) }
            throw error
        }
        self.fd = reader
        self.keepAliveWriter = writer
        self.created = created
    }

    deinit { close() }

    /// Everything the writers have put into the FIFO so far; empty when nothing is
    /// waiting. Never blocks, never reports EOF (see the type's note).
    package func readAvailable() throws(CompatSystemError) -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                result += chunk[..<count]
                if count < chunk.count { return result }
                continue
            }
            if count == 0 { return result }
            switch errno {
            case EINTR: continue
            case EAGAIN: return result
            default: throw CompatSystemError.last("read \(path)")
            }
        }
    }

    /// Closes both descriptors; removes the FIFO if this object made it.
    package func close() {
        guard isOpen else { return }
        isOpen = false
        Glibc.close(fd)
        Glibc.close(keepAliveWriter)
        if created { unlink(path) }
    }
}
