import Foundation
import GaugeProtocol
import Glibc
import Testing
import GaugeTestSupport

// Abuse against the real gauged: idle connections of a group member, silent
// connections, a pipelined batch, a flooded psplash FIFO, Plymouth's message list, and
// two daemons started at once. After each, the daemon's descriptors are back to where
// they started.

/// The number of descriptors `pid` has open.
private func descriptorCount(_ pid: pid_t) -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
}

/// The daemon's descriptor count once it is at least `minimum` and no longer changes
/// between five looks 20 ms apart (accepting and refusing connections takes loop turns,
/// which a loaded machine spreads out).
private func settledDescriptorCount(of pid: pid_t, atLeast minimum: Int = 0) -> Int {
    var counts = [descriptorCount(pid)]
    let deadline = monotonicNow() + 30
    while monotonicNow() < deadline {
        usleep(20_000)
        counts.append(descriptorCount(pid))
        if counts.last! >= minimum, counts.suffix(5).count == 5, Set(counts.suffix(5)).count == 1 { break }
    }
    return counts.last!
}

/// The daemon's descriptor count once the connections of its start-up have been closed.
private func settledDescriptorCount(_ daemon: GaugedProcess) -> Int {
    settledDescriptorCount(of: daemon.pid)
}

/// Expects the daemon to get back to `baseline` descriptors (it closes what it was
/// left with as its clients go, which takes a few loop turns).
private func expectDescriptors(
    of daemon: GaugedProcess, backTo baseline: Int, sourceLocation: SourceLocation = #_sourceLocation
) {
    let deadline = monotonicNow() + 30
    var count = descriptorCount(daemon.pid)
    while count != baseline, monotonicNow() < deadline {
        usleep(10_000)
        count = descriptorCount(daemon.pid)
    }
    #expect(count == baseline, "descriptors: \(count), at the start \(baseline)", sourceLocation: sourceLocation)
}

/// A program run in the background with a pipe on its standard input (closing it ends
/// the program) and one on its standard output.
private final class BackgroundProgram {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()

    init(_ path: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
    }

