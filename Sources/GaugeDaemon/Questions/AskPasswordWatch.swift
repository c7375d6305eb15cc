import CGaugeLinux
import GaugeSystem

/// Watches the directory where systemd's password requests appear (`ask.*` files in
/// `/run/systemd/ask-password`, read by the password agents: the console agent asks on
/// the console while the splash would cover it). `isPending` says whether a question
/// is waiting; the daemon gives the console back while one is.
///
/// Non-blocking inotify, one descriptor for the event loop. The directory may not exist
/// yet (systemd creates it when the first agent starts; in an initramfs without systemd
/// never): the nearest existing ancestor is watched instead until it appears, and the
/// watch moves down as directories are created. `rearm()` starts over from the path,
/// for after the daemon moved into the real root.
final class AskPasswordWatch {
    let directory: String
    /// Readable when something changed: call `update()`.
    let fd: Int32
    private var watch: Int32 = -1
    /// The path the watch is on: `directory` or one of its ancestors.
    private var watchedPath = ""
    private(set) var isPending = false
    private var buffer = [UInt8](repeating: 0, count: 4096)

    private static let entryMask = CGL_IN_CREATE | CGL_IN_MOVED_TO | CGL_IN_DELETE | CGL_IN_MOVED_FROM
    private static let selfMask = CGL_IN_DELETE_SELF | CGL_IN_MOVE_SELF | CGL_IN_ONLYDIR

    init(directory: String) throws(SystemError) {
        self.directory = directory
        fd = try Syscall.inotifyInit()
        rearm()
    }

    deinit { Syscall.close(fd) }

    /// Watches `directory`, or its nearest existing ancestor, and looks for questions.
    func rearm() {
        if watch >= 0 { Syscall.inotifyRemoveWatch(fd, watch) }
        watch = -1
        watchedPath = ""
        // Down from the deepest existing ancestor; a directory created meanwhile is
        // found by the next step instead of being missed.
        for path in Self.ancestors(of: directory) + [directory] {
            guard let next = try? Syscall.inotifyAddWatch(fd, path, mask: Self.entryMask | Self.selfMask) else { break }
            if watch >= 0, watch != next { Syscall.inotifyRemoveWatch(fd, watch) }
            watch = next
            watchedPath = path
        }
        isPending = scan()
    }

    /// Reads every pending event (never blocking); true when `isPending` changed.
    @discardableResult
    func update() -> Bool {
        var moved = false
        while let count = buffer.withUnsafeMutableBytes({ raw in try? Syscall.read(fd, into: raw) }),
            count > 0
        {
            var offset = 0
            while offset + 16 <= count {
                // struct inotify_event: wd, mask, cookie, len, then len bytes of name.
                let (descriptor, mask, nameLength) = buffer.withUnsafeBytes {
                    (
                        $0.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                        $0.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                        $0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)
                    )
                }
                offset += 16 + Int(nameLength)
                // Events of watches given up (their IN_IGNORED included) are old news.
                guard descriptor == watch else { continue }
                if mask & (CGL_IN_DELETE_SELF | CGL_IN_MOVE_SELF | CGL_IN_IGNORED) != 0 { moved = true }
                // An ancestor changed: a directory on the way down may have appeared.
                if watchedPath != directory, mask & (CGL_IN_CREATE | CGL_IN_MOVED_TO) != 0 { moved = true }
            }
        }
        let before = isPending
        if moved { rearm() } else { isPending = scan() }
        return isPending != before
    }

    /// Whether an `ask.*` file is in the directory.
    private func scan() -> Bool {
        guard watchedPath == directory, let names = try? Syscall.directoryEntries(directory) else { return false }
        return names.contains { $0.hasPrefix("ask.") }
    }

    /// `/a/b/c` → `["/", "/a", "/a/b"]`.
    static func ancestors(of path: String) -> [String] {
        let parts = path.split(separator: "/").map(String.init)
        var result = ["/"]
        var current = ""
        for part in parts.dropLast() {
            current += "/" + part
            result.append(current)
        }
        return result
    }
}
