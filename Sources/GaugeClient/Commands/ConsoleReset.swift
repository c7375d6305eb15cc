import CGaugeLinux
import GaugeSystem

/// `gaugectl console-reset`: the console as gauged found it, for the end gauged cannot
/// see itself (SIGKILL, a crash; gauged.service runs it then): sane line settings (what
/// `stty sane` sets: canonical mode, echo, signals, the usual control characters), and on
/// a VT text mode, automatic VT switching and the cursor.
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
        let fd: Int32
        do throws(SystemError) {
            // Non-blocking: a tty whose carrier is gone must not hang the unit's stop.
            fd = try Syscall.open(tty, flags: O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        } catch {
            return "\(error)"
        }
        defer { Syscall.close(fd) }
        do throws(SystemError) {
            let settings = try Syscall.terminalAttributes(fd)
            try Syscall.setTerminalAttributes(fd, sane(settings))
        } catch {
            return error.errno == ENOTTY ? "\(tty) is not a terminal" : "cannot reset the line settings of \(tty): \(error)"
        }
        // Only a VT has a console mode; a pty or a serial line has its line settings only.
        var mode: Int32 = 0
        guard (try? Syscall.ioctl(fd, CGL_KDGETMODE, &mode, "KDGETMODE \(tty)")) != nil else { return nil }
        do throws(SystemError) {
            try Syscall.ioctl(fd, CGL_KDSETMODE, value: UInt(CGL_KD_TEXT), "KDSETMODE KD_TEXT on \(tty)")
            var vtMode = vt_mode()
            vtMode.mode = CChar(CGL_VT_AUTO)
            try Syscall.ioctl(fd, CGL_VT_SETMODE, &vtMode, "VT_SETMODE VT_AUTO on \(tty)")
        } catch {
            return "\(error)"
        }
        let showCursor = Array("\u{1B}[?25h".utf8)
        _ = showCursor.withUnsafeBytes { try? Syscall.write(fd, $0) }
        return nil
    }

    /// `settings` as `stty sane` leaves them (and with XON/XOFF flow control, a console's
    /// default): line editing, echo, signals, CR read as NL, NL written as CR NL, the
    /// usual control characters. The speed and character size are kept.
    static func sane(_ settings: termios) -> termios {
        var sane = settings
        sane.c_iflag &= ~tcflag_t(IGNBRK | INLCR | IGNCR | IXOFF | IUCLC | IXANY)
        sane.c_iflag |= tcflag_t(BRKINT | ICRNL | IMAXBEL | IXON)
        sane.c_oflag &= ~tcflag_t(OLCUC | OCRNL | ONOCR | ONLRET | OFILL | OFDEL | NLDLY | CRDLY | TABDLY | BSDLY | VTDLY | FFDLY)
        sane.c_oflag |= tcflag_t(OPOST | ONLCR)
        sane.c_cflag |= tcflag_t(CREAD)
        sane.c_lflag &= ~tcflag_t(ECHONL | NOFLSH | XCASE | TOSTOP | ECHOPRT | EXTPROC)
        sane.c_lflag |= tcflag_t(ISIG | ICANON | IEXTEN | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE)
        func control(_ key: Unicode.Scalar) -> UInt8 { UInt8(ascii: key) & 0x1F }
        let characters: [(Int32, UInt8)] = [
            (VINTR, control("C")), (VQUIT, control("\\")), (VERASE, 0x7F), (VKILL, control("U")),
            (VEOF, control("D")), (VEOL, 0), (VEOL2, 0), (VSWTC, 0), (VSTART, control("Q")),
            (VSTOP, control("S")), (VSUSP, control("Z")), (VREPRINT, control("R")),
            (VWERASE, control("W")), (VLNEXT, control("V")), (VDISCARD, control("O")), (VMIN, 1), (VTIME, 0),
        ]
        withUnsafeMutableBytes(of: &sane.c_cc) { cc in
            for (index, value) in characters { cc[Int(index)] = value }
        }
        return sane
    }
}

extension CommandSpec {
    static let consoleReset = CommandSpec(
        name: "console-reset", argumentsSynopsis: "[--tty PATH] [--pid-file PATH|none]",
        summary: "Give the text console back after gauged died uncleanly",
        details: """
            Gives the console sane line settings (as stty sane: line editing, echo, signals)
            and, on a VT, text mode (KD_TEXT) and automatic VT switching, as gauged does on
            every exit it sees. For the one it cannot see (SIGKILL, a crash): gauged.service
            runs it after the daemon stops. It also removes Plymouth's pid file
            when it names no running gauged or plymouthd, so systemd's console password agent
            asks on the console again. Talks to the console, not to gauged; exit 1 when the
            console cannot be reset (a pty or serial line has no console mode: only its line
            settings are reset).
            """,
        options: [
            OptionSpec(name: "--tty", valueName: "PATH", help: "The console (default /dev/tty0, the active VT)"),
            OptionSpec(
                name: "--pid-file", valueName: "PATH",
                help: "The pid file gauged --ask creates (default /run/plymouth/pid; none leaves it alone)"),
        ],
        makeAction: { arguments throws(UsageError) in
            let tty = arguments.values["--tty"] ?? "/dev/tty0"
            guard !tty.isEmpty else { throw UsageError("--tty needs a path") }
            let pidFile = arguments.values["--pid-file"] ?? "/run/plymouth/pid"
            guard pidFile.hasPrefix("/") || pidFile == "none" else {
                throw UsageError("--pid-file takes an absolute path or none")
            }
            return .consoleReset(tty: tty, pidFile: pidFile == "none" ? nil : pidFile)
        },
        makeRequest: { _ throws(UsageError) in throw UsageError("console-reset is not a request") })
}
