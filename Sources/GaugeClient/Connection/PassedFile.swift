import CGaugeLinux
import GaugeSystem

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
        let flags = O_WRONLY | O_NOCTTY | O_NONBLOCK
        do throws(SystemError) {
            while true {
                do throws(SystemError) {
                    return PassedFile(path: path, fd: try Syscall.open(path, flags: flags | O_CREAT | O_EXCL, mode: 0o666), created: true)
                } catch where error.errno == EEXIST {
                }
                do throws(SystemError) {
                    return PassedFile(path: path, fd: try Syscall.open(path, flags: flags), created: false)
                } catch where error.errno == ENOENT {
                    // Removed between the two calls: create it after all.
                }
            }
        } catch {
            printError("gaugectl: cannot open \(path): \(errnoText(error.errno))")
            return nil
        }
    }

    /// The daemon wrote the snapshot.
    func keep() {
        Syscall.close(fd)
    }

    /// The daemon did not write it: a file created for it goes again.
    func abandon() {
        Syscall.close(fd)
        if created { try? Syscall.unlink(path) }
    }
}
