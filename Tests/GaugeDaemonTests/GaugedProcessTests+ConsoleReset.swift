import Foundation
import Glibc
import Testing
import GaugeTestSupport

// `gaugectl console-reset`, which gauged.service runs after gauged was killed or crashed:
// the console the daemon took is usable again. Tested on a pty standing in for the
// console (a pty has line settings but no console mode).

private func isSane(_ settings: termios) -> Bool {
    let local = tcflag_t(ICANON | ECHO | ISIG | IEXTEN | ECHOE | ECHOK)
    let input = tcflag_t(ICRNL)
    let output = tcflag_t(OPOST | ONLCR)
    return settings.c_lflag & local == local && settings.c_iflag & input == input && settings.c_oflag & output == output
        && settings.c_iflag & tcflag_t(INLCR | IGNCR) == 0
}

private func controlCharacters(_ settings: termios) -> [UInt8] {
    var settings = settings
    return withUnsafeBytes(of: &settings.c_cc) { cc in
        [VINTR, VQUIT, VERASE, VKILL, VEOF, VMIN, VTIME].map { cc[Int($0)] }
    }
}

/// Raw, as a reader of keys leaves it: no line editing, echo or signals, odd control
/// characters.
private func makeRaw(_ pty: TypingPTY) {
    var settings = pty.settings
    cfmakeraw(&settings)
    withUnsafeMutableBytes(of: &settings.c_cc) { cc in
        cc[Int(VINTR)] = 0
        cc[Int(VERASE)] = 8
    }
    #expect(tcsetattr(pty.master, TCSANOW, &settings) == 0)
    #expect(!isSane(pty.settings))
}

@Suite struct ConsoleResetTests {
    /// A raw pty gets sane line settings and the usual control characters back; exit 0
    /// (a pty has no console mode to reset, and that is no failure).
    @Test func aRawTerminalGetsSaneLineSettings() throws {
        let pty = try TypingPTY()
        makeRaw(pty)
        let run = try gaugectl(["console-reset", "--tty", pty.slavePath, "--pid-file", "none"])
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
        #expect(isSane(pty.settings), "canonical mode, echo, signals, CR as NL, NL as CR NL")
        #expect(controlCharacters(pty.settings) == [3, 28, 127, 21, 4, 1, 0], "^C ^\\ DEL ^U ^D, min 1, time 0")
    }

    /// What is not a terminal is a clear error, exit 1.
    @Test func aFileThatIsNoTerminalIsRefused() throws {
        let run = try gaugectl(["console-reset", "--tty", "/dev/null", "--pid-file", "none"])
        #expect(run.status == 1 && run.stderr == "gaugectl: /dev/null is not a terminal\n", "\(run.stderr)")
    }

    /// gauged killed while it reads keys (`--ask`) leaves its tty raw; console-reset,
    /// what gauged.service runs then, makes it usable.
    @Test(.enabled(if: geteuid() == 0, "a private network namespace needs root"))
    func theConsoleAGaugedLeftRawIsUsableAgain() throws {
        let pty = try TypingPTY()
        let directory = TemporaryDirectory()
        #expect(isSane(pty.settings), "a new pty starts sane")
        let daemon = try GaugedProcess(
            ["--plymouth-compat", "--ask", "--ask-tty", pty.slavePath, "--plymouth-pid-file", directory.appending("pid")],
            launcher: ["/usr/bin/unshare", "--net"])
        let deadline = monotonicNow() + 30
        while isSane(pty.settings), monotonicNow() < deadline { usleep(2_000) }
        #expect(pty.settings.c_lflag & tcflag_t(ICANON | ECHO) == 0, "the daemon reads keys raw")
        daemon.kill()
        #expect(pty.settings.c_lflag & tcflag_t(ICANON | ECHO) == 0, "SIGKILL leaves the tty raw")

        let run = try gaugectl(["console-reset", "--tty", pty.slavePath, "--pid-file", directory.appending("pid")])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(isSane(pty.settings))
        #expect(!FileManager.default.fileExists(atPath: directory.appending("pid")), "the stale pid file is gone")
    }
}
