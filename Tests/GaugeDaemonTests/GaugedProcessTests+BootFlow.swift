import Foundation
import GaugeProtocol
import Glibc
import GaugeDaemon
import Testing
import GaugeTestSupport

// One daemon through the whole boot, against the real gauged: moving into the real root
// (native `newroot`, the initramfs-tools init-bottom script, Plymouth's update-root-fs),
// the display manager's hand-over (deactivate, reactivate, quit --retain-splash), the
// console given back for questions (refused Plymouth questions, systemd's ask files),
// the shutdown screen, gaugectl's quit and ping --absent, and the '@' mark in an initrd.


/// The daemon's snapshot of "/frame.png" lands in `root` once the daemon lives there.
private func snapshotLands(in root: String, daemon: GaugedProcess) throws -> Bool {
    #expect(try daemon.request("snapshot /frame.png") == "ok")
    return FileManager.default.fileExists(atPath: root + "/frame.png")
}

/// The daemon's `/proc/PID/cmdline`, NUL-separated.
private func commandLine(of pid: pid_t) -> [UInt8] {
    (try? Array(Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")))) ?? []
}

/// Perl sending COUNT `step` requests of NAME_BYTES-byte names on one connection (the
/// name starts with its number) and printing how many were answered `ok`.
private let floodSteps = """
    use IO::Socket::UNIX; $| = 1;
    my ($path, $count, $bytes) = @ARGV;
    my $c = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path) or die "connect: $!";
    my $ok = 0;
    for my $i (0 .. $count - 1) {
        my $name = $i . ("x" x ($bytes - length($i)));
        print $c "step $name\\n";
        my $reply = <$c>; $ok++ if defined $reply && $reply eq "ok\\n";
    }
    print "$ok\\n";
    """

@Suite struct GaugedBootFlowTests {
    @Test(.enabled(if: geteuid() == 0, "chroot needs root"))
    func newrootMovesTheDaemonIntoTheRealRootForRootOnly() throws {
        let directory = TemporaryDirectory()
        chmod(directory.path, 0o755)
        let root = directory.appending("realroot")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let daemon = try GaugedProcess(["--group", "users"], socketPath: directory.appending("gauged.sock"))
        let socket = ["--socket", daemon.socketPath, "--timeout", "2"]

        // A member of the daemon's group is served, but may not move it.
        let member = ["--reuid=nobody", "--regid=nogroup", "--groups=users"]
        var run = try gaugectl(socket + ["newroot", root], asUser: member, binary: try reachableGaugectl(in: directory))
        #expect(run.status == 1 && run.stderr.hasPrefix("gaugectl: denied: "), "\(run.stderr)")
        run = try gaugectl(socket + ["newroot", directory.appending("absent")])
        #expect(run.status == 1 && run.stderr.hasPrefix("gaugectl: io: "), "\(run.stderr)")
        #expect(!(try snapshotLands(in: root, daemon: daemon)), "still in the old root")

        run = try gaugectl(socket + ["newroot", root])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try snapshotLands(in: root, daemon: daemon), "\"/\" is the new root now")
        #expect(daemon.log.contains("moved into the new root \(root)"))
        #expect(try daemon.request("progress 40") == "ok", "the daemon serves on")
    }

    @Test(.enabled(if: geteuid() == 0, "chroot needs root"))
    func initramfsToolsInitBottomScriptMovesTheDaemon() throws {
        let directory = TemporaryDirectory()
        let root = directory.appending("root")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let daemon = try GaugedProcess()
        let script = repositoryRoot.appendingPathComponent("integration/initramfs-tools/scripts/init-bottom/gauge").path
        let run = try runProgram(script, [], environment: [
            "rootmnt": root, "GAUGE_SOCKET": daemon.socketPath,
            "GAUGECTL": try BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl"),
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try snapshotLands(in: root, daemon: daemon))

        // With no daemon the script still succeeds at once: a boot never waits on it.
        let alone = try runProgram(script, [], environment: [
            "rootmnt": root, "GAUGE_SOCKET": directory.appending("none.sock"),
            "GAUGECTL": try BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl"),
        ])
        #expect(alone.status == 0 && alone.seconds < 2)
    }

    /// initramfs-tools' panic scripts and dracut's emergency hooks run before the shell.
    @Test(arguments: ["integration/initramfs-tools/scripts/panic/gauge", "integration/dracut/90gauge/gauge-emergency.sh"])
    func emergencyShellScriptsQuitTheSplashFirst(script: String) throws {
        let daemon = try GaugedProcess()
        let run = try runProgram(repositoryRoot.appendingPathComponent(script).path, [], environment: [
            "GAUGE_SOCKET": daemon.socketPath, "GAUGECTL": try BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl"),
        ])
        #expect(run.status == 0, "\(run.stderr)")
        // gaugectl quit returned: the daemon has let go of the console and its socket.
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
        #expect(daemon.waitForExit(seconds: 30).flatMap(exitCode) == 0)
    }

    @Test func deactivateStopsDrawingUntilReactivate() throws {
        let daemon = try GaugedProcess(["--fps", "60"])
        #expect(try daemon.request("theme animate=false transition_duration=0") == "ok")
        #expect(try daemon.request("deactivate") == "ok")
        var status = try daemon.status()
        #expect(!status.visible)
        let frames = status.frames
        #expect(try daemon.request("progress 70") == "ok", "requests are still served")
        // Only reactivate draws again: show is refused while a display manager has it.
        #expect(try daemon.request("show").hasPrefix("err state "))
        status = try daemon.status()
        #expect(!status.visible && status.frames == frames && status.target == 70)
        #expect(try daemon.request("reactivate") == "ok")
        status = try daemon.waitForStatus { $0.visible && $0.frames > frames }
        #expect(status.target == 70)
    }

    @Test func askPasswordFilesGiveTheConsoleBackUntilAnswered() throws {
        let directory = TemporaryDirectory()
        // Not there yet: systemd creates it when the first agent starts.
        let asks = directory.appending("run/systemd/ask-password")
        let daemon = try GaugedProcess(["--ask-password-dir", asks])
        #expect(try daemon.status().visible)

        try FileManager.default.createDirectory(atPath: asks, withIntermediateDirectories: true)
        // systemd writes the file under another name and renames it into place.
        let ask = asks + "/ask.3f9a"
        try "[Ask]\nPID=1\nSocket=/run/x\nMessage=Disk password\n".write(toFile: asks + "/tmp.3f9a", atomically: false, encoding: .utf8)
        #expect(rename(asks + "/tmp.3f9a", ask) == 0)
        try daemon.waitForStatus { !$0.visible }
        #expect(daemon.log.contains("a password request is waiting"))
        let frames = try daemon.status().frames
        #expect(try daemon.request("progress 30") == "ok")
        #expect(try daemon.status().frames == frames, "nothing drawn over the question")
        // Not every file there is a question.
        try "x".write(toFile: asks + "/sck.3f9a", atomically: false, encoding: .utf8)

        try FileManager.default.removeItem(atPath: ask)
        let status = try daemon.waitForStatus { $0.visible && $0.frames > frames }
        #expect(status.target == 30)
        #expect(daemon.log.contains("password request answered"))

        // The directory going away and coming back is followed too.
        try FileManager.default.removeItem(atPath: asks)
        try FileManager.default.createDirectory(atPath: asks, withIntermediateDirectories: true)
        try "".write(toFile: asks + "/ask.second", atomically: false, encoding: .utf8)
        try daemon.waitForStatus { !$0.visible }
    }

    @Test func aPendingQuestionAtStartKeepsTheScreenFromTheStart() throws {
        let directory = TemporaryDirectory()
        try "".write(toFile: directory.appending("ask.1"), atomically: false, encoding: .utf8)
        let daemon = try GaugedProcess(["--ask-password-dir", directory.path])
        let status = try daemon.status()
        #expect(!status.visible && status.frames == 0)
        try FileManager.default.removeItem(atPath: directory.appending("ask.1"))
        try daemon.waitForStatus { $0.visible && $0.frames > 0 }
    }

    @Test func quitReturnsOnceTheDaemonHasGoneAndPingAbsentTurnsTheAnswerAround() throws {
        let daemon = try GaugedProcess()
        let socket = ["--socket", daemon.socketPath, "--timeout", "3"]
        var run = try gaugectl(socket + ["ping", "--absent"])
        #expect(run.status == 1 && run.stderr.contains("a daemon answers"), "\(run.stderr)")
        run = try gaugectl(socket + ["quit"])
        #expect(run.status == 0, "\(run.stderr)")
        // The daemon closes its connections last, after giving the display back and
        // removing its socket.
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
        #expect(daemon.waitForExit(seconds: 30).flatMap(exitCode) == 0)
        run = try gaugectl(socket + ["ping", "--absent"])
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
        run = try gaugectl(socket + ["ping"])
        #expect(run.status == 3)
    }

    @Test func shutdownScreenRunsIndeterminateWithItsTitleAndKeepsItsFrameOnSigterm() throws {
        let daemon = try GaugedProcess(["--shutdown", "--title", "Powering off"])
        let status = try daemon.status()
        #expect(status.title == "Powering off" && status.mode == .indeterminate && status.visible)
        #expect(daemon.signalAndWait(SIGTERM).flatMap(exitCode) == 0)
        #expect(daemon.log.contains("leaving the last frame on screen"))

        let boot = try GaugedProcess()
        #expect(boot.signalAndWait(SIGTERM).flatMap(exitCode) == 0)
        #expect(!boot.log.contains("leaving the last frame"), "a boot screen gives the console back")
    }

    @Test(.enabled(if: geteuid() == 0, "a private mount namespace needs root"))
    func argv0IsMarkedForSystemdOnlyInAnInitrd() throws {
        // /etc/initrd-release in a mount namespace of the daemon's own.
        let initrd = try GaugedProcess(launcher: [
            "/usr/bin/unshare", "--mount", "/bin/sh", "-c",
            #"mount -t tmpfs gauge-test /etc && : > /etc/initrd-release && exec "$0" "$@""#,
        ])
        #expect(commandLine(of: initrd.pid).first == UInt8(ascii: "@"), "\(initrd.log)")
        #expect(initrd.log.contains("argv[0] marked '@'"))
        #expect(try initrd.request("ping") == "ok")

        let booted = try GaugedProcess()
        #expect(commandLine(of: booted.pid).first == UInt8(ascii: "/"))
    }

    /// What a display manager and the boot's tools send through Plymouth's client.
    @Test(.enabled(if: geteuid() == 0, "a private network namespace needs root"))
    func realPlymouthCommandHandsOverAndMovesTheDaemon() throws {
        let plymouth = try DebianPlymouth.require()
        let directory = TemporaryDirectory()
        let root = directory.appending("sysroot")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let daemon = try GaugedProcess(["--plymouth-compat"], launcher: ["/usr/bin/unshare", "--net"])
        func run(_ arguments: [String]) throws -> ProgramRun {
            try runProgram("/usr/bin/nsenter", ["--net=/proc/\(daemon.pid)/ns/net", plymouth] + arguments)
        }

        // A question Gauge does not answer: refused at once, and the console is given
        // back for the caller's own prompt until a client shows the splash again.
        let password = try run(["ask-for-password", "--prompt=Disk password"])
        #expect(password.status != 0 && password.seconds < 3)
        #expect(try daemon.status().visible == false, "the console is back when the caller falls back")
        #expect(try run(["show-splash"]).status == 0)
        try daemon.waitForStatus { $0.visible }

        #expect(try run(["update-root-fs", "--new-root-dir=\(root)"]).status == 0)
        try daemon.waitForStatus { _ in daemon.log.contains("moved into the new root") }
        #expect(try snapshotLands(in: root, daemon: daemon))

        // GDM: ping, deactivate, then quit --retain-splash once its own frame is up.
        #expect(try run(["--ping"]).status == 0)
        #expect(try run(["deactivate"]).status == 0)
        // The ACK comes once the display is released: the display manager may take it.
        #expect(try daemon.status().visible == false)
        #expect(try run(["show-splash"]).status == 0)
        #expect(try daemon.status().visible == false, "show-splash does not undo deactivate")
        #expect(try run(["quit", "--retain-splash"]).status == 0)
        #expect(daemon.waitForExit(seconds: 30).flatMap(exitCode) == 0)
        #expect(!FileManager.default.fileExists(atPath: "/run/plymouth/pid"), "Gauge never claims to be plymouthd")
    }
}

/// `--boot` against the real gauged, in a time namespace where the kernel started five
/// seconds ago: the bar follows the previous boot's history, a known step pulls it to
/// where that step came last time, steps show as the message (by their units'
/// descriptions, recorded by their names) until a client sets one, a
/// client's progress takes over, and `quit` records this boot for the next.
@Suite struct GaugedBootEstimateTests {
    @Test(.enabled(if: geteuid() == 0, "a time namespace needs root"))
    func aBootScreenFollowsTheLastBootAndRecordsThisOne() throws {
        let uptime = monotonicNow()
        try #require(uptime > 10, "the machine has been up for more than ten seconds")
        let directory = TemporaryDirectory()
        let history = directory.appending("lib/boot-duration")
        try FileManager.default.createDirectory(atPath: directory.appending("lib"), withIntermediateDirectories: true)
        try "duration 20\nstep 16 late.service\n".write(toFile: history, atomically: false, encoding: .utf8)
        let daemon = try GaugedProcess(
            ["--boot", "--boot-history", history],
            launcher: ["/usr/bin/unshare", "--time", "--fork", "--kill-child", "--monotonic=-\(Int(uptime) - 5)"])

        // Five to six seconds into a boot that took twenty: a quarter of the way, moving.
        let start = try daemon.status()
        #expect(start.target >= 25 && start.target < 40, "\(start.target)")
        let moved = try daemon.waitForStatus { $0.target > start.target }
        #expect(moved.target < 50)

        // Shown by its description, kept by its name.
        #expect(try daemon.request("describe late.service Late Service") == "ok")
        #expect(try daemon.request("step late.service") == "ok")
        let atStep = try daemon.waitForStatus { $0.target >= 79.9 }
        #expect(atStep.target < 95, "never the end before the end")
        #expect(atStep.message == "Late Service")

        #expect(try daemon.request("message Checking disks") == "ok")
        #expect(try daemon.request("step other.service") == "ok")
        #expect(try daemon.status().message == "Checking disks", "a client's message stays")

        #expect(try daemon.request("progress 10") == "ok")
        usleep(600_000)
        #expect(try daemon.status().target == 10, "the client's progress took over from the estimate")
        #expect(daemon.log.contains("a client reports progress: the boot estimate stops"))

        #expect(try daemon.request("quit") == "ok")
        #expect(daemon.waitForExit(seconds: 30).flatMap(exitCode) == 0)
        let saved = try #require(BootHistory.load(history).history, "\(daemon.log)")
        #expect(saved.duration > 5 && saved.duration < 60)
        #expect(Set(saved.steps.keys) == ["late.service", "other.service"])
        #expect(saved.steps["late.service"]! > 5 && saved.steps["late.service"]! <= saved.steps["other.service"]!)
    }

    /// A unit fails and the boot goes on: while its failure screen is up the estimate holds
    /// (a person reads it, and nothing wakes the daemon for it); taken down, the bar goes on
    /// moving from where it was, and the wait is not in the history.
    @Test(.enabled(if: geteuid() == 0, "a time namespace needs root"))
    func aFailureScreenTakenDownLetsTheEstimateGoOn() throws {
        let uptime = monotonicNow()
        try #require(uptime > 10, "the machine has been up for more than ten seconds")
        let directory = TemporaryDirectory()
        let history = directory.appending("boot-duration")
        try "duration 20\n".write(toFile: history, atomically: false, encoding: .utf8)
        let daemon = try GaugedProcess(
            ["--boot", "--boot-history", history],
            launcher: ["/usr/bin/unshare", "--time", "--fork", "--kill-child", "--monotonic=-\(Int(uptime) - 5)"])
        _ = try daemon.waitForStatus { $0.target > 25 }
        #expect(try daemon.request("failure Part of this system could not start") == "ok")
        let held = try daemon.status().target
        usleep(1_500_000)
        #expect(try daemon.status().target == held, "the estimate holds under the failure screen")
        #expect(try daemon.request("failure-clear") == "ok")
        #expect(try daemon.request("state running") == "ok")
        let moving = try daemon.waitForStatus { $0.target > held }
        #expect(moving.target < held + 10, "from where it was: \(held) to \(moving.target)")
        #expect(!daemon.log.contains("the boot estimate stops"), "\(daemon.log)")
        // The namespace's clock is the host's less whole seconds: the boot's length now.
        let booted = monotonicNow() - Double(Int(uptime) - 5)
        #expect(try daemon.request("quit") == "ok")
        #expect(daemon.waitForExit(seconds: 30).flatMap(exitCode) == 0)
        let saved = try #require(BootHistory.load(history).history, "\(daemon.log)")
        #expect(saved.duration <= booted - 1.4, "the 1.5 s under the failure screen left out of \(booted) s: \(saved.duration)")
    }

    /// A group member's steps show but are not recorded: 2,000 of the longest names and a
    /// `quit` leave a history of the boot's own steps, which the next boot reads.
    @Test(.enabled(if: geteuid() == 0, "a time namespace and a member through setpriv need root"))
    func aMembersStepsDoNotFillTheHistory() throws {
        let uptime = monotonicNow()
        try #require(uptime > 10, "the machine has been up for more than ten seconds")
        let directory = TemporaryDirectory()
        chmod(directory.path, 0o755)
        let history = directory.appending("boot-duration")
        let daemon = try GaugedProcess(
            ["--boot", "--boot-history", history, "--group", "users"], socketPath: directory.appending("gauged.sock"),
            launcher: ["/usr/bin/unshare", "--time", "--fork", "--kill-child", "--monotonic=-\(Int(uptime) - 5)"])
        #expect(try daemon.request("step early.service") == "ok")

        let member = ["--reuid=nobody", "--regid=nogroup", "--groups=users"]
        let flood = try runProgram(
            "/usr/bin/setpriv", member + ["--", "perl", "-e", floodSteps, daemon.socketPath, "2000", "256"])
        #expect(flood.status == 0 && flood.stdout == "2000\n", "every step answered ok: \(flood.stdout) \(flood.stderr)")
        #expect(try daemon.status().message.hasPrefix("1999"), "a member's step still shows")
        #expect(try daemon.request("step late.service") == "ok")
        let quit = try gaugectl(
            ["--socket", daemon.socketPath, "quit"], asUser: member, binary: try reachableGaugectl(in: directory))
        #expect(quit.status == 0, "\(quit.stderr)")
        #expect(daemon.waitForExit(seconds: 30).flatMap(exitCode) == 0)

        let size = try #require(FileManager.default.attributesOfItem(atPath: history)[.size] as? Int)
        #expect(size < 1024, "\(size) bytes")
        let saved = try #require(BootHistory.load(history).history, "\(daemon.log)")
        #expect(Set(saved.steps.keys) == ["early.service", "late.service"])

        // The next boot reads it.
        let next = try GaugedProcess(["--boot", "--boot-history", history])
        waitForLog(next, "boot history: 2 steps")
    }

    /// A history the daemon will not read (here larger than it reads) is logged, and the
    /// bar follows a first boot's curve, not the steps in the file.
    @Test(.enabled(if: geteuid() == 0, "a time namespace needs root"))
    func aRejectedHistoryFallsBackToAFirstBootsCurve() throws {
        let uptime = monotonicNow()
        try #require(uptime > 10, "the machine has been up for more than ten seconds")
        let directory = TemporaryDirectory()
        let history = directory.appending("boot-duration")
        let padding = String(repeating: "# padding\n", count: BootHistory.maxFileBytes / 10 + 1)
        try ("duration 6\n" + padding).write(toFile: history, atomically: false, encoding: .utf8)
        let daemon = try GaugedProcess(
            ["--boot", "--boot-history", history],
            launcher: ["/usr/bin/unshare", "--time", "--fork", "--kill-child", "--monotonic=-\(Int(uptime) - 5)"])
        // Five seconds in: 24% on a first boot's curve; a six-second boot would say 80%.
        let status = try daemon.status()
        #expect(status.target > 15 && status.target < 35, "\(status.target)")
        #expect(daemon.log.contains("boot history not used: "), "\(daemon.log)")
        #expect(daemon.log.contains("the bar follows a first boot's curve"), "\(daemon.log)")
    }

    /// While a person is asked (here Plymouth's `pause-progress`, which `plymouth
    /// ask-for-password` sends first), the estimate holds; the time paused is not learnt as
    /// boot time by the next boot's history.
    @Test(.enabled(if: geteuid() == 0, "a time and a network namespace need root"))
    func aPausedBootHoldsItsEstimateAndDoesNotLearnTheWait() throws {
        let plymouth = try DebianPlymouth.require()
        let uptime = monotonicNow()
        try #require(uptime > 10, "the machine has been up for more than ten seconds")
        let directory = TemporaryDirectory()
        let history = directory.appending("boot-duration")
        try "duration 20\n".write(toFile: history, atomically: false, encoding: .utf8)
        let offset = Int(uptime) - 5
        let daemon = try GaugedProcess(
            ["--boot", "--boot-history", history, "--plymouth-compat"],
            launcher: ["/usr/bin/unshare", "--net", "--time", "--fork", "--kill-child", "--monotonic=-\(offset)"])
        func run(_ arguments: [String]) throws -> ProgramRun {
            try runProgram("/usr/bin/nsenter", ["--net=/proc/\(daemon.pid)/ns/net", plymouth] + arguments)
        }
        let moving = try daemon.status()
        _ = try daemon.waitForStatus { $0.target > moving.target }

        #expect(try run(["pause-progress"]).status == 0)
        _ = try daemon.waitForStatus { _ in daemon.log.contains("the boot waits for a person: its estimate holds") }
        // The estimate's next tick (four a second) shows the value at the pause.
        usleep(500_000)
        let paused = try daemon.status()
        usleep(2_000_000)
        let later = try daemon.status()
        #expect(later.target == paused.target, "the estimate holds while paused: \(paused.target) then \(later.target); \(daemon.log)")

        #expect(try run(["unpause-progress"]).status == 0)
        let resumed = try daemon.waitForStatus { $0.target > paused.target }
        #expect(resumed.target < paused.target + 5, "no jump for the time paused")
        #expect(try daemon.request("quit") == "ok")
        #expect(daemon.waitForExit(seconds: 30).flatMap(exitCode) == 0)
        let ended = monotonicNow() - Double(offset)
        let saved = try #require(BootHistory.load(history).history, "\(daemon.log)")
        // The boot ran until `ended` on its own clock; 2.5 s of it were paused.
        #expect(saved.duration < ended - 2.4 && saved.duration > 5, "\(saved.duration) s recorded, \(ended) s")
    }

    /// A first boot has no history: the bar still moves, and the log says why it guesses.
    @Test func withoutHistoryTheBarStillMoves() throws {
        let directory = TemporaryDirectory()
        let daemon = try GaugedProcess(["--boot", "--boot-history", directory.appending("none")])
        let moving = try daemon.waitForStatus { $0.target > 0 }
        #expect(moving.target < 95)
        #expect(daemon.log.contains("no boot history yet"))
    }
}
