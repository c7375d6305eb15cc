import Foundation
import GaugeProtocol
import GaugeTranslators
import Testing
import GaugeTestSupport

#if canImport(Glibc)
    import Glibc
#endif

// `gaugectl gauge` and `gaugectl swupdate` as processes, against a fake gauged that
// answers every line, and (for swupdate) a fake SWUpdate progress server.

// gaugectl is found as GaugectlProcessTests finds it (`gaugectlPath`).

/// gauged as far as these commands can tell: answers each line (`ok` unless `answer`
/// says otherwise), over any number of connections, and records the lines. After
/// answering a line in `closingAfter` (and always after `quit`) it closes that
/// connection, as a daemon that stops or restarts does.
private final class FakeGauged: @unchecked Sendable {
    let directory = TemporaryDirectory()
    let path: String
    private let listener: Int32
    private let lock = NSLock()
    private var lines: [String] = []
    private var connectionCount = 0
    private let answer: @Sendable (String) -> String
    private let closingAfter: Set<String>

    init(closingAfter: Set<String> = [], answer: @escaping @Sendable (String) -> String = { _ in "ok" }) {
        path = directory.path + "/gauged.sock"
        listener = listeningSocket(at: path)
        self.answer = answer
        self.closingAfter = closingAfter.union(["quit"])
        Thread { [self] in acceptLoop() }.start()
    }

    var connections: Int { lock.withLock { connectionCount } }

    deinit { close(listener) }

    var received: [String] { lock.withLock { lines } }

    /// Waits until `count` lines came (or 10 s passed).
    func waitFor(_ count: Int) -> [String] {
        let end = Date().addingTimeInterval(10)
        while Date() < end, lock.withLock({ lines.count }) < count { usleep(10_000) }
        return received
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            lock.withLock { connectionCount += 1 }
            Thread { [self] in serve(client) }.start()
        }
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(client, &buffer, buffer.count)
            if count <= 0 { return }
            pending += buffer[..<count]
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeFirst(newline + 1)
                lock.withLock { lines.append(line) }
                writeAll(client, Array((answer(line) + "\n").utf8))
                if closingAfter.contains(line) { return }
            }
        }
    }
}

private struct Finished {
    var status: Int32
    var stderr: String
}

/// Runs gaugectl with `input` on stdin; `pausedInput` follows after `pause` seconds.
private func runGaugectl(
    _ arguments: [String], input: String, pause: Double = 0, pausedInput: String = ""
) throws -> Finished {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: gaugectlPath!)
    process.arguments = arguments
    let stdin = Pipe()
    let stderr = Pipe()
    process.standardInput = stdin
    process.standardOutput = FileHandle.nullDevice
    process.standardError = stderr
    try process.run()
    stdin.fileHandleForWriting.write(Data(input.utf8))
    if pause > 0 {
        usleep(UInt32(pause * 1_000_000))
        stdin.fileHandleForWriting.write(Data(pausedInput.utf8))
    }
    try stdin.fileHandleForWriting.close()
    let errData = stderr.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Finished(status: process.terminationStatus, stderr: String(decoding: errData, as: UTF8.self))
}

