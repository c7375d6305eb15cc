import Foundation
import GaugeProtocol
import GaugeRender
import Glibc
import Testing
import GaugeTestSupport

// `gauged --ask`: the real `plymouth` client asks for a password, asks a question and
// watches for a key, against gauged on the memory display; the keys are typed into a
// pty that stands in for the console VT (`--ask-tty`). Both run in a network namespace
// of their own so Plymouth's abstract socket is private to the test.

/// A `plymouth` command running in the daemon's network namespace.
func plymouthRun(_ plymouth: String, daemon: GaugedProcess, _ arguments: [String]) throws -> ChildProgram {
    try ChildProgram("/usr/bin/nsenter", ["--net=/proc/\(daemon.pid)/ns/net", plymouth] + arguments)
}

/// Waits until the daemon reads the pty (non-canonical, no echo).
func waitForRaw(_ pty: TypingPTY, sourceLocation: SourceLocation = #_sourceLocation) {
    let deadline = monotonicNow() + 30
    while pty.isCooked, monotonicNow() < deadline { usleep(2_000) }
    #expect(!pty.isCooked, "keys are read without canonical mode or echo", sourceLocation: sourceLocation)
}

/// Waits until the daemon's log has `text` `count` times.
func waitForLog(_ daemon: GaugedProcess, _ text: String, count: Int = 1, sourceLocation: SourceLocation = #_sourceLocation) {
    let deadline = monotonicNow() + 30
    while daemon.log.components(separatedBy: text).count - 1 < count {
        guard monotonicNow() < deadline else {
            Issue.record("the log never said \(text) \(count) times:\n\(daemon.log)", sourceLocation: sourceLocation)
            return
        }
        usleep(2_000)
    }
}

/// Waits until the daemon's snapshot equals an in-process render of `model` (frozen theme).
private func waitForSnapshot(_ daemon: GaugedProcess, equals model: ScreenModel, sourceLocation: SourceLocation = #_sourceLocation) throws {
    var theme = Theme()
    theme.animate = false
    theme.transitionDuration = 0
    let expected = try renderedFrame(model, theme: theme, width: 320, height: 240)
    let deadline = monotonicNow() + 30
    var differing = Int.max
    while monotonicNow() < deadline {
        let path = daemon.directory.appending("snap-\(UInt32.random(in: 0...UInt32.max)).png")
        #expect(try daemon.request("snapshot \(path)") == "ok", sourceLocation: sourceLocation)
        differing = differingPixels(try PNG.read(path), expected)
        if differing == 0 { return }
        usleep(5_000)
    }
    Issue.record("the snapshot never showed the expected frame (\(differing) pixels differ)", sourceLocation: sourceLocation)
}

private func asking(_ prompt: String, _ field: ScreenModel.Entry.Field) -> ScreenModel {
    var model = settledModel(42, message: "Unlocking disks")
    model.entry = ScreenModel.Entry(prompt: prompt, field: field)
    return model
}

@Suite(.serialized) struct GaugedQuestionTests {
    /// Also the pid file's directory (kept as long as the test holds it).
    private func start(_ extra: [String] = []) throws -> (GaugedProcess, String, TypingPTY, TemporaryDirectory) {
        let plymouth = try DebianPlymouth.require()
        try #require(geteuid() == 0, "a private network namespace needs root")
        let pty = try TypingPTY()
        let directory = TemporaryDirectory()
        let daemon = try GaugedProcess(
            ["--fps", "60", "--plymouth-compat", "--ask", "--ask-tty", pty.slavePath,
             "--plymouth-pid-file", directory.appending("plymouth/pid")] + extra,
            launcher: ["/usr/bin/unshare", "--net"])
        #expect(try daemon.request("theme animate=false transition_duration=0") == "ok")
        return (daemon, plymouth, pty, directory)
    }

