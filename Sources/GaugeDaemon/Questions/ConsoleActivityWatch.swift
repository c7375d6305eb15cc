import CGaugeLinux
import GaugeSystem

/// Tells when somebody may have started asking on the console, so that `ConsoleReaders`
/// looks at the processes only then instead of four times a second for as long as the
/// splash is up.
///
/// A program that asks on the console opens it (askpass, systemd's agents, sulogin and a
/// shell started on it open `/dev/console` or the VT) or writes its prompt to it (a shell's
/// `PS1`, `read -p`): the kernel reports both on the device node through inotify
/// (`IN_OPEN`, `IN_MODIFY`), whoever does it. Non-blocking, one descriptor for the event
/// loop; nothing arrives while nobody touches the console, so a still splash makes no
/// wakeups for it. What it cannot see: a program that opened the console long before and
/// later waits on it without writing anything; the look at start-up (`Daemon`) finds the
/// ones already waiting then.
final class ConsoleActivityWatch {
    /// Readable when a console node was opened or written: call `drain()`.
    let fd: Int32
    /// The nodes watched (those of `paths` that could be).
    private(set) var watched: [String] = []
    private var buffer = [UInt8](repeating: 0, count: 4096)

    static let mask = CGL_IN_OPEN | CGL_IN_MODIFY

    /// Watches each of `paths` that exists; throws only when inotify itself is refused.
    init(paths: [String], log: Log) throws(SystemError) {
        fd = try Syscall.inotifyInit()
        for path in paths {
            do throws(SystemError) {
                _ = try Syscall.inotifyAddWatch(fd, path, mask: Self.mask)
                watched.append(path)
            } catch {
                if error.errno != ENOENT { log.info("console questions: cannot watch \(path): \(error)") }
            }
        }
    }

    deinit { Syscall.close(fd) }

    /// Reads every pending event without blocking; true when there was any.
    func drain() -> Bool {
        var any = false
        while let count = buffer.withUnsafeMutableBytes({ raw in try? Syscall.read(fd, into: raw) }), count > 0 {
            any = true
        }
        return any
    }
}
