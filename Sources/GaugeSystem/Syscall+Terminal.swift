import CGaugeLinux

extension Syscall {
    /// The terminal settings of a tty.
    package static func terminalAttributes(_ fd: Int32) throws(SystemError) -> termios {
        var settings = termios()
        _ = try retrying("tcgetattr", "tcgetattr", { CGaugeLinux.tcgetattr(fd, &settings) })
        return settings
    }

    /// Whether `fd` is a terminal: its settings can be read (what `isatty` asks).
    package static func isTerminal(_ fd: Int32) -> Bool {
        (try? terminalAttributes(fd)) != nil
    }

    /// Changes a tty's settings at once (`TCSANOW`).
    package static func setTerminalAttributes(_ fd: Int32, _ settings: termios) throws(SystemError) {
        var settings = settings
        _ = try retrying("tcsetattr", "tcsetattr", { CGaugeLinux.tcsetattr(fd, TCSANOW, &settings) })
    }
}

extension Syscall {
    /// Drops what was typed on a tty and not read yet.
    package static func discardTerminalInput(_ fd: Int32) throws(SystemError) {
        _ = try retrying("tcflush", "tcflush", { CGaugeLinux.tcflush(fd, TCIFLUSH) })
    }
}
