import CGaugeLinux

#if canImport(Glibc)
    import Glibc
#endif

/// `gaugectl console-reset`: the console in text mode with automatic VT switching again.
enum ConsoleReset {
    /// Nil when done, else what went wrong.
    static func run(tty: String) -> String? {
        let fd = CGL_open(tty, O_RDWR | O_NOCTTY | O_CLOEXEC, 0)
        guard fd >= 0 else { return "cannot open \(tty): \(String(cString: strerror(errno)))" }
        defer { close(fd) }
        guard CGL_ioctl_value(fd, CGL_KDSETMODE, UInt(CGL_KD_TEXT)) == 0 else {
            return "KDSETMODE KD_TEXT on \(tty): \(String(cString: strerror(errno)))"
        }
        var mode = vt_mode()
        mode.mode = CChar(CGL_VT_AUTO)
        if CGL_ioctl_ptr(fd, CGL_VT_SETMODE, &mode) != 0 {
            return "VT_SETMODE VT_AUTO on \(tty): \(String(cString: strerror(errno)))"
        }
        return nil
    }
}
