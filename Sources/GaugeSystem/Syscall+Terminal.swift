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

extension Syscall {
    /// A pseudo-terminal: its main side (close-on-exec, not this process's controlling
    /// terminal) and the path of its other side.
    package static func openTerminalPair() throws(SystemError) -> (main: Int32, other: String) {
        var fd: Int32 = -1
        var name = [CChar](repeating: 0, count: 128)
        let error = name.withUnsafeMutableBufferPointer { CGL_open_terminal_pair(&fd, $0.baseAddress, $0.count) }
        guard error == 0 else { throw SystemError("cannot open a pseudo-terminal", errno: error) }
        return (fd, name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
    }

    /// A terminal's size in character cells; nil when `fd` is no terminal.
    package static func windowSize(_ fd: Int32) -> (rows: UInt16, columns: UInt16)? {
        var size = winsize()
        guard CGL_ioctl_ptr(fd, UInt(TIOCGWINSZ), &size) == 0 else { return nil }
        return (size.ws_row, size.ws_col)
    }

    /// Sets a terminal's size in character cells (what a program on it reads with TIOCGWINSZ).
    package static func setWindowSize(_ fd: Int32, rows: UInt16, columns: UInt16) throws(SystemError) {
        var size = winsize(ws_row: rows, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
        _ = try retrying("ioctl", "TIOCSWINSZ", { CGL_ioctl_ptr(fd, UInt(TIOCSWINSZ), &size) })
    }
}
