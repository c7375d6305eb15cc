import GaugeSystem
import CGaugeLinux

/// Keys typed on a tty (the VT the screen is on, or a pty standing in for it), read
/// through the daemon's loop while the splash shows or someone waits for them: the tty is opened and put in
/// non-canonical mode without echo (the kernel's keymap still turns key codes into
/// characters, as for any console program), and its settings are restored and it is
/// closed when nobody waits any more.
///
/// The settings it found the first time are the ones it gives back, however often it
/// stops and starts. When it stops while another program has changed them (a program
/// asking on the console: the daemon stops reading so the keys reach it), that program
/// keeps a tty it can read a line from: the first settings, with echo off if it turned
/// echo off, rather than the raw mode it found.
///
/// What is read passes through one fixed buffer, zeroed after each read; nothing typed
/// is logged.
final class KeyboardInput {
    private let path: String
    private let loop: EventLoop
    private let log: Log
    private let onKeys: (UnsafeRawBufferPointer) -> Void
    private var fd: Int32 = -1
    /// The settings found before the first start.
    private var original: termios?
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)

    init(path: String, loop: EventLoop, log: Log, onKeys: @escaping (UnsafeRawBufferPointer) -> Void) {
        self.path = path
        self.loop = loop
        self.log = log
        self.onKeys = onKeys
    }

    deinit {
        stop()
        buffer.deallocate()
    }

    var isReading: Bool { fd >= 0 }

    /// Starts reading keys; false (logged) if the tty cannot be used.
    @discardableResult
    func start() -> Bool {
        guard fd < 0 else {
            reassertMode()
            return true
        }
        do throws(SystemError) {
            let fd = try Syscall.open(path, flags: O_RDWR | O_NOCTTY | O_NONBLOCK)
            do throws(SystemError) {
                let found = try Syscall.terminalAttributes(fd)
                let original = self.original ?? found
                try Syscall.setTerminalAttributes(fd, Self.raw(original))
                // Keys typed before anyone asked are not an answer.
                try Syscall.discardTerminalInput(fd)
                try loop.register(fd, events: .readable) { [self] events in readKeys(events) }
                self.original = original
                self.fd = fd
            } catch {
                Syscall.close(fd)
                throw error
            }
        } catch {
            log.info("keyboard: cannot read keys from \(path): \(error)")
            return false
        }
        log.info("keyboard: reading keys from \(path)")
        return true
    }

    /// Whether Caps Lock is on, from the VT's keyboard flags (`KDGKBLED`); false for a tty
    /// that is not a VT.
    var capsLock: Bool {
        guard fd >= 0 else { return false }
        var flags: UInt8 = 0
        guard (try? Syscall.ioctl(fd, UInt(KDGKBLED), &flags, "KDGKBLED \(path)")) != nil else { return false }
        return flags & UInt8(K_CAPSLOCK) != 0
    }

    /// Puts the tty back in the mode keys are read in when something else changed it
    /// while it was read (systemd resets the console's settings to canonical mode with
    /// echo when it starts in the real root): otherwise keys would wait in the line
    /// discipline until Enter. What was typed meanwhile is discarded.
    func reassertMode() {
        guard fd >= 0, let current = try? Syscall.terminalAttributes(fd),
            current.c_lflag & tcflag_t(ICANON | ECHO) != 0
        else { return }
        do throws(SystemError) {
            try Syscall.setTerminalAttributes(fd, Self.raw(current))
            try Syscall.discardTerminalInput(fd)
            log.info("keyboard: \(path) was set back to canonical mode by another program; keys are read raw again")
        } catch {
            log.info("keyboard: cannot set \(path) back to raw mode: \(error)")
        }
    }

    /// Writes `bytes` on the tty (a question's prompt line asked on the console); a tty
    /// that does not take them at once loses them: the loop never waits on it.
    func write(_ bytes: [UInt8]) {
        guard fd >= 0 else { return }
        let written = bytes.withUnsafeBytes { try? Syscall.write(fd, $0) }
        if written == nil { log.info("keyboard: cannot write the question's prompt on \(path)") }
    }

    /// `settings` in non-canonical mode without echo or signals, a byte at a time.
    private static func raw(_ settings: termios) -> termios {
        var raw = settings
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ECHONL | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL | INLCR | IGNCR)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        return raw
    }

    /// Stops reading and gives the tty its settings back (see the type's notes for a tty
    /// another program changed meanwhile).
    func stop() {
        guard fd >= 0 else { return }
        loop.unregister(fd)
        if let original, let current = try? Syscall.terminalAttributes(fd) {
            try? Syscall.setTerminalAttributes(fd, Self.handedBack(original, current: current))
        }
        Syscall.close(fd)
        fd = -1
    }

    /// What a stop leaves: `original`, but with echo off when `current` is not the raw mode
    /// this reader set and has echo off (another program is reading a passphrase).
    static func handedBack(_ original: termios, current: termios) -> termios {
        let raw = raw(original)
        let lineFlags = tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
        let inputFlags = tcflag_t(ICRNL | IXON | INLCR | IGNCR)
        let ours = current.c_lflag & lineFlags == raw.c_lflag & lineFlags && current.c_iflag & inputFlags == raw.c_iflag & inputFlags
        var result = original
        if !ours, current.c_lflag & tcflag_t(ECHO) == 0 { result.c_lflag &= ~tcflag_t(ECHO | ECHONL) }
        return result
    }

    private func readKeys(_ events: IOEvents) {
        let count: Int?
        do throws(SystemError) {
            count = try Syscall.read(fd, into: buffer)
        } catch {
            log.info("keyboard: \(error); keys no longer read from \(path)")
            stop()
            return
        }
        guard let count else { return }
        if count == 0 {
            log.info("keyboard: \(path) hung up; keys no longer read")
            stop()
            return
        }
        onKeys(UnsafeRawBufferPointer(rebasing: buffer.prefix(count)))
        wipe(buffer)
    }
}