@Suite struct GaugeCommandProcessTests {
    @Test func dialogStreamBecomesRequestsOverOneConnection() throws {
        try #require(gaugectlPath != nil, "run swift build --build-tests first")
        let daemon = FakeGauged()
        let input = "0\n10\nXXX\n25\nCopying files\nto /target\nXXX\n\n50\nXXX\n75\nXXX\nXXX\nAlmost done\nXXX\n100"
        let run = try runGaugectl(["--socket", daemon.path, "gauge", "--title", "Installing Debian"], input: input)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr == "")
        #expect(daemon.waitFor(10) == [
            "title Installing Debian",
            "progress 0", "progress 10", "progress 25 Copying files to /target", "progress 50",
            "progress 75", "message", "message Almost done", "progress 100",
            // At EOF the work is done, as when dialog's gauge closes (--on-eof success).
            "state success",
        ])
        #expect(daemon.connections == 1)
    }

    @Test func onEOFKeepSendsNothingMoreAndQuitStopsTheDaemon() throws {
        try #require(gaugectlPath != nil)
        let keeping = FakeGauged()
        var run = try runGaugectl(["--socket", keeping.path, "gauge", "--on-eof", "keep"], input: "10\n20\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(keeping.waitFor(2) == ["progress 10", "progress 20"])

        let quitting = FakeGauged()
        run = try runGaugectl(["--socket", quitting.path, "gauge", "--on-eof=quit"], input: "10\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(quitting.waitFor(2) == ["progress 10", "quit"])

        run = try runGaugectl(["--socket", quitting.path, "gauge", "--on-eof", "close"], input: "")
        #expect(run.status == 2)
        #expect(run.stderr.contains("--on-eof must be success, quit or keep, not 'close'"))
    }

    /// dialog draws `\n` in gauge text as a line break: it reaches the daemon as the
    /// protocol's line break (U+2028); the blanks around it stay for the screen to drop.
    @Test func dialogLineBreaksReachTheDaemon() throws {
        try #require(gaugectlPath != nil)
        let daemon = FakeGauged()
        let input = "XXX\n40\nUnpacking \\n  base files\nXXX\n"
        let run = try runGaugectl(["--socket", daemon.path, "gauge", "--on-eof", "keep"], input: input)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(daemon.waitFor(1) == ["progress 40 Unpacking \u{2028}  base files"])
    }

    /// A daemon that restarts knows nothing of the stream: after reconnecting, gaugectl
    /// sends the title and the message again before the next update.
    @Test func titleAndMessageAreSentAgainAfterAReconnection() throws {
        try #require(gaugectlPath != nil)
        let daemon = FakeGauged(closingAfter: ["progress 50"])
        let run = try runGaugectl(
            ["--socket", daemon.path, "gauge", "--title", "Installing", "--on-eof", "keep"],
            input: "XXX\n40\nCopying\nXXX\n50\n", pause: 0.3, pausedInput: "60\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(daemon.waitFor(6) == [
            "title Installing", "progress 40 Copying", "progress 50",
            "title Installing", "message Copying", "progress 60",
        ])
        #expect(daemon.connections == 2)
    }

    @Test func errRepliesAreReportedAndReadingGoesOn() throws {
        try #require(gaugectlPath != nil)
        let daemon = FakeGauged { $0 == "progress 20" ? "err state the bar is busy" : "ok" }
        let run = try runGaugectl(["--socket", daemon.path, "gauge", "--on-eof", "keep"], input: "10\n20\nnonsense\n30\n")
        #expect(run.status == 1)
        #expect(daemon.waitFor(3) == ["progress 10", "progress 20", "progress 30"])
        #expect(run.stderr.contains("gaugectl: gauge: 'progress 20': state: the bar is busy"))
        #expect(run.stderr.contains("line 3: 'nonsense'"))
    }

    @Test func missingDaemonStillReadsAllInputAndExitsThree() throws {
        try #require(gaugectlPath != nil)
        let directory = TemporaryDirectory()
        // Far more than a pipe holds: the writer must never block or get SIGPIPE.
        let input = (0..<20000).map { "\($0 % 101)\n" }.joined()
        let start = Date()
        // The first update waits its --timeout for a daemon to start, later ones do not.
        let run = try runGaugectl(["--socket", directory.path + "/absent.sock", "--timeout", "1", "gauge"], input: input)
        #expect(run.status == 3)
        #expect(run.stderr.components(separatedBy: "\n").filter { !$0.isEmpty }.count == 1, "\(run.stderr)")
        #expect(run.stderr.contains("after waiting 1 s"), "\(run.stderr)")
        #expect(Date().timeIntervalSince(start) < 5)
    }
}

/// A progress message whose number fields all hold `value` (the API version stays 2.0,
/// else the message is skipped before it is read), with `status` if given.
private func everyField(_ value: UInt32, status: SWUpdateProgressMessage.Status? = nil) -> SWUpdateProgressMessage {
    var message = SWUpdateProgressMessage(
        status: .idle, downloadPercent: value, downloadBytes: UInt64(value) << 32 | UInt64(value), steps: value,
        step: value, stepPercent: value, source: value)
    message.statusCode = status?.rawValue ?? value
    return message
}

/// A progress socket that sends `bytes` random bytes on its first connection, then
/// closes it; later connections are accepted and counted, nothing more.
private final class RandomBytesServer: @unchecked Sendable {
    let directory = TemporaryDirectory()
    let path: String
    private let listener: Int32
    private let lock = NSLock()
    private var connections = 0
    private let sent = DispatchSemaphore(value: 0)

    init(bytes: Int) {
        path = directory.path + "/swupdateprog"
        listener = listeningSocket(at: path)
        Thread { [self] in
            var random = [UInt8](repeating: 0, count: bytes)
            let source = open("/dev/urandom", O_RDONLY)
            var filled = 0
            while filled < bytes {
                let count = random[filled...].withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                filled += count
            }
            close(source)
            var held: [Int32] = []
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { break }
                let first = lock.withLock { () -> Bool in
                    connections += 1
                    return connections == 1
                }
                if first {
                    writeAll(client, random)
                    close(client)
                    sent.signal()
                } else {
                    held.append(client)
                }
            }
            for client in held { close(client) }
        }.start()
    }

    var connectionCount: Int { lock.withLock { connections } }

    func waitUntilSent() -> Bool { sent.wait(timeout: .now() + 60) == .success }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}

