import Foundation
import Glibc
import Testing
import GaugeTestSupport

// A question outlives the splash (README "While root waits on the screen"): root's
// `hide-splash` (the real `plymouth` client, or gaugectl's `hide`) while root's question
// waits moves it to the text console, asked there with echo off and a `*` per character;
// `deactivate`, with the display a display manager's, tells the asker at once, as does
// `quit`; the tty gets the settings gauged found once nothing waits. A pty stands in for
// the console VT; everything runs in a network namespace of its own (Plymouth's socket).

@Suite(.serialized) struct GaugedQuestionOffSplashTests {
    private struct Setup {
        let daemon: GaugedProcess
        let plymouth: String
        let pty: TypingPTY
        /// The pty's settings before gauged took it.
        let found: termios
        var asked = 0

        init() throws {
            plymouth = try DebianPlymouth.require()
            try #require(geteuid() == 0, "a private network namespace needs root")
            pty = try TypingPTY()
            found = pty.settings
            daemon = try GaugedProcess(
                ["--fps", "60", "--plymouth-compat", "--ask", "--ask-tty", pty.slavePath, "--plymouth-pid-file", "none"],
                launcher: ["/usr/bin/unshare", "--net"])
            waitForRaw(pty)
        }

        mutating func ask(_ arguments: [String] = ["ask-for-password", "--prompt=Disk password"]) throws -> ChildProgram {
            let run = try plymouthRun(plymouth, daemon: daemon, arguments)
            asked += 1
            waitForLog(daemon, "waits for the keyboard", count: asked)
            return run
        }

        /// Root's `plymouth ARGUMENTS`, run to its end.
        func plymouthCommand(_ arguments: [String]) throws -> Int32 {
            try runProgram("/usr/bin/nsenter", ["--net=/proc/\(daemon.pid)/ns/net", plymouth] + arguments).status
        }

        /// Waits until the pty has the settings gauged found (30 s at most).
        func expectSettingsGivenBack(sourceLocation: SourceLocation = #_sourceLocation) {
            let deadline = monotonicNow() + 30
            while !sameLineSettings(pty.settings, found), monotonicNow() < deadline { usleep(2_000) }
            #expect(sameLineSettings(pty.settings, found), "the tty has the settings gauged found", sourceLocation: sourceLocation)
        }
    }

    private static func sameLineSettings(_ a: termios, _ b: termios) -> Bool {
        a.c_lflag == b.c_lflag && a.c_iflag == b.c_iflag && a.c_oflag == b.c_oflag
    }

    /// Root's `plymouth hide-splash` while a passphrase is asked: the prompt goes on on the
    /// console, echo off, a `*` for each key and never the key; what was typed on the
    /// splash is dropped; Enter answers; then the tty has the settings gauged found.
    @Test func hidingTheSplashAsksOnTheConsole() throws {
        var setup = try Setup()
        let run = try setup.ask()
        setup.pty.type("spl")
        #expect(try setup.plymouthCommand(["hide-splash"]) == 0)
        waitForLog(setup.daemon, "asked on the console")
        let prompt = setup.pty.read(until: "Disk password ")
        #expect(prompt.contains("Disk password "), "the prompt on the console: \(prompt.debugDescription)")
        #expect(!setup.pty.echoes && !setup.pty.isCooked, "echo off, keys read one at a time")
        setup.pty.type("secretXY")
        let shown = setup.pty.read(until: "********")
        #expect(shown.contains("********") && !shown.contains("secret") && !shown.contains("spl"), "\(shown.debugDescription)")
        setup.pty.type("\r")
        let result = run.finish()
        #expect(result.status == 0 && result.stdout == "secretXY", "\(result)")
        setup.expectSettingsGivenBack()
        #expect(try setup.daemon.status().visible == false, "still hidden")
    }

    /// Escape cancels on the console (the asker gets no answer); a keystroke watch goes on
    /// on the console too; `show` brings a question asked there back to the splash.
    @Test func escapeWatchesAndShowOnTheConsole() throws {
        var setup = try Setup()
        var run = try setup.ask()
        #expect(try setup.daemon.request("hide") == "ok")
        waitForLog(setup.daemon, "asked on the console")
        setup.pty.type("abc\u{1B}")
        #expect(run.finish().status.map { $0 != 0 } == true, "cancelled: no answer")
        setup.expectSettingsGivenBack()

        run = try setup.ask(["watch-keystroke", "--keys=yn"])
        #expect(!setup.pty.echoes, "a keystroke watch reads the console, echo off")
        setup.pty.type("xn")
        #expect(run.finish() == (0, "n"))
        setup.expectSettingsGivenBack()

        // Asked while hidden by request: the splash comes back for it; hidden again, the
        // console asks; shown, the splash does.
        run = try setup.ask()
        try setup.daemon.waitForStatus { $0.visible }
        #expect(try setup.daemon.request("hide") == "ok")
        waitForLog(setup.daemon, "asked on the console", count: 2)
        setup.pty.type("abc")
        #expect(setup.pty.read(until: "***").contains("***"))
        #expect(try setup.daemon.request("show") == "ok")
        try setup.daemon.waitForStatus { $0.visible }
        waitForRaw(setup.pty)
        setup.pty.type("pw\r")
        #expect(run.finish() == (0, "pw"), "only what was typed where it was last asked")
    }

