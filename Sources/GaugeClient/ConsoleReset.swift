import CGaugeLinux
import GaugeSystem

/// `gaugectl console-reset`: the console in text mode with automatic VT switching again.
enum ConsoleReset {
    /// Removes the pid file at `path` when it names no running gauged or plymouthd
    /// (`PIDFile`): nil when done or nothing to do, else what went wrong.
    static func removeStalePIDFile(_ path: String) -> String? {
        do throws(SystemError) {
            _ = try PIDFile.removeIfStale(path)
            return nil
        } catch {
            return "cannot remove the stale pid file: \(error)"
        }
    }

    /// Nil when done, else what went wrong.
    static func run(tty: String) -> String? {
        do throws(SystemError) {
            let fd = try Syscall.open(tty, flags: O_RDWR | O_NOCTTY)
            defer { Syscall.close(fd) }
            try Syscall.ioctl(fd, CGL_KDSETMODE, value: UInt(CGL_KD_TEXT), "KDSETMODE KD_TEXT on \(tty)")
            var mode = vt_mode()
            mode.mode = CChar(CGL_VT_AUTO)
            try Syscall.ioctl(fd, CGL_VT_SETMODE, &mode, "VT_SETMODE VT_AUTO on \(tty)")
            return nil
        } catch {
            return "\(error)"
        }
    }
}
