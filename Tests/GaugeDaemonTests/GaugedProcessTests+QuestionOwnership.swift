import Foundation
import GaugeProtocol
import Glibc
import Testing
import GaugeTestSupport

// A question belongs to its asker (README "Access", "While root waits on the screen"):
// root asks with the real `plymouth` client, a member of the daemon's group (`nobody`
// with the supplementary group `users`, through setpriv) tries to take the screen from
// it, end it or read the keys off the daemon, through gaugectl, the real `plymouth`
// client and a raw status poller. The keys are typed into a pty standing in for the
// console VT; everything runs in a network namespace of its own (Plymouth's socket).

private let member = ["--reuid=nobody", "--regid=nogroup", "--groups=users"]

/// gauged serving `users` with questions on the screen, gaugectl where nobody can run it,
/// and the plymouth client.
private struct Setup {
    let daemon: GaugedProcess
    let pty: TypingPTY
    let plymouth: String
    let client: String
    /// A directory the member owns, for its snapshots.
    let home: String
    /// psplash's FIFO, whose writers have a member's rights.
    let fifo: String
    private let fifoDirectory = TemporaryDirectory()

    init(fps: Int = 60) throws {
        try #require(geteuid() == 0, "a private network namespace and a member through setpriv need root")
        plymouth = try DebianPlymouth.require()
        pty = try TypingPTY()
        fifo = fifoDirectory.appending("psplash_fifo")
        daemon = try GaugedProcess(
            ["--fps", "\(fps)", "--group", "users", "--plymouth-compat", "--ask", "--ask-tty", pty.slavePath,
             "--plymouth-pid-file", "none", "--psplash-fifo", fifo],
            launcher: ["/usr/bin/unshare", "--net"])
        chmod(daemon.directory.path, 0o755)
        client = try reachableGaugectl(in: daemon.directory)
        home = daemon.directory.appending("home")
        mkdir(home, 0o755)
        chown(home, getpwnam("nobody").pointee.pw_uid, gid_t.max)
        #expect(try daemon.request("theme animate=false transition_duration=0") == "ok")
        #expect(try daemon.request("progress 42 Unlocking disks") == "ok")
        waitForRaw(pty)
    }

    /// Root's `plymouth ARGUMENTS`, once the daemon has taken its request (the `count`th).
    func rootAsks(_ arguments: [String], count: Int = 1) throws -> ChildProgram {
        let run = try plymouthRun(plymouth, daemon: daemon, arguments)
        waitForLog(daemon, "waits for the keyboard", count: count)
        return run
    }

    /// The member's `plymouth ARGUMENTS`, run to its end.
    func memberPlymouth(_ arguments: [String]) throws -> ProgramRun {
        try runProgram("/usr/bin/nsenter", ["--net=/proc/\(daemon.pid)/ns/net", "setpriv"] + member + ["--", plymouth] + arguments)
    }

    func memberGaugectl(_ arguments: [String]) throws -> ProgramRun {
        try gaugectl(["--socket", daemon.socketPath, "--timeout", "3"] + arguments, asUser: member, binary: client)
    }
}

@Suite(.serialized) struct GaugedQuestionOwnershipTests {
    /// While root's password prompt waits, a member can neither hide it nor hand the
    /// display over, change the theme under it, snapshot it or quit: every way is refused
    /// (`err denied`, Plymouth's NAK), the splash stays visible and root's answer arrives.
    /// Once answered, the member's `hide` works again.
    @Test func aMemberCannotTakeTheScreenFromRootsQuestion() throws {
        let setup = try Setup()
        let daemon = setup.daemon
        let question = try setup.rootAsks(["ask-for-password", "--prompt=Disk password"])
        setup.pty.type("hun")

        for arguments in [["hide-splash"], ["deactivate"], ["quit"]] {
            let run = try setup.memberPlymouth(arguments)
            #expect(run.status != 0, "member's plymouth \(arguments) is refused (NAK): \(run.stderr)")
            #expect(try daemon.status().visible, "after the member's plymouth \(arguments)")
        }
        for arguments in [["hide"], ["deactivate"], ["theme", "background=#ffffff"], ["reload"],
                          ["snapshot", setup.home + "/member.png"], ["quit"]] {
            let run = try setup.memberGaugectl(arguments)
            #expect(run.status == 1 && run.stderr.contains("root's question waits on the screen"),
                    "member's \(arguments): status \(run.status), \(run.stderr)")
        }
        let status = try daemon.status()
        #expect(status.visible, "the splash still shows root's question")
        #expect(daemon.waitForExit(seconds: 0) == nil, "the daemon still runs")
        #expect(!FileManager.default.fileExists(atPath: setup.home + "/member.png"), "gaugectl removed the file it created")