    /// Root's `plymouth deactivate` (a display manager's) while a passphrase is asked: the
    /// asker is told at once, and so is one asking while deactivated; the tty has its
    /// settings back. After `reactivate`, the splash asks again.
    @Test func deactivatingTellsTheAskerAtOnce() throws {
        var setup = try Setup()
        var run = try setup.ask()
        setup.pty.type("sec")
        let start = monotonicNow()
        #expect(try setup.plymouthCommand(["deactivate"]) == 0)
        let result = run.finish()
        #expect(result.status.map { $0 != 0 } == true && result.stdout.isEmpty, "no answer: \(result)")
        #expect(monotonicNow() - start < 10, "at once")
        setup.expectSettingsGivenBack()

        let refused = try runProgram("/usr/bin/nsenter", ["--net=/proc/\(setup.daemon.pid)/ns/net", setup.plymouth,
                                                          "ask-for-password", "--prompt=Data disk"])
        #expect(refused.status != 0, "asked while deactivated: told at once")
        #expect(setup.daemon.log.contains("not asked: the console is not gauged's"))
        setup.pty.type("typed-at-the-display-manager\r")

        #expect(try setup.plymouthCommand(["reactivate"]) == 0)
        waitForRaw(setup.pty)
        run = try setup.ask()
        setup.pty.type("pw\r")
        #expect(run.finish() == (0, "pw"))
    }

    /// Asked on the console, then `deactivate` or `quit`: the asker is told at once, the
    /// console's prompt line is ended, and the tty has the settings gauged found.
    @Test(arguments: [["deactivate"], ["quit"], ["quit", "--retain-splash"]])
    func leavingTheConsoleQuestionTellsTheAsker(_ command: [String]) throws {
        var setup = try Setup()
        let run = try setup.ask()
        #expect(try setup.plymouthCommand(["hide-splash"]) == 0)
        waitForLog(setup.daemon, "asked on the console")
        setup.pty.type("sec")
        #expect(setup.pty.read(until: "***").contains("***"))
        #expect(try setup.plymouthCommand(command) == 0)
        let result = run.finish()
        #expect(result.status.map { $0 != 0 } == true && result.stdout.isEmpty, "no answer: \(result)")
        setup.expectSettingsGivenBack()
    }

    /// `quit` and `quit --retain-splash` while asked: the asker is told (no answer) and the
    /// tty has the settings gauged found.
    @Test(arguments: [["quit"], ["quit", "--retain-splash"]])
    func quittingTellsTheAsker(_ quit: [String]) throws {
        var setup = try Setup()
        let run = try setup.ask()
        setup.pty.type("sec")
        #expect(try setup.plymouthCommand(quit) == 0)
        let result = run.finish()
        #expect(result.status.map { $0 != 0 } == true && result.stdout.isEmpty, "no answer: \(result)")
        #expect(setup.daemon.waitForExit(seconds: 30) != nil)
        setup.expectSettingsGivenBack()
    }
}

/// systemd's own password request, as a disk's is asked during a boot: `systemd-ask-password
/// --no-tty` (the asker) and `systemd-tty-ask-password-agent --query --plymouth` (the agent,
/// which asks gauged on Plymouth's socket), in a mount namespace with a private
/// /run/systemd/ask-password and in the daemon's network namespace.
private func systemdAsks(_ daemon: GaugedProcess, prompt: String, left: Bool = false) throws -> ChildProgram {
    let script = """
        mount -t tmpfs tmpfs /run/systemd || exit 90
        mkdir -p /run/systemd/ask-password
        systemd-ask-password --no-tty --timeout=60 "$1" &
        asker=$!
        for i in $(seq 1 500); do ls /run/systemd/ask-password/ask.* >/dev/null 2>&1 && break; sleep 0.01; done
        systemd-tty-ask-password-agent --query --plymouth
        # Left unanswered, the request stays for systemd's other agents: the asker is ended.
        if [ "$2" = left ]; then kill $asker; echo agent returned; exit 0; fi
        wait $asker
        """
    return try ChildProgram("/usr/bin/nsenter", ["--net=/proc/\(daemon.pid)/ns/net", "/usr/bin/unshare", "--mount",
                                                 "/bin/sh", "-c", script, "sh", prompt, left ? "left" : "answered"])
}

extension GaugedQuestionOffSplashTests {
    /// systemd's request hidden under: asked on the console, and systemd-ask-password gets
    /// what was typed there; deactivated under: systemd's Plymouth agent is told at once
    /// (no answer) and returns, leaving the request to systemd's other agents.
    @Test func systemdsRequestOutlivesTheSplash() throws {
        let pty = try TypingPTY()
        let daemon = try GaugedProcess(
            ["--fps", "60", "--plymouth-compat", "--ask", "--ask-tty", pty.slavePath, "--plymouth-pid-file", "none"],
            launcher: ["/usr/bin/unshare", "--net"])
        waitForRaw(pty)
        try #require(FileManager.default.fileExists(atPath: "/run/systemd"), "a /run/systemd to mount over")

        var run = try systemdAsks(daemon, prompt: "Disk password")
        waitForLog(daemon, "waits for the keyboard")
        #expect(try daemon.request("hide") == "ok")
        waitForLog(daemon, "asked on the console")
        #expect(pty.read(until: "Disk password").contains("Disk password"))
        #expect(!pty.echoes)
        pty.type("hunter2\r")
        #expect(run.finish() == (0, "hunter2\n"), "systemd-ask-password prints the answer")

        #expect(try daemon.request("show") == "ok")
        waitForRaw(pty)
        run = try systemdAsks(daemon, prompt: "Data disk", left: true)
        waitForLog(daemon, "waits for the keyboard", count: 2)
        pty.type("abc")
        let start = monotonicNow()
        #expect(try daemon.request("deactivate") == "ok")
        let result = run.finish()
        #expect(result == (0, "agent returned\n"), "no answer: the agent returns: \(result)")
        #expect(monotonicNow() - start < 10, "at once, not at the asker's timeout")
        #expect(daemon.log.contains("the console is not gauged's: what is asked gets no answer"))
    }
}
