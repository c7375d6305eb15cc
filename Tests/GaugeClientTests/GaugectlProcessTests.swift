import Foundation
import GaugeProtocol
import Testing
import GaugeTestSupport

#if canImport(Glibc)
    import Glibc
#endif

// Runs the built `gaugectl` binary against a fake daemon on a temporary Unix socket.
// `swift build --build-tests` builds every product, so the binary sits next to the
// test bundle; GAUGECTL overrides where it is looked for. The target's other process
// tests find it here too.

let gaugectlPath = BuiltBinary.gaugectl


private func gaugectl(
    _ arguments: [String], environment: [String: String] = [:], directory: String? = nil
) throws -> ProgramRun {
    let path = try BuiltBinary.require(gaugectlPath, "gaugectl")
    return try runProgram(path, arguments, environment: environment, directory: directory)
}

/// A Unix stream socket bound to `path`; listening unless `listen` is false.
private func boundSocket(at path: String, backlog: Int32 = 8, listen shouldListen: Bool = true) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    precondition(fd >= 0)
    bind(fd, to: path)
    if shouldListen { precondition(listen(fd, backlog) == 0) }
    return fd
}

private func bind(_ fd: Int32, to path: String) {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    precondition(bytes.count < MemoryLayout.size(ofValue: address.sun_path))
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    precondition(bound == 0, "bind failed: \(errno)")
}

/// A stand-in for gauged: accepts one client, reads one line, then answers as told.
private final class FakeDaemon: @unchecked Sendable {
    enum Behaviour {
        /// Send these bytes, then close.
        case reply(String)
        /// Send these bytes after a pause, then close.
        case replyAfter(Double, String)
        /// Keep the connection open without a word until the client leaves.
        case silent
        /// Close right after reading the request.
        case close
    }

    let directory = TemporaryDirectory()
    let path: String
    private let listener: Int32
    private let lock = NSLock()
    private var bytes: [UInt8] = []
    private let finished = DispatchSemaphore(value: 0)

    /// A daemon that is starting: `starting` seconds with no socket file (or, with
    /// `boundEarly`, a socket file that refuses connections) before it listens.
    init(_ behaviour: Behaviour, starting: Double = 0, boundEarly: Bool = false) {
        path = directory.appending("gauged.sock")
        guard starting > 0 else {
            listener = boundSocket(at: path)
            Thread { [self] in serve(behaviour) }.start()
            return
        }
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if boundEarly { bind(listener, to: path) }
        Thread { [self] in
            usleep(UInt32(starting * 1_000_000))
            if !boundEarly { bind(listener, to: path) }
            precondition(listen(listener, 8) == 0)
            serve(behaviour)
        }.start()
    }

    deinit { close(listener) }