    @Test func passwordQuestionAndKeystrokeAreAnsweredFromTheKeyboard() throws {
        let (daemon, plymouth, pty, _) = try start()
        var asked = 0
        func ask(_ arguments: [String]) throws -> ChildProgram {
            let run = try plymouthRun(plymouth, daemon: daemon, arguments)
            asked += 1
            waitForLog(daemon, "waits for the keyboard", count: asked)
            return run
        }

        #expect(try daemon.request("progress 42 Unlocking disks") == "ok")
        try waitForSnapshot(daemon, equals: settledModel(42, message: "Unlocking disks"))

        // A password, edited with Backspace, one bullet per character on screen;
        // nothing typed reaches the log. The tty is read (raw) while the splash shows.
        waitForRaw(pty)
        var run = try ask(["ask-for-password", "--prompt=Disk password"])
        #expect(!pty.isCooked, "keys are read without canonical mode or echo")
        try waitForSnapshot(daemon, equals: asking("Disk password", .hidden(count: 0)))
        pty.type("hunx\u{7F}te")
        try waitForSnapshot(daemon, equals: asking("Disk password", .hidden(count: 5)))
        pty.type("r2\r")
        var result = run.finish()
        #expect(result.status == 0)
        #expect(result.stdout == "hunter2")
        #expect(!daemon.log.contains("hunter2") && !daemon.log.contains("hunx"))
        try waitForSnapshot(daemon, equals: settledModel(42, message: "Unlocking disks"))

        // Ctrl-U clears the field.
        run = try ask(["ask-question", "--prompt=Continue?"])
        pty.type("no")
        try waitForSnapshot(daemon, equals: asking("Continue?", .shown("no")))
        pty.type("\u{15}yes\r")
        result = run.finish()
        #expect(result.status == 0)
        #expect(result.stdout == "yes")

        // A key outside the watched ones is dropped; the first wanted one answers.
        run = try ask(["watch-keystroke", "--keys=yn"])
        pty.type("x")
        pty.type("n")
        result = run.finish()
        #expect(result.status == 0)
        #expect(result.stdout == "n")

        // Escape: no answer, and the client fails.
        run = try ask(["ask-for-password", "--prompt=Disk password"])
        pty.type("abc\u{1B}")
        result = run.finish()
        #expect(result.status != nil && result.status != 0)
        #expect(result.stdout.isEmpty)

        // The daemon still serves, and the next client is answered.
        #expect(try daemon.request("ping") == "ok")
        #expect(try runProgram("/usr/bin/nsenter", ["--net=/proc/\(daemon.pid)/ns/net", plymouth, "--ping"]).status == 0)
    }

    /// Once answered, the passphrase is nowhere in the daemon's memory: not in the typed
    /// field, the reply it built, nor the connection's send buffer.
    @Test func anAnsweredPassphraseLeavesNoCopyInMemory() throws {
        let (daemon, plymouth, pty, _) = try start()
        waitForRaw(pty)
        let secret = "Zq7xKp3wVb9t"
        for round in 0..<3 {
            let run = try plymouthRun(plymouth, daemon: daemon, ["ask-for-password", "--prompt=Disk password"])
            waitForLog(daemon, "waits for the keyboard", count: round + 1)
            pty.type(secret + "\r")
            let result = run.finish()
            #expect(result.status == 0 && result.stdout == secret)
            #expect(try daemon.request("ping") == "ok")
            let copies = try copiesInMemory(of: secret, pid: daemon.pid)
            #expect(copies.isEmpty, "round \(round): copies of the passphrase in gauged's writable memory: \(copies)")
        }
    }

    /// Escape shows the boot's messages so far (and hides them again) while nothing is
    /// asked; a question takes the screen from them and cancels on Escape as before. The
    /// tty is read while the splash shows and given its settings back when it is hidden.
    @Test func escapeTogglesTheDetailsView() throws {
        let (daemon, plymouth, pty, _) = try start()
        #expect(try daemon.request("progress 20 Checking disks") == "ok")
        #expect(try daemon.request("step systemd-udevd.service") == "ok")
        #expect(try daemon.request("message Unlocking disks") == "ok")
        #expect(try daemon.request("progress 42") == "ok")
        let plain = settledModel(42, message: "Unlocking disks")
        try waitForSnapshot(daemon, equals: plain)
        waitForRaw(pty)

        var details = plain
        details.details = ["Checking disks", "systemd-udevd.service", "Unlocking disks"]
        pty.type("\u{1B}")
        try waitForSnapshot(daemon, equals: details)
        // A new message shows in the view at once.
        #expect(try daemon.request("message Mounting /home") == "ok")
        details.message = "Mounting /home"
        details.details?.append("Mounting /home")
        try waitForSnapshot(daemon, equals: details)
        pty.type("\u{1B}")
        var shown = details
        shown.details = nil
        try waitForSnapshot(daemon, equals: shown)

        // A question takes the screen from the details; Escape cancels it, and they return.
        pty.type("\u{1B}")
        try waitForSnapshot(daemon, equals: details)
        let run = try plymouthRun(plymouth, daemon: daemon, ["ask-for-password", "--prompt=Disk password"])
        waitForLog(daemon, "waits for the keyboard")
        var asked = shown
        asked.entry = ScreenModel.Entry(prompt: "Disk password", field: .hidden(count: 0))
        try waitForSnapshot(daemon, equals: asked)
        pty.type("\u{1B}")
        let result = run.finish()
        #expect(result.status != nil && result.status != 0)
        try waitForSnapshot(daemon, equals: details)

        // Hidden, the splash leaves the tty as it found it.
        #expect(try daemon.request("hide") == "ok")
        let deadline = monotonicNow() + 30
        while !pty.isCooked, monotonicNow() < deadline { usleep(2_000) }
        #expect(pty.isCooked, "the tty's settings are restored when the splash leaves")
    }