/// The peak resident set of process `pid` (VmHWM), in kB.
private func peakResidentKilobytes(of pid: pid_t) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.dropFirst(6).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
    }
    return nil
}

@Suite struct SWUpdateCommandProcessTests {
    @Test func progressMessagesBecomeRequestsAndItReconnects() throws {
        try #require(gaugectlPath != nil)
        let daemon = FakeGauged()
        let swupdate = FakeSWUpdate([
            (.aligned, [
                .init(status: .start, source: 4),
                .init(status: .run, steps: 2, step: 1, stepPercent: 0, image: "rootfs.ext4", handler: "raw"),
                .init(status: .run, steps: 2, step: 1, stepPercent: 50, image: "rootfs.ext4", handler: "raw"),
                // Every field 0xffffffff (once with a RUN status): no request at all.
                everyField(.max), everyField(.max, status: .run),
                .init(status: .run, steps: 2, step: 2, stepPercent: 0, image: "boot.img", handler: "rawfile"),
                .init(status: .run, steps: 2, step: 2, stepPercent: 100, image: "boot.img", handler: "rawfile"),
                .init(status: .success),
                .init(status: .done),
            ]),
            // SWUpdate restarted, now a release with the packed layout.
            (.packed, [
                .init(status: .start),
                .init(status: .download, downloadPercent: 30),
                .init(status: .failure),
            ]),
        ])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: gaugectlPath!)
        // No creeping or stall: the requests are only those the messages make.
        process.arguments = ["--socket", daemon.path, "swupdate", "--progress-socket", swupdate.path, "--creep", "0", "--stall", "0"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let stderr = Pipe()
        process.standardError = stderr
        try process.run()
        let lines = daemon.waitFor(11)
        #expect(process.isRunning, "swupdate runs until killed")
        process.terminate()
        process.waitUntilExit()
        #expect(lines == [
            "progress 0", "state running Update started",
            "message Installing rootfs.ext4 (raw)", "progress 25",
            // The last step at 100 % is not the end: only SUCCESS fills the bar.
            "progress 50 Installing boot.img (rawfile)", "progress 99.9",
            "state success Update successful",
            // One bar per update: the download is its first half.
            "progress 0", "state running Update started",
            "progress 15 Downloading update",
            "state failure Update failed",
        ])
        let log = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(log.contains("closed; reconnecting"), "\(log)")
        #expect(daemon.connections == 1)
    }

    /// 20 MB of random bytes on the progress socket: a few complaints a second and a
    /// count of the rest, in bounded memory; gaugectl goes on (and reconnects).
    @Test func randomBytesMakeFewComplaintsInBoundedMemory() throws {
        try #require(gaugectlPath != nil)
        let daemon = FakeGauged()
        let garbage = RandomBytesServer(bytes: 20 << 20)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: gaugectlPath!)
        process.arguments = ["--socket", daemon.path, "swupdate", "--progress-socket", garbage.path, "--creep", "0", "--stall", "0"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        // stderr into a file: a pipe nobody reads while it fills would block gaugectl.
        let log = garbage.directory.path + "/stderr"
        #expect(FileManager.default.createFile(atPath: log, contents: nil))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        let start = Date()
        try process.run()
        #expect(garbage.waitUntilSent(), "the server sent everything")
        // Until gaugectl has read it all (it reconnects after the close).
        var peak = 0
        while Date().timeIntervalSince(start) < 60 {
            peak = max(peak, peakResidentKilobytes(of: process.processIdentifier) ?? 0)
            if garbage.connectionCount >= 2 { break }
            usleep(20_000)
        }
        let seconds = Date().timeIntervalSince(start)
        process.terminate()
        process.waitUntilExit()
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        let complaints = lines.filter { $0.contains("skipped") || $0.contains("layout") }
        #expect(complaints.count <= 20 + Int(seconds * 2) + 1, "\(complaints.count) complaints in \(seconds) s")
        #expect(lines.contains { $0.hasSuffix("more complaints suppressed") }, "\(lines.prefix(30))")
        #expect(peak < 48 * 1024, "peak RSS \(peak) kB")
    }

    @Test func badLayoutIsAUsageError() throws {
        try #require(gaugectlPath != nil)
        let run = try runGaugectl(["swupdate", "--layout", "sideways"], input: "")
        #expect(run.status == 2)
        #expect(run.stderr.contains("--layout must be auto, packed or aligned"))
    }
}