        setup.pty.type("ter2\r")
        let result = question.finish()
        #expect(result.status == 0 && result.stdout == "hunter2", "root's answer: \(result)")

        let hide = try setup.memberGaugectl(["hide"])
        #expect(hide.status == 0, "nothing waits: the member may hide the splash again: \(hide.stderr)")
        try daemon.waitForStatus { !$0.visible }

        // Handed over by a member beforehand, the screen comes back for root's next
        // question, and only then are its keys read.
        #expect(try setup.memberGaugectl(["deactivate"]).status == 0)
        let next = try setup.rootAsks(["ask-for-password", "--prompt=Disk password"], count: 2)
        #expect(try daemon.status().visible, "the question took the screen back")
        waitForRaw(setup.pty)
        setup.pty.type("again\r")
        let second = next.finish()
        #expect(second.status == 0 && second.stdout == "again", "\(second)")
    }

    /// Root hiding the splash under its own question moves the question to the console:
    /// its prompt is written there and keys are read with echo off, what was typed on the
    /// splash is dropped, and the answer is what was typed where it is asked. Once
    /// answered, the tty has its settings back.
    @Test func rootHidingItsQuestionAsksOnTheConsole() throws {
        let setup = try Setup()
        let daemon = setup.daemon
        let question = try setup.rootAsks(["ask-for-password", "--prompt=Disk password"])
        setup.pty.type("on-the-splash")
        // Read on the splash before the hide arrives (they come by different ways).
        usleep(300_000)
        #expect(try daemon.request("hide") == "ok", "root may hide its own question")
        waitForLog(daemon, "asked on the console")
        #expect(setup.pty.read(until: "Disk password").contains("Disk password"))
        #expect(!setup.pty.echoes, "echo off on the console")
        setup.pty.type("pw\r")
        let result = question.finish()
        #expect(result.status == 0 && result.stdout == "pw", "only what was typed on the console: \(result)")
        let deadline = monotonicNow() + 30
        while !setup.pty.isCooked, monotonicNow() < deadline { usleep(2_000) }
        #expect(setup.pty.isCooked, "answered: the tty has its settings back")
    }

    /// A member's `ignore-keystroke` does not end root's watch (NAK), nor does its quit;
    /// root's own `ignore-keystroke`, from another connection as `plymouth` sends it, does.
    @Test func aMemberEndsNoneOfRootsWatches() throws {
        let setup = try Setup()
        let daemon = setup.daemon
        var watch = try setup.rootAsks(["watch-keystroke", "--keys=yn"])
        let ignore = try setup.memberPlymouth(["ignore-keystroke", "--keys=yn"])
        #expect(ignore.status != 0, "the member's ignore-keystroke is refused: \(ignore.stderr)")
        #expect(try setup.memberGaugectl(["quit"]).status == 1)
        #expect(try setup.memberPlymouth(["quit"]).status != 0)
        let fd = open(setup.fifo, O_WRONLY | O_NONBLOCK)
        #expect(fd >= 0 && write(fd, "QUIT\n", 5) == 5, "psplash's QUIT written")
        close(fd)
        waitForLog(daemon, "refused a compat input: root's question waits on the screen: only root may quit", count: 2)
        #expect(daemon.waitForExit(seconds: 0) == nil, "the daemon still runs")
        setup.pty.type("y")
        var result = watch.finish()
        #expect(result.status == 0 && result.stdout == "y", "root's watch got its key: \(result)")

        watch = try setup.rootAsks(["watch-keystroke", "--keys=yn"], count: 2)
        let rootIgnore = try runProgram(
            "/usr/bin/nsenter", ["--net=/proc/\(daemon.pid)/ns/net", setup.plymouth, "ignore-keystroke", "--keys=yn"])
        #expect(rootIgnore.status == 0)
        result = watch.finish()
        #expect(result.status != 0 && result.stdout.isEmpty, "root's own ignore-keystroke ends root's watch")
    }
}

/// Perl run as a member: polls `status` on the native socket as fast as it is answered
/// (a pause of 2 ms between requests) until its standard input closes, and prints each
/// `frames` value.
private let statusPoller = """
    use IO::Socket::UNIX; use IO::Select; $| = 1;
    my $c = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $ARGV[0]) or die "connect: $!";
    my $stdin = IO::Select->new(\\*STDIN);
    while (1) {
        print $c "status\\n";
        my $line = <$c>;
        last unless defined $line;
        print "$1\\n" if $line =~ /"frames":(\\d+)/;
        last if $stdin->can_read(0.002);
    }
    """

