import Foundation
import GaugeProtocol
import Glibc
import Testing
import GaugeTestSupport

// A question asked on the console is never hidden: while a program other than gauged waits
// to read the console (a pty stands in for the VT: `--question-tty`), the console has the
// screen (`visible` false), and the splash comes back once nobody has waited for a moment.
// The programs are real: a shell's `read`, perl's `select`, Gauge's own `plymouth
// ask-for-password` when the daemon does not ask on the screen.

/// The parent of `pid`, from /proc/PID/stat (the field after the state).
private func parentPID(of pid: Int32) -> Int32? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return nil }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    return fields.count > 1 ? Int32(fields[1]) : nil
}

/// Waits until `visible` in the daemon's status is `shown`: the seconds it took, nil if it
/// never was within `seconds`.
private func waitForVisible(_ daemon: GaugedProcess, _ shown: Bool, seconds: Double = 10) throws -> Double? {
    let start = monotonicNow()
    while monotonicNow() - start < seconds {
        if try daemon.status().visible == shown { return monotonicNow() - start }
        usleep(20_000)
    }
    return nil
}

@Suite(.serialized) struct GaugedConsoleQuestionTests {
    @Test func aShellsReadTakesTheScreenUntilAnswered() throws {
        let pty = try TypingPTY()
        let daemon = try GaugedProcess(["--question-tty", pty.slavePath])
        #expect(try daemon.status().visible)
        let reader = try ChildProgram("/bin/sh", ["-c", "read answer; echo \"got $answer\""], input: pty.slavePath)
        let taken = try waitForVisible(daemon, false)
        #expect(taken != nil, "the console gets the screen while sh reads it:\n\(daemon.log)")
        #expect(daemon.log.contains("sh (pid \(reader.pid)) waits to read the console"))
        pty.type("yes\n")
        let answered = monotonicNow()
        let result = reader.finish()
        #expect(result.status == 0 && result.stdout == "got yes\n")
        let back = try waitForVisible(daemon, true)
        let after = monotonicNow() - answered
        #expect(back != nil, "the splash comes back once nobody reads:\n\(daemon.log)")
        // Not at once: a retry or a second disk asks again within the grace.
        #expect(after >= 1.5, "the splash came back \(after) s after the answer")
        #expect(daemon.log.contains("nobody waits on the console any more"))
    }

    @Test func selectOnTheConsoleTakesTheScreenSelectElsewhereDoesNot() throws {
        let pty = try TypingPTY()
        let daemon = try GaugedProcess(["--question-tty", pty.slavePath])
        // Has the console as its standard input, but waits on a pipe: no question.
        let elsewhere = try ChildProgram(
            "/usr/bin/perl", ["-e", "pipe(R, W); vec($r, fileno(R), 1) = 1; select($r, undef, undef, 3); exit 0"],
            input: pty.slavePath)
        for _ in 0..<8 {
            #expect(try daemon.status().visible, "a program that only holds the console asks nothing")
            usleep(250_000)
        }
        #expect(elsewhere.finish().status == 0)
        // Waits for the console itself to be readable, as askpass does.
        let asking = try ChildProgram(
            "/usr/bin/perl", ["-e", "vec($r, 0, 1) = 1; select($r, undef, undef, undef); exit 0"], input: pty.slavePath)
        #expect(try waitForVisible(daemon, false) != nil, "select on the console is a question:\n\(daemon.log)")
        #expect(daemon.log.contains("perl (pid \(asking.pid)) waits to read the console"))
        pty.type("\n")
        #expect(asking.finish().status == 0)
        #expect(try waitForVisible(daemon, true) != nil)
    }

    /// Without `--ask`, Gauge's `plymouth ask-for-password` (askpass's way on Debian) is
    /// refused on the screen and asks on the console, echo off; the console has the screen
    /// meanwhile, and the answer goes to standard output as Plymouth's would.
    @Test func gaugesPlymouthAsksOnTheConsoleWhenTheScreenDoesNot() throws {
        try #require(geteuid() == 0, "a private network namespace needs root")
        let plymouth = try #require(gaugePlymouthPath, "Gauge's executable is not built")
        let pty = try TypingPTY()
        let daemon = try GaugedProcess(
            ["--plymouth-compat", "--question-tty", pty.slavePath], launcher: ["/usr/bin/unshare", "--net"])
        #expect(try daemon.status().visible)
        let asker = try ChildProgram(
            "/usr/bin/nsenter",
            ["--net=/proc/\(daemon.pid)/ns/net", "/usr/bin/setsid", "-w", plymouth, "ask-for-password",
             "--prompt", "Please unlock disk cryptroot"],
            input: pty.slavePath)
        let shown = pty.read(until: "Please unlock disk cryptroot: ")
        #expect(shown.hasSuffix("Please unlock disk cryptroot: "), "the prompt: \(shown.debugDescription)")
        #expect(try waitForVisible(daemon, false) != nil, "the console has the screen for the prompt:\n\(daemon.log)")
        #expect(!pty.echoes, "a passphrase is typed without echo")
        pty.type("s3cret\r")
        let result = asker.finish()
        #expect(result.status == 0)
        #expect(result.stdout == "s3cret", "the answer, as Plymouth's client prints it")
        let afterwards = pty.read(until: "\n")
        #expect(!afterwards.contains("s3cret"), "nothing typed shows: \(afterwards.debugDescription)")
        #expect(pty.echoes, "the terminal's settings come back")
        #expect(try waitForVisible(daemon, true) != nil, "the splash comes back:\n\(daemon.log)")
    }