    private func serve(_ behaviour: Behaviour) {
        defer { finished.signal() }
        let client = accept(listener, nil, nil)
        guard client >= 0 else { return }
        defer { close(client) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let count = read(client, &buffer, buffer.count)
            if count <= 0 { return }
            lock.withLock { bytes += buffer[..<count] }
            if buffer[..<count].contains(UInt8(ascii: "\n")) { break }
        }
        switch behaviour {
        case .reply(let text):
            _ = text.withCString { send(client, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        case .replyAfter(let seconds, let text):
            usleep(UInt32(seconds * 1_000_000))
            _ = text.withCString { send(client, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        case .silent:
            while read(client, &buffer, buffer.count) > 0 {}
        case .close:
            break
        }
    }

    /// What the client sent, once the exchange is over (or after a few seconds).
    var received: String {
        shutdown(listener, Int32(SHUT_RDWR))  // unblocks accept when no client came
        _ = finished.wait(timeout: .now() + 5)
        return lock.withLock { String(decoding: bytes, as: UTF8.self) }
    }
}

@Suite struct GaugectlProcessTests {
    @Test func binaryIsBuilt() {
        #expect(gaugectlPath != nil, "gaugectl not found; run `swift build --build-tests`")
    }

    @Test func okReplyPayloadGoesToStdout() throws {
        let daemon = FakeDaemon(.reply("ok pong\n"))
        let run = try gaugectl(["--socket", daemon.path, "ping"])
        #expect(run.status == 0)
        #expect(run.stdout == "pong\n")
        #expect(run.stderr == "")
        #expect(daemon.received == "ping\n")
    }

    @Test func sendsExactlyTheRequestLine() throws {
        let daemon = FakeDaemon(.reply("ok\n"))
        let run = try gaugectl(["--socket", daemon.path, "progress", "42", "--message", "hello"])
        #expect(run.status == 0)
        #expect(run.stdout == "")
        #expect(daemon.received == "progress 42 hello\n")
    }

    @Test(arguments: [
        (["progress", "42.50"], "progress 42.5"),
        (["progress", "-m", "Copying files", "7"], "progress 7 Copying files"),
        (["progress", "--message=Grüße 日本語", ".5"], "progress 0.5 Grüße 日本語"),
        (["message"], "message"),
        (["message", "hello", "world"], "message hello world"),
        (["message", "--", "-5 degrees"], "message -5 degrees"),
        // A newline in a message is its line break (U+2028); the line stays one request.
        (["message", "Copying\nfiles"], "message Copying\u{2028}files"),
        (["progress", "5", "-m", "a\r\nb"], "progress 5 a\u{2028}b"),
        (["success", "Disk checked\nSee the log"], "state success Disk checked\u{2028}See the log"),
        // The failure screen's title alone is one request; a newline in it is a space.
        (["failure", "--title", "Disk full\nSee the log"], "failure Disk full See the log"),
        (["wait-ready"], "ping"),
        (["title", "Installing Debian"], "title Installing Debian"),
        (["title", ""], "title "),
        (["mode", "indeterminate"], "mode indeterminate"),
        (["success", "All", "done"], "state success All done"),
        (["failure"], "failure"),
        (["running", "again"], "state running again"),
        (["theme", "fill_color=#ff8800", "message_font=DejaVu Sans"], "theme fill_color=#ff8800 message_font=\"DejaVu Sans\""),
        (["reload"], "reload"),
        (["show"], "show"),
        (["hide"], "hide"),
        (["status", "--json"], "status"),
        (["wait"], "wait"),
        (["quit"], "quit"),
        (["quit", "--retain"], "quit retain"),
        (["send", "progress", "400"], "progress 400"),
        (["send", "--", "--weird"], "--weird"),
    ])
    func commandsBecomeTheirLines(arguments: [String], line: String) throws {
        let daemon = FakeDaemon(.reply("ok\n"))
        let run = try gaugectl(["--socket", daemon.path] + arguments)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(daemon.received == line + "\n")
    }

    @Test func socketComesFromTheEnvironmentAndOptionsMayUseEquals() throws {
        let daemon = FakeDaemon(.reply("ok\n"))
        let run = try gaugectl(["--timeout=2", "show"], environment: ["GAUGE_SOCKET": daemon.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(daemon.received == "show\n")

        let second = FakeDaemon(.reply("ok\n"))
        let overridden = try gaugectl(
            ["--socket=\(second.path)", "hide"], environment: ["GAUGE_SOCKET": "/nonexistent/socket"])
        #expect(overridden.status == 0, "\(overridden.stderr)")
        #expect(second.received == "hide\n")
    }

    /// gaugectl opens the file itself (relative to its own directory) and passes it with
    /// `snapshot -`; the daemon never sees the path.
    @Test func snapshotOpensTheFileItselfAndPassesIt() throws {
        let daemon = FakeDaemon(.reply("ok\n"))
        let work = TemporaryDirectory()
        let run = try gaugectl(["--socket", daemon.path, "snapshot", "./frame.png"], directory: work.path)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(daemon.received == "snapshot -\n")
        #expect(access(work.path + "/frame.png", F_OK) == 0, "the file gaugectl created stays after ok")
    }

    /// On `err` a file gaugectl created goes again; one that was there keeps its bytes.
    @Test func snapshotErrorRemovesOnlyAFileGaugectlCreated() throws {
        let work = TemporaryDirectory()
        let daemon = FakeDaemon(.reply("err io disk full\n"))
        var run = try gaugectl(["--socket", daemon.path, "snapshot", "new.png"], directory: work.path)
        #expect(run.status == 1, "\(run.stderr)")
        #expect(access(work.path + "/new.png", F_OK) != 0, "the file gaugectl created is removed")

        let existing = work.path + "/old.png"
        try #require(FileManager.default.createFile(atPath: existing, contents: Data("keep".utf8)))
        let second = FakeDaemon(.reply("err io disk full\n"))
        run = try gaugectl(["--socket", second.path, "snapshot", existing])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(FileManager.default.contents(atPath: existing) == Data("keep".utf8), "an existing file is left as it was")
    }

    @Test func errReplyExitsOneWithTheMessageOnStderr() throws {
        let daemon = FakeDaemon(.reply("err range progress value 400 is outside 0...100\n"))
        let run = try gaugectl(["--socket", daemon.path, "send", "progress 400"])
        #expect(run.status == 1)
        #expect(run.stdout == "")
        #expect(run.stderr == "gaugectl: range: progress value 400 is outside 0...100\n")
    }

    @Test func statusIsShownAsTextOrAsJSON() throws {
        let status = Status(
            target: 42.5, shown: 40, message: "Copying \"files\"", title: "Installing",
            display: .init(name: "memory", width: 800, height: 600, format: "xrgb8888"), clients: 1)
        let daemon = FakeDaemon(.reply(Reply.ok(status.json()).encoded))
        let text = try gaugectl(["--socket", daemon.path, "status"])
        #expect(text.status == 0)
        #expect(text.stdout == status.humanReadable + "\n")

        let jsonDaemon = FakeDaemon(.reply(Reply.ok(status.json()).encoded))
        let json = try gaugectl(["--socket", jsonDaemon.path, "status", "--json"])
        #expect(json.status == 0)
        #expect(json.stdout == status.json() + "\n")
        #expect(Status.parse(json: String(json.stdout.dropLast())) == status)
    }

    @Test(arguments: [
        [], ["frobnicate"], ["progress"], ["progress", "4x"], ["progress", "150"], ["progress", "-1"],
        ["progress", "NaN"], ["progress", "1e2"], ["progress", "42", "extra"], ["progress", "42", "--message"],
        ["mode"], ["mode", "sideways"], ["title"], ["theme", "novalue"], ["theme", "bad key=1"],
        ["snapshot"], ["ping", "extra"], ["status", "--verbose"], ["quit", "now"], ["send"],
        ["send", "two\nlines"], ["title", "a\nb"], ["message", "a\u{1}b"], ["message", "--bogus"],
        ["status", "--socket", "/x"], ["gauge", "--on-eof", "never"], ["--no-wait=1", "ping"], ["ping", "--no-wait"],
        ["--timeout", "abc", "ping"], ["--timeout", "-1", "ping"], ["--timeout"], ["--socket"],
        ["--bogus", "ping"], ["help", "frobnicate"], ["quit", "--retain=yes"],
        ["bootc", "--fd", "+3"], ["bootc", "--fd", "x", "--", "true"], ["bootc", "--fd", "-0", "--", "true"],
    ] as [[String]])
    func usageErrorsExitTwo(arguments: [String]) throws {
        let run = try gaugectl(["--socket", "/nonexistent/gauged.sock"] + arguments)
        #expect(run.status == 2, "\(arguments): \(run.stderr)")
        #expect(run.stderr.hasPrefix("gaugectl: "))
        #expect(run.stderr.contains("--help"))
        #expect(run.stdout == "")
    }

    @Test(arguments: [
        ["--help"], ["-h"], ["progress", "--help"], ["status", "-h"], ["help"], ["help", "theme"],
        ["--version"], ["send", "--help"], ["--socket", "/x", "quit", "--help"],
    ] as [[String]])
    func helpAndVersionExitZero(arguments: [String]) throws {
        let run = try gaugectl(arguments)
        #expect(run.status == 0)
        #expect(!run.stdout.isEmpty)
        #expect(run.stderr == "")
    }

    @Test func overviewListsEveryCommandAndTheCompletionKnowsThem() throws {
        let run = try gaugectl(["--help"])
        let section = run.stdout.components(separatedBy: "Commands:\n")[1].components(separatedBy: "\n\n")[0]
        // A command's line starts with two spaces; its description's wrapped lines with more.
        let commands = section.split(separator: "\n").filter { !$0.hasPrefix("   ") }.map { $0.split(separator: " ")[0] }
        #expect(commands.count >= 18)
        let completion = try String(
            contentsOf: repositoryRoot.appendingPathComponent("integration/completion/gaugectl.bash"), encoding: .utf8)
        let line = completion.split(separator: "\n").first { $0.contains("local commands=") }
        for command in commands {
            #expect(line?.contains(" \(command)") == true || line?.contains("\"\(command) ") == true, "\(command)")
            let help = try gaugectl([String(command), "--help"])
            #expect(help.status == 0, "\(command)")
        }
    }

    // MARK: exit 3: no daemon, within the timeout

    @Test func missingSocketIsWaitedForUntilTheTimeoutThenExitsThree() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("absent.sock")
        let run = try gaugectl(["--socket", path, "--timeout", "0.5", "progress", "5"])
        #expect(run.status == 3)
        #expect(run.stderr == "gaugectl: no daemon on \(path) yet; waiting up to 0.5 s (--timeout) for one to start\n"
            + "gaugectl: no daemon socket at \(path) after waiting 0.5 s (is gauged running?)\n")
        #expect(run.seconds >= 0.45 && run.seconds < 2, "exit 3 only once the timeout has passed: \(run.seconds) s")
    }

    @Test func missingSocketWithNoWaitExitsThreeAtOnce() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("absent.sock")
        let run = try gaugectl(["--socket", path, "--timeout", "5", "--no-wait", "ping"])
        #expect(run.status == 3)
        #expect(run.stderr == "gaugectl: no daemon socket at \(path) (is gauged running?)\n")
        #expect(run.seconds < 2)
    }

    @Test func socketNobodyListensOnIsWaitedForThenExitsThree() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("stale.sock")
        close(boundSocket(at: path, listen: false))  // a stale socket file, as after a crash
        var run = try gaugectl(["--socket", path, "--timeout", "0.5", "ping"])
        #expect(run.status == 3)
        #expect(run.stderr == "gaugectl: no daemon on \(path) yet; waiting up to 0.5 s (--timeout) for one to start\n"
            + "gaugectl: no daemon listening on \(path) after waiting 0.5 s (connection refused)\n")
        #expect(run.seconds >= 0.45 && run.seconds < 2)
        run = try gaugectl(["--socket", path, "--timeout", "5", "--no-wait", "ping"])
        #expect(run.status == 3)
        #expect(run.stderr.contains("refused"))
        #expect(run.seconds < 2)
    }

    /// `gauged ... & gaugectl ...`: the request waits for the daemon to come up, whether
    /// its socket file does not exist yet or exists but is not listening yet.
    @Test(arguments: [false, true])
    func requestWaitsForADaemonThatIsStarting(boundEarly: Bool) throws {
        let daemon = FakeDaemon(.reply("ok\n"), starting: 0.3, boundEarly: boundEarly)
        let run = try gaugectl(["--socket", daemon.path, "title", "Installing"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.seconds >= 0.25)
        #expect(daemon.received == "title Installing\n")
    }

    /// The wait for a socket file not made yet is the kernel's (inotify on its folder): no
    /// timer wakes the client meanwhile, and it connects as the file arrives.
    @Test func aClientWaitingForTheSocketFileSleepsUntilItIsMade() throws {
        let daemon = FakeDaemon(.reply("ok\n"), starting: 1.5)
        let client = Process()
        client.executableURL = URL(fileURLWithPath: try BuiltBinary.require(gaugectlPath, "gaugectl"))
        client.arguments = ["--socket", daemon.path, "--timeout", "10", "ping"]
        try client.run()
        usleep(1_000_000)
        let status = (try? String(contentsOfFile: "/proc/\(client.processIdentifier)/status", encoding: .utf8)) ?? ""
        let switches = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
            .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }
        client.waitUntilExit()
        #expect(client.terminationStatus == 0)
        #expect(daemon.received == "ping\n")
        // A timer every 50 ms would have woken it about 18 times by then; the few
        // allowed are its start's (the loader, a page read from disk on a loaded machine).
        #expect(switches != nil && switches! <= 8, "\(status)")
    }

    @Test func waitReadyWaitsEvenWithNoWait() throws {
        let daemon = FakeDaemon(.reply("ok\n"), starting: 0.3)
        let run = try gaugectl(["--socket", daemon.path, "--no-wait", "wait-ready"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "" && run.stderr == "")
        #expect(daemon.received == "ping\n")
    }

    /// What gauged.service's ExecCondition asks at boot: with no daemon the answer comes
    /// at once, not after the timeout.
    @Test func pingAbsentAnswersAtOnceWhenNothingListens() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("absent.sock")
        var run = try gaugectl(["--socket", path, "--timeout", "5", "ping", "--absent"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr == "")
        #expect(run.seconds < 2)
        close(boundSocket(at: path, listen: false))
        run = try gaugectl(["--socket", path, "--timeout", "5", "ping", "--absent"])
        #expect(run.status == 0 && run.seconds < 2, "\(run.stderr)")
    }

    @Test func silentDaemonTimesOutWithExitThree() throws {
        let daemon = FakeDaemon(.silent)
        let run = try gaugectl(["--socket", daemon.path, "--timeout", "0.5", "wait"])
        #expect(run.status == 3)
        #expect(run.stderr.contains(daemon.path))
        #expect(run.stderr.contains("timed out"))
        #expect(run.seconds >= 0.45)
        #expect(run.seconds < 2)
        #expect(daemon.received == "wait\n")
    }

    @Test func listenerThatNeverAcceptsTimesOutWithExitThree() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("busy.sock")
        let listener = boundSocket(at: path, backlog: 0)
        defer { close(listener) }
        // Fill the backlog with clients nobody accepts.
        var fillers: [Int32] = []
        defer { fillers.forEach { close($0) } }
        for _ in 0..<4 {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                raw.copyBytes(from: Array(path.utf8))
            }
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            fillers.append(fd)
        }
        let run = try gaugectl(["--socket", path, "--timeout", "0.5", "ping"])
        #expect(run.status == 3)
        #expect(run.stderr.contains("timed out after 0.5 s connecting to \(path)"))
        #expect(run.seconds < 2)
    }

    @Test func daemonClosingWithoutReplyExitsThree() throws {
        let daemon = FakeDaemon(.close)
        let run = try gaugectl(["--socket", daemon.path, "--timeout", "2", "ping"])
        #expect(run.status == 3)
        #expect(run.stderr.contains("without a reply"))
        #expect(daemon.received == "ping\n")
    }

    @Test func somethingElseOnTheSocketExitsThree() throws {
        let daemon = FakeDaemon(.reply("HTTP/1.1 400 Bad Request\r\n"))
        let run = try gaugectl(["--socket", daemon.path, "ping"])
        #expect(run.status == 3)
        #expect(run.stderr == "gaugectl: \(daemon.path) sent something that is not a gauged reply: 'HTTP/1.1 400 Bad Request '\n")
    }

    @Test func timeoutZeroWaitsAsLongAsItTakes() throws {
        let daemon = FakeDaemon(.replyAfter(0.4, "ok\n"))
        let run = try gaugectl(["--socket", daemon.path, "--timeout", "0", "wait"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.seconds >= 0.35)
    }
}