/// The `frames` a member reads, each with the time the test saw it.
private final class FramesSeen: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [(time: Double, frames: Int)] = []

    func add(_ frames: Int) {
        lock.lock()
        seen.append((monotonicNow(), frames))
        lock.unlock()
    }

    /// How far `frames` advanced between `start` and `end`.
    func advance(from start: Double, to end: Double) -> Int {
        lock.lock()
        defer { lock.unlock() }
        let first = seen.last { $0.time <= start }?.frames ?? seen.first { $0.time >= start }?.frames ?? 0
        let last = seen.last { $0.time <= end }?.frames ?? first
        return last - first
    }

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return seen.count
    }
}

extension GaugedQuestionOwnershipTests {
    /// With the picture still (`animate=false`), a member polling `status` while root's
    /// password is typed sees `frames` advance as fast in a second without keys as in a
    /// second with twelve: the field is drawn on the frame clock, not at each key.
    @Test func aMemberCannotCountTheKeysOfAPassword() throws {
        let setup = try Setup(fps: 30)
        let daemon = setup.daemon
        let question = try setup.rootAsks(["ask-for-password", "--prompt=Disk password"])

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = member + ["--", "perl", "-e", statusPoller, daemon.socketPath]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let seen = FramesSeen()
        let reader = Thread {
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            let fd = output.fileHandleForReading.fileDescriptor
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                pending += buffer[..<count]
                while let newline = pending.firstIndex(of: 10) {
                    if let frames = Int(String(decoding: pending[..<newline], as: UTF8.self)) { seen.add(frames) }
                    pending.removeSubrange(...newline)
                }
            }
        }
        reader.start()
        let pollerStarted = monotonicNow() + 30
        while seen.count < 5, monotonicNow() < pollerStarted { usleep(5_000) }

        // A second without keys, then twelve keys at uneven intervals over a second.
        let quietStart = monotonicNow()
        usleep(1_000_000)
        let quietEnd = monotonicNow()
        let typingStart = quietEnd
        for (index, key) in "correcthorse".enumerated() {
            setup.pty.type(String(key))
            usleep(UInt32([40_000, 110_000, 70_000][index % 3]))
        }
        usleep(UInt32(max(0, min(1, 1 - (monotonicNow() - typingStart))) * 1_000_000))
        let typingEnd = monotonicNow()
        usleep(100_000)
        try input.fileHandleForWriting.close()
        process.waitUntilExit()

        let quiet = seen.advance(from: quietStart, to: quietEnd)
        let typing = seen.advance(from: typingStart, to: typingEnd)
        #expect(seen.count > 100, "the member polled status (\(seen.count) replies)")
        #expect(quiet >= 10, "frames advance with no key typed (\(quiet) in the quiet second)")
        #expect(abs(typing - quiet) <= max(6, quiet / 4),
                "12 keys change nothing a member reads: \(quiet) frames in the quiet second, \(typing) while typing")

        setup.pty.type("\r")
        let result = question.finish()
        #expect(result.status == 0 && result.stdout == "correcthorse")
    }

    /// Keys typed right after `plymouth ask-for-password` sent its request, before the
    /// daemon has read it, answer that question; keys typed before the asker connected
    /// do not. Each round is a new connection, as each `plymouth` call is.
    @Test func keysTypedAsTheQuestionArrivesAreItsAnswer() throws {
        let setup = try Setup()
        let daemon = setup.daemon
        var lost: [String] = []
        for round in 0..<40 {
            let fd = try plymouthSocket(inNetworkOf: daemon.pid)
            defer { close(fd) }
            let request = plymouthRequest("*", "Disk password")
            #expect(request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == request.count)
            let answer = "k\(round)"
            setup.pty.type(answer + "\r")
            let reply = readBytes(fd, 5 + answer.utf8.count, within: 3)
            if reply != [0x02, UInt8(answer.utf8.count), 0, 0, 0] + Array(answer.utf8) {
                lost.append("round \(round): \(reply)")
                // A question left waiting (its keys were dropped) is answered to go on.
                if reply.isEmpty {
                    setup.pty.type("\r")
                    _ = readBytes(fd, 5, within: 3)
                }
            }
        }
        #expect(lost.isEmpty, "\(lost.count) of 40 answers lost: \(lost.prefix(5))")

        // Typed before the asker connected: not an answer.
        setup.pty.type("early")
        usleep(100_000)
        let question = try setup.rootAsks(["ask-for-password", "--prompt=Disk password"], count: 41)
        setup.pty.type("late\r")
        let result = question.finish()
        #expect(result.status == 0 && result.stdout == "late", "\(result)")
    }
}

/// Up to `count` bytes, as many as come within `seconds`.
private func readBytes(_ fd: Int32, _ count: Int, within seconds: Double) -> [UInt8] {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: count)
    let deadline = monotonicNow() + seconds
    while bytes.count < count, monotonicNow() < deadline {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, 50) == 1 else { continue }
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, count - bytes.count) }
        guard n > 0 else { break }
        bytes += buffer[..<n]
    }
    return bytes
}