    /// systemd resets the console to canonical mode when it starts in the real root,
    /// behind the daemon's back: keys would wait for Enter, with no bullet shown. The
    /// next step of the boot, or the next question, makes the tty raw again.
    @Test func aTTYResetToCanonicalModeIsReadRawAgain() throws {
        let (daemon, plymouth, pty, _) = try start()
        #expect(try daemon.request("progress 42 Unlocking disks") == "ok")
        waitForRaw(pty)
        pty.cook()
        #expect(pty.isCooked)
        #expect(try daemon.request("step systemd-journald.service") == "ok")
        waitForRaw(pty)

        pty.cook()
        let run = try plymouthRun(plymouth, daemon: daemon, ["ask-for-password", "--prompt=Disk password"])
        waitForLog(daemon, "waits for the keyboard")
        waitForRaw(pty)
        pty.type("abc")
        try waitForSnapshot(daemon, equals: asking("Disk password", .hidden(count: 3)))
        pty.type("\r")
        let result = run.finish()
        #expect(result.status == 0 && result.stdout == "abc")
    }

    @Test func aQuestionWithdrawnByItsAskerDisappears() throws {
        let (daemon, plymouth, pty, _) = try start()
        // A question shows a splash that was hidden by request.
        #expect(try runProgram("/usr/bin/nsenter", ["--net=/proc/\(daemon.pid)/ns/net", plymouth, "hide-splash"]).status == 0)
        try daemon.waitForStatus { !$0.visible }
        let first = try plymouthRun(plymouth, daemon: daemon, ["ask-for-password", "--prompt=First"])
        waitForLog(daemon, "waits for the keyboard")
        kill(first.process.processIdentifier, SIGKILL)
        _ = first.finish()
        waitForLog(daemon, "its question is withdrawn")
        #expect(try daemon.status().visible)

        let second = try plymouthRun(plymouth, daemon: daemon, ["ask-question", "--prompt=Second"])
        waitForLog(daemon, "waits for the keyboard", count: 2)
        pty.type("ok\r")
        let result = second.finish()
        #expect(result.status == 0 && result.stdout == "ok")
    }

    @Test func thePIDFileTellsSystemdToForwardItsQuestions() throws {
        let (daemon, _, _, directory) = try start()
        let path = directory.appending("plymouth/pid")
        #expect((try? String(contentsOfFile: path, encoding: .utf8)) == "\(daemon.pid)\n")
        #expect(try daemon.request("quit") == "ok")
        #expect(daemon.waitForExit(seconds: 30).flatMap(exitCode) == 0)
        #expect(!FileManager.default.fileExists(atPath: path), "removed on exit")
    }
}

/// A connection to Plymouth's socket in `pid`'s network namespace, made on a thread that
/// enters it (a socket belongs to the namespace it was created in).
func plymouthSocket(inNetworkOf pid: pid_t) throws -> Int32 {
    final class Box: @unchecked Sendable { var fd: Int32 = -1 }
    let box = Box()
    let done = DispatchSemaphore(value: 0)
    Thread {
        defer { done.signal() }
        // setns(2) with CLONE_NEWNET; Glibc's Swift module leaves out the GNU declarations.
        typealias SetNS = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(nil, "setns") else { return }
        let setns = unsafeBitCast(symbol, to: SetNS.self)
        let namespace = open("/proc/\(pid)/ns/net", O_RDONLY)
        guard namespace >= 0, setns(namespace, 0x4000_0000) == 0 else { return }
        close(namespace)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let name = Array("\0/org/freedesktop/plymouthd".utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in name.withUnsafeBytes { raw.copyMemory(from: $0) } }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + name.count)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, length) }
        }
        if connected == 0 { box.fd = fd } else { close(fd) }
    }.start()
    _ = done.wait(timeout: .now() + 30)
    try #require(box.fd >= 0, "cannot connect to Plymouth's socket in the daemon's namespace")
    return box.fd
}

/// Reads exactly `count` bytes (30 s at most).
func readExactly(_ fd: Int32, _ count: Int) -> [UInt8] {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: count)
    while bytes.count < count {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, 30_000) == 1 else { break }
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, count - bytes.count) }
        guard n > 0 else { break }
        bytes += buffer[..<n]
    }
    return bytes
}

extension GaugedQuestionTests {
    /// What systemd's Plymouth agent does: `c` first, then `*` on the same connection when
    /// nothing is cached. Requests sent behind the question wait for its answer; other
    /// clients are served meanwhile.
    @Test func systemdAgentExchangeOnOneConnection() throws {
        let (daemon, plymouth, pty, _) = try start()
        let fd = try plymouthSocket(inNetworkOf: daemon.pid)
        defer { close(fd) }
        func send(_ bytes: [UInt8]) {
            #expect(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
        }
        send(plymouthRequest("c"))
        #expect(readExactly(fd, 1) == [0x05], "nothing cached")
        send(plymouthRequest("*", "Please enter passphrase for disk root:") + plymouthRequest("P"))
        waitForLog(daemon, "waits for the keyboard")
        #expect(try runProgram("/usr/bin/nsenter", ["--net=/proc/\(daemon.pid)/ns/net", plymouth, "--ping"]).status == 0,
                "another client is served while a question waits")
        pty.type("pw\r")
        #expect(readExactly(fd, 8) == [0x02, 2, 0, 0, 0, UInt8(ascii: "p"), UInt8(ascii: "w"), 0x06],
                "the answer, then the ping's ACK that waited behind it")
    }
}
