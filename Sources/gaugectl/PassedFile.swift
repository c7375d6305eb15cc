#if canImport(Glibc)
    import Glibc
#endif

/// The file `gaugectl snapshot FILE` opens as the user running it and passes to the
/// daemon, so the daemon writes only where that user may. It is opened without
/// truncating (the daemon replaces the contents once the PNG is ready) and without
/// blocking (a FIFO with no reader is an error, not a hang); a file gaugectl created is
/// removed again when the daemon does not fill it, one that existed is left as it was.
struct PassedFile {
    let path: String
    let fd: Int32
    let created: Bool

    /// Opens or creates `path` for writing; prints why not and returns nil on failure.
    static func open(_ path: String) -> PassedFile? {
        let flags = O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK
        var fd = Glibc.open(path, flags | O_CREAT | O_EXCL, 0o666)
        var created = fd >= 0
        while fd < 0, errno == EEXIST || errno == EINTR {
            fd = Glibc.open(path, flags)
            // Removed between the two calls: create it after all.
            if fd < 0, errno == ENOENT {
                fd = Glibc.open(path, flags | O_CREAT | O_EXCL, 0o666)
                created = fd >= 0
            }
        }
        guard fd >= 0 else {
            printError("gaugectl: cannot open \(path): \(String(cString: strerror(errno)))")
            return nil
        }
        return PassedFile(path: path, fd: fd, created: created)
    }

    /// The daemon wrote the snapshot.
    func keep() {
        close(fd)
    }

    /// The daemon did not write it: a file created for it goes again.
    func abandon() {
        close(fd)
        if created { unlink(path) }
    }
}
