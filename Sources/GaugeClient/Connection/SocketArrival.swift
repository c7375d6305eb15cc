import CGaugeLinux
import GaugeSystem

/// Wakes a client waiting for a daemon that is starting the moment its socket file is
/// made: an inotify watch on the socket's folder for an entry created or moved in, so the
/// first connect after `gauged ... &` comes as the daemon binds, and the wait before it
/// costs no wakeups. Without it (an abstract name, a folder not made yet, no inotify) the
/// wait is a timer's.
enum SocketArrival {
    /// An inotify descriptor watching the folder of `path`; nil where there is none to watch.
    static func watch(_ path: String) -> Int32? {
        guard !path.hasPrefix("@"), let fd = try? Syscall.inotifyInit() else { return nil }
        let folder = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        guard (try? Syscall.inotifyAddWatch(fd, folder, mask: CGL_IN_CREATE | CGL_IN_MOVED_TO | CGL_IN_ONLYDIR)) != nil
        else {
            Syscall.close(fd)
            return nil
        }
        return fd
    }

    /// Waits up to `milliseconds` (-1: with no limit) for something to happen in the
    /// watched folder: an entry arriving, or the folder itself gone (the kernel drops the watch).
    static func wait(_ fd: Int32, milliseconds: Int32) -> Bool {
        guard let events = try? Syscall.poll(fd, events: Int16(POLLIN), timeoutMilliseconds: milliseconds) else { return false }
        return events & Int16(POLLIN) != 0
    }
}
