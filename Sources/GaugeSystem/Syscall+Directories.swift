import CGaugeLinux

// Directories: the current one, the root switch (chroot, chdir), inotify on a directory,
// and listing one.
extension Syscall {
    package static func chdir(_ path: String) throws(SystemError) {
        _ = try retrying("chdir", "chdir \(path)", { CGaugeLinux.chdir(path) })
    }

    /// The current working directory.
    package static func currentDirectory() throws(SystemError) -> String {
        if let plan = SyscallFaults.current, let injected = plan.take("getcwd") { throw SystemError("getcwd", errno: injected) }
        guard let path = getcwd(nil, 0) else { throw SystemError("getcwd", errno: CGL_errno()) }
        defer { free(path) }
        return String(cString: path)
    }

    package static func chroot(_ path: String) throws(SystemError) {
        _ = try retrying("chroot", "chroot \(path)", { CGL_chroot(path) })
    }

    /// A non-blocking, close-on-exec inotify instance.
    package static func inotifyInit() throws(SystemError) -> Int32 {
        try retrying("inotify_init1", "inotify_init1", { CGL_inotify_init(CGL_IN_NONBLOCK | CGL_IN_CLOEXEC) })
    }

    /// Watches `path`; the watch descriptor.
    package static func inotifyAddWatch(_ fd: Int32, _ path: String, mask: UInt32) throws(SystemError) -> Int32 {
        try retrying("inotify_add_watch", "inotify_add_watch \(path)", { CGL_inotify_add_watch(fd, path, mask) })
    }

    package static func inotifyRemoveWatch(_ fd: Int32, _ watch: Int32) {
        _ = CGL_inotify_rm_watch(fd, watch)
    }

    /// The names in a directory, without `.` and `..`.
    package static func directoryEntries(_ path: String) throws(SystemError) -> [String] {
        guard let directory = opendir(path) else { throw SystemError("opendir \(path)", errno: CGL_errno()) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