    /// An asker that dies in the middle of typing leaves a console that echoes again, and
    /// the splash comes back.
    @Test func anAskerKilledMidTypingLeavesAUsableConsole() throws {
        try #require(geteuid() == 0, "a private network namespace needs root")
        let plymouth = try #require(gaugePlymouthPath, "Gauge's executable is not built")
        let pty = try TypingPTY()
        let daemon = try GaugedProcess(
            ["--plymouth-compat", "--question-tty", pty.slavePath], launcher: ["/usr/bin/unshare", "--net"])
        let asker = try ChildProgram(
            "/usr/bin/nsenter",
            ["--net=/proc/\(daemon.pid)/ns/net", "/usr/bin/setsid", "-w", plymouth, "ask-for-password", "--prompt", "Disk"],
            input: pty.slavePath)
        _ = pty.read(until: "Disk: ")
        #expect(try waitForVisible(daemon, false) != nil)
        #expect(!pty.echoes)
        pty.type("half")
        // The plymouth process itself: the one started, or setsid's child.
        let pids = try runProgram("/usr/bin/pgrep", ["-x", "plymouth"]).stdout
            .split(separator: "\n").compactMap { Int32($0) }
            .filter { $0 == asker.pid || parentPID(of: $0) == asker.pid }
        #expect(!pids.isEmpty, "the asker runs")
        for pid in pids { kill(pid, SIGTERM) }
        #expect(asker.finish().status != 0)
        #expect(pty.echoes, "the terminal echoes again")
        #expect(try waitForVisible(daemon, true) != nil, "the splash comes back:\n\(daemon.log)")
    }

    /// With `--ask` the daemon reads the keyboard while the splash shows; a program asking
    /// on the console itself (a script's `read`, not Plymouth's protocol) gets the keys.
    @Test func withAskTheKeysGoToWhoeverAsksOnTheConsole() throws {
        let pty = try TypingPTY()
        let directory = TemporaryDirectory()
        let daemon = try GaugedProcess(
            ["--plymouth-compat", "--ask", "--ask-tty", pty.slavePath, "--question-tty", pty.slavePath,
             "--plymouth-pid-file", directory.appending("pid")],
            launcher: ["/usr/bin/unshare", "--net"])
        let deadline = monotonicNow() + 30
        while pty.isCooked, monotonicNow() < deadline { usleep(2_000) }
        #expect(!pty.isCooked, "the daemon reads keys while the splash shows")
        let reader = try ChildProgram("/bin/sh", ["-c", "read answer; echo \"got $answer\""], input: pty.slavePath)
        #expect(try waitForVisible(daemon, false) != nil, "the console gets the screen:\n\(daemon.log)")
        #expect(pty.isCooked, "the daemon let go of the keyboard: a line can be typed")
        pty.type("yes\r")
        let result = reader.finish()
        #expect(result.status == 0 && result.stdout == "got yes\n", "the keys reached the script:\n\(daemon.log)")
        #expect(try waitForVisible(daemon, true) != nil)
        let again = monotonicNow() + 30
        while pty.isCooked, monotonicNow() < again { usleep(2_000) }
        #expect(!pty.isCooked, "the daemon reads keys again under the splash")
    }
    /// A still splash over a watched console makes no wakeups: the processes are looked at
    /// only when the kernel says the console was opened or written (and for a moment at
    /// start), not four times a second.
    @Test func aStillSplashOverAWatchedConsoleMakesNoWakeups() throws {
        let pty = try TypingPTY()
        let daemon = try GaugedProcess(["--question-tty", pty.slavePath])
        let c = try daemon.connect()
        #expect(try c.request("theme animate=false transition_duration=0.1") == "ok")
        #expect(try c.request("progress 40") == "ok")
        #expect(try c.request("wait") == "ok")
        #expect(try c.status().animating == false)
        // The look at start ends within its window.
        usleep(2_500_000)
        let before = try #require(daemon.procStatus("voluntary_ctxt_switches"))
        usleep(1_500_000)
        let after = try #require(daemon.procStatus("voluntary_ctxt_switches"))
        #expect(after == before, "\(after - before) wakeups in 1.5 s with nothing moving and nobody at the console")
        #expect(try daemon.status().visible)
    }

    /// Without the four-times-a-second look, an asker is still found: by its open of the
    /// console, and by the prompt it writes on a console it opened long before.
    @Test func anAskerIsFoundByItsOpenAndByItsPrompt() throws {
        let pty = try TypingPTY()
        let daemon = try GaugedProcess(["--question-tty", pty.slavePath])
        usleep(2_500_000)
        let opener = try ChildProgram("/bin/sh", ["-c", "read answer; echo \"got $answer\""], input: pty.slavePath)
        #expect(try waitForVisible(daemon, false) != nil, "an open of the console is looked at:\n\(daemon.log)")
        #expect(daemon.log.contains("sh (pid \(opener.pid)) waits to read the console"))
        pty.type("one\n")
        #expect(opener.finish().stdout == "got one\n")
        #expect(try waitForVisible(daemon, true) != nil)
        // Opens the console now, asks after the look that its open started is over.
        let prompter = try ChildProgram(
            "/bin/sh", ["-c", "sleep 3; printf 'Answer: ' >&0; read answer; echo \"got $answer\""], input: pty.slavePath)
        #expect(try waitForVisible(daemon, false) != nil, "a prompt written to the console is looked at:\n\(daemon.log)")
        #expect(daemon.log.contains("sh (pid \(prompter.pid)) waits to read the console"))
        _ = pty.read(until: "Answer: ")
        pty.type("two\n")
        #expect(prompter.finish().stdout == "got two\n")
    }
}