    /// The first line it prints.
    func firstLine() -> String {
        var bytes: [UInt8] = []
        while let byte = try? output.fileHandleForReading.read(upToCount: 1), let first = byte.first, first != 10 {
            bytes.append(first)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    func finish() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

/// Perl (perl-base is in every Debian system) holding `count` connections to `path`
/// (`@name`: the abstract namespace) until its standard input closes; prints how many
/// it made.
private let holdConnections = """
    use IO::Socket::UNIX; $| = 1;
    my ($path, $count) = @ARGV; my @held;
    $path =~ s/^@/\\0/;
    for (1 .. $count) {
        my $c = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path) or last;
        push @held, $c;
    }
    print scalar(@held), "\\n";
    <STDIN>;
    """

/// Perl sending Plymouth requests (hex-encoded frames in ARGV) on one connection to
/// the daemon's abstract socket and reading one answer byte per request; prints the
/// answers as a string of A (ACK) and N (NAK).
private let plymouthClient = """
    use IO::Socket::UNIX; $| = 1;
    my $c = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => "\\0/org/freedesktop/plymouthd") or die "connect: $!";
    my $answers = "";
    for my $hex (@ARGV) {
        print $c pack("H*", $hex);
        my $n = sysread($c, my $byte, 1);
        last unless $n;
        $answers .= $byte eq "\\x06" ? "A" : "N";
    }
    print "$answers\\n";
    """

private func plymouthFrame(_ command: Character, _ text: String) -> String {
    let bytes = [command.asciiValue!, 0x02, UInt8(text.utf8.count + 1)] + Array(text.utf8) + [0]
    return bytes.map { String(format: "%02x", $0) }.joined()
}

@Suite struct GaugedAbuseTests {
    /// A group member's idle connections fill every slot it may take; root keeps the
    /// reserve, and everything is released when the member goes.
    @Test(.enabled(if: geteuid() == 0, "runs a group member through setpriv"))
    func idleConnectionsOfAMemberDoNotLockRootOut() throws {
        let directory = TemporaryDirectory()
        chmod(directory.path, 0o755)
        let daemon = try GaugedProcess(["--group", "users", "--max-clients", "64"], socketPath: directory.appending("gauged.sock"))
        let baseline = settledDescriptorCount(daemon)

        let member = try BackgroundProgram(
            "/usr/bin/setpriv",
            ["--reuid=nobody", "--regid=users", "--clear-groups", "--", "perl", "-e", holdConnections, daemon.socketPath, "80"])
        #expect(member.firstLine() == "80", "the member connected 80 times (the kernel accepts; the daemon refuses)")
        // The member holds every slot but the reserve: 60, plus root's own `status`.
        let full = try daemon.waitForStatus { $0.clients == 61 }
        #expect(full.clients == 61)
        #expect(try daemon.request("ping") == "ok", "root is served with the member's 60 connections open")
        let refused = try gaugectl(["--socket", daemon.socketPath, "--timeout", "2", "ping"],
                                   asUser: ["--reuid=nobody", "--regid=users", "--clear-groups"])
        #expect(refused.status == 1 && refused.stderr.contains("too many clients"), "\(refused.stderr)")

        member.finish()
        try daemon.waitForStatus { $0.clients == 1 }
        expectDescriptors(of: daemon, backTo: baseline)
    }

    /// Connections that go silent are closed after --idle-timeout, whether they spoke
    /// before or never did.
    @Test func silentConnectionsAreClosedAfterTheIdleTimeout() throws {
        // One second: long enough that a loaded machine does not close the speaking
        // connection before its ping arrives.
        let daemon = try GaugedProcess(["--idle-timeout", "1"])
        let baseline = settledDescriptorCount(daemon)
        let spoke = try daemon.connect()
        #expect(try spoke.request("ping") == "ok")
        let silent = try (0..<8).map { _ in try daemon.connect() }
        for connection in silent + [spoke] {
            #expect(try connection.readLine() == nil, "the daemon closed the idle connection")
        }
        #expect(daemon.log.contains("idle for 1 s, closed"), "\(daemon.log)")
        expectDescriptors(of: daemon, backTo: baseline)
    }

    /// One client's 100 pipelined snapshots against another client's ping: the ping is
    /// answered while the batch is still being worked through, not after it.
    @Test func aPipelinedBatchDoesNotHoldAnotherClient() throws {
        let daemon = try GaugedProcess(display: "memory:640x480")
        let baseline = settledDescriptorCount(daemon)
        let batch = try daemon.connect(timeout: 60)
        let target = daemon.directory.appending("shot.png")
        try batch.send(String(repeating: "snapshot \(target)\n", count: 100))
        // The first reply, read byte for byte so that later ones stay in the socket.
        var first = [UInt8](repeating: 0, count: 3)
        #expect(recv(batch.fd, &first, 3, Int32(MSG_WAITALL)) == 3 && first == Array("ok\n".utf8), "the batch has started")

        let other = try daemon.connect()
        #expect(try other.request("ping") == "ok")
        // What the batch client has received by the time the ping was answered.
        var waiting = 0
        #expect(ioctl(batch.fd, UInt(FIONREAD), &waiting) == 0)
        let repliesSoFar = waiting / 3  // "ok\n"
        #expect(repliesSoFar < 99, "the ping waited for \(repliesSoFar) of the 99 remaining snapshots")

        for _ in 1..<100 { #expect(try batch.readLine() == "ok") }
        batch.close()
        other.close()
        expectDescriptors(of: daemon, backTo: baseline)
    }

    /// A writer flooding the psplash FIFO with bad commands neither stalls the native
    /// socket nor floods the log: bad-input lines are rate-limited, with a count of what
    /// was held back, and carry one `psplash:` prefix.
    @Test func aFloodedPsplashFIFODoesNotStallTheSocketOrFloodTheLog() throws {
        let directory = TemporaryDirectory()
        let fifo = directory.appending("psplash_fifo")
        let daemon = try GaugedProcess(["--psplash-fifo", fifo])
        let baseline = settledDescriptorCount(daemon)

        let writer = open(fifo, O_WRONLY | O_CLOEXEC)
        try #require(writer >= 0)
        let flood = FloodWriter(fd: writer, chunk: Array(String(repeating: "BOGUS flood\n", count: 5000).utf8))
        flood.start()
        // At least 4 MB, and until a refilled token brings out the suppressed count: a fast
        // build reads 4 MB before the bucket gives the source its next line.
        let deadline = monotonicNow() + 60
        while flood.written < 4 << 20 || !daemon.log.contains("lines suppressed"), monotonicNow() < deadline {
            usleep(1_000)
        }

        for _ in 0..<5 { #expect(try daemon.request("ping") == "ok", "served during the flood") }
        flood.stop()
        close(writer)

        let written = flood.written
        let lines = daemon.log.split(separator: "\n").filter { $0.contains("psplash") }
        #expect(written > 4 << 20)
        #expect(lines.count < 100, "\(lines.count) log lines for \(written / 12) bad commands")
        #expect(lines.contains { $0.contains("lines suppressed") })
        #expect(!daemon.log.contains("psplash: psplash:"))
        #expect(lines.contains { $0.hasPrefix("gauged: psplash: unknown command 'BOGUS flood'") })
        expectDescriptors(of: daemon, backTo: baseline)
    }

    /// Plymouth's list of displayed messages keeps the newest 32: after 100 messages,
    /// hiding the newest 32 leaves nothing to show (an unbounded list would show "m67").
    @Test func plymouthsMessageListIsBoundedAndItsLogLinesHaveOnePrefix() throws {
        let daemon = try GaugedProcess(["--plymouth-compat"], launcher: ["/usr/bin/unshare", "--net"])
        let baseline = settledDescriptorCount(daemon)
        var frames = (0..<100).map { plymouthFrame("M", "m\($0)") }
        frames += (68..<100).reversed().map { plymouthFrame("m", "m\($0)") }
        frames.append("5a00")  // an unknown request: NAK and one log line
        let run = try runProgram("/usr/bin/nsenter", ["--net=/proc/\(daemon.pid)/ns/net", "perl", "-e", plymouthClient] + frames)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == String(repeating: "A", count: frames.count - 1) + "N\n")
        let status = try daemon.status()
        #expect(status.message == "", "the 32 kept were all hidden")
        #expect(daemon.log.contains("gauged: plymouth: unknown request 0x5A\n"), "\(daemon.log)")
        #expect(!daemon.log.contains("plymouth: plymouth:"))
        expectDescriptors(of: daemon, backTo: baseline)
    }

    /// Any local user can reach Plymouth's abstract socket: an outsider holding
    /// connections gets the slots but the reserve, and root's `plymouth` still gets in.
    @Test(.enabled(if: geteuid() == 0, "runs an outsider through setpriv"))
    func anOutsiderCannotTakeEveryPlymouthSlot() throws {
        let daemon = try GaugedProcess(["--plymouth-compat"], launcher: ["/usr/bin/unshare", "--net"])
        let baseline = settledDescriptorCount(daemon)
        let outsider = try BackgroundProgram(
            "/usr/bin/nsenter",
            ["--net=/proc/\(daemon.pid)/ns/net", "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--",
             "perl", "-e", holdConnections, "@/org/freedesktop/plymouthd", "30"])
        #expect(outsider.firstLine() == "30")
        #expect(settledDescriptorCount(of: daemon.pid, atLeast: baseline + 12) == baseline + 12,
                "the outsider holds 12 of the 16 slots")
        let run = try runProgram(
            "/usr/bin/nsenter", ["--net=/proc/\(daemon.pid)/ns/net", "perl", "-e", plymouthClient, "5000"])
        #expect(run.stdout == "A\n", "root's ping is answered: \(run.stdout) \(run.stderr)")
        outsider.finish()
        expectDescriptors(of: daemon, backTo: baseline)
    }

    /// Two daemons started at the same moment on one socket path: exactly one survives
    /// and answers; the other says why and exits with status 1. Twenty times.
    @Test func twoDaemonsStartedTogetherLeaveExactlyOne() throws {
        let directory = TemporaryDirectory()
        let socket = directory.appending("gauged.sock")
        for round in 0..<20 {
            let first = try GaugedProcess(display: "none", socketPath: socket, waitForPing: false)
            let second = try GaugedProcess(display: "none", socketPath: socket, waitForPing: false)
            var loser: GaugedProcess?
            var status: Int32?
            let deadline = monotonicNow() + 30
            while loser == nil, monotonicNow() < deadline {
                for daemon in [first, second] {
                    if let exit = daemon.waitForExit(seconds: 0.005) {
                        loser = daemon
                        status = exit
                        break
                    }
                }
            }
            let winner = loser === first ? second : first
            try #require(loser != nil, "round \(round): both daemons are still running")
            #expect(exitCode(status!) == 1, "round \(round)")
            #expect(loser!.log.contains("already"), "round \(round): \(loser!.log)")
            #expect(winner.waitForExit(seconds: 0) == nil, "round \(round): the winner runs")
            try winner.waitUntilAnswering()
            #expect(try winner.request("ping") == "ok", "round \(round)")
            winner.kill()
        }
    }
}

/// Writes the same chunk to a descriptor from a thread of its own until stopped.
private final class FloodWriter: @unchecked Sendable {
    private let fd: Int32
    private let chunk: [UInt8]
    private let lock = NSLock()
    private var stopping = false
    private var total = 0
    private let done = DispatchSemaphore(value: 0)

    init(fd: Int32, chunk: [UInt8]) {
        self.fd = fd
        self.chunk = chunk
    }

    var written: Int { lock.withLock { total } }

    func start() {
        Thread { [self] in
            defer { done.signal() }
            while !lock.withLock({ stopping }) {
                let count = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                if count < 0 { return }
                lock.withLock { total += count }
            }
        }.start()
    }

    func stop() {
        lock.withLock { stopping = true }
        done.wait()
    }
}
