import CGaugeLinux
import GaugeSystem

/// The psplash FIFO (default `/run/psplash_fifo`), ready for an epoll loop.
///
/// Watch `fd` for `EPOLLIN`; the daemon serves it with a `Connection` of
/// `PsplashCommands`, like any other input.
///
/// psplash keeps its FIFO readable when the last writer closes by reopening it on EOF.
/// This type instead holds a write descriptor of its own for as long as it is open, so
/// the read side never sees EOF: no `EPOLLHUP` storm in a level-triggered loop, and no
/// window between close and reopen in which `psplash-write` (which opens with
/// `O_NONBLOCK`) would fail with `ENXIO` and drop its command.
package final class PsplashFIFO {
    static let defaultPath = "/run/psplash_fifo"

    package let path: String
    /// The read end: non-blocking, close-on-exec.
    package let fd: Int32
    private let keepAliveWriter: Int32
    private let created: Bool
    private var isOpen = true

    /// Makes the FIFO at `path` (mode `mode`, 0620 by default: the owner reads and
    /// writes, the group writes) unless a FIFO is already there, and opens it. A
    /// non-FIFO at `path` is an error (`EEXIST`), never replaced.
    package init(path: String = PsplashFIFO.defaultPath, mode: mode_t = 0o620) throws(SystemError) {
        self.path = path
        var created = false
        do throws(SystemError) {
            try Syscall.mkfifo(path, mode: mode)
            created = true
            // mkfifo applies the umask; the mode asked for is the mode meant.
            try Syscall.chmod(path, mode: mode)
        } catch where error.errno == EEXIST && !created {
        } catch {
            if created { try? Syscall.unlink(path) }
            throw error
        }
        do throws(SystemError) {
            guard let info = try Syscall.lstat(path) else { throw SystemError("stat \(path)", errno: ENOENT) }
            guard info.isType(S_IFIFO) else {
                throw SystemError("\(path) exists and is not a FIFO", errno: EEXIST)
            }
            let reader = try Syscall.open(path, flags: O_RDONLY | O_NONBLOCK)
            do throws(SystemError) {
                // With a reader open, a non-blocking open for writing succeeds at once.
                keepAliveWriter = try Syscall.open(path, flags: O_WRONLY | O_NONBLOCK)
            } catch {
                Syscall.close(reader)
                throw error
            }
            fd = reader
        } catch {
            if created { try? Syscall.unlink(path) }
            throw error
        }
        self.created = created
    }

    deinit { close() }

    /// What the writers have put into the FIFO so far, up to `limit` bytes; empty when
    /// nothing is waiting. Never blocks, never reports EOF (see the type's note).
    package func readAvailable(limit: Int = 64 * 1024) throws(SystemError) -> [UInt8] {
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while result.count < limit {
            let room = limit - result.count
            let outcome = chunk.withUnsafeMutableBytes { raw in
                Result { () throws(SystemError) in
                    try Syscall.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: raw.prefix(room)))
                }
            }
            guard let count = try outcome.get(), count > 0 else { return result }
            result += chunk[..<count]
        }
        return result
    }

    /// Closes both descriptors; removes the FIFO if this object made it.
    package func close() {
        guard isOpen else { return }
        isOpen = false
        Syscall.close(fd)
        Syscall.close(keepAliveWriter)
        if created { try? Syscall.unlink(path) }
    }
}
