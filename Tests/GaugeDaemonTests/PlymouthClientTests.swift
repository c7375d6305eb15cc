import Foundation
import GaugeProtocol
import GaugeSystem
import Testing

@testable import GaugeDaemon
import GaugeTestSupport

#if canImport(Glibc)
    import Glibc
#endif

// Runs Debian's real `plymouth` command (DebianPlymouth: unpacked by tools/install-deps), and
// Gauge's own (the executable called `plymouth`), against a listener bound as the daemon
// binds it + PlymouthSession on the abstract socket /org/freedesktop/plymouthd: both must
// send the same requests and exit with the same statuses. Abstract names are per network
// namespace: if a plymouthd (or another run of this test) holds the name, the bind fails
// and the test says so.

/// A Plymouth server on a thread: accepts connections one at a time, feeds each a
/// session, writes the session's answers back and records the requests.
private final class FakePlymouthd: @unchecked Sendable {
    private let listener: ListeningSocket
    private let lock = NSLock()
    private var recorded: [Request] = []
    private var stopping = false
    private let stopped = DispatchSemaphore(value: 0)

    init() throws {
        listener = try ListeningSocket.bind(path: "@/org/freedesktop/plymouthd", backlog: 16)
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    func stop() {
        lock.withLock { stopping = true }
        _ = stopped.wait(timeout: .now() + 5)
        listener.close()
    }

    /// The requests recorded since the last call.
    func takeRequests() -> [Request] {
        lock.withLock {
            defer { recorded.removeAll() }
            return recorded
        }
    }

    private func serve() {
        defer { stopped.signal() }
        var messages = PlymouthMessages()
        while !lock.withLock({ stopping }) {
            var entry = pollfd(fd: listener.fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 50) == 1, let client = try? Syscall.accept(listener.fd) else { continue }
            var session = PlymouthSession()
            var buffer = [UInt8](repeating: 0, count: 512)
            connection: while true {
                var waiting = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
                guard poll(&waiting, 1, 5000) == 1 else { break }
                let count = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
                if count < 0 && Glibc.errno == EAGAIN { continue }
                guard count > 0 else { break connection }
                let output = session.consume(buffer[..<count], messages: &messages)
                // Recorded before answering: the client exits on its answer.
                lock.withLock { recorded += output.requests }
                _ = output.reply.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            close(client)
        }
    }
}

private struct Outcome {
    var status: Int32
    var seconds: Double
    var output: String
}

/// Gauge's executable under the name `plymouth` (kept for the test run).
let gaugePlymouthPath: String? = {
    guard let gauged = BuiltBinary.gauged else { return nil }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gauge-plymouth-\(getpid())")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let link = directory.appendingPathComponent("plymouth").path
    try? FileManager.default.removeItem(atPath: link)
    guard (try? FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: gauged)) != nil else { return nil }
    return link
}()

private func plymouth(_ arguments: [String], binary: String, launcher: [String] = []) throws -> Outcome {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: launcher.first ?? binary)
    process.arguments = launcher.isEmpty ? arguments : Array(launcher.dropFirst()) + [binary] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    process.standardInput = FileHandle.nullDevice
    let start = Date()
    try process.run()
    // plymouth never hangs on our answers; if it did, this kills it after 10 s.
    let deadline = Date().addingTimeInterval(10)
    while process.isRunning && Date() < deadline { usleep(5_000) }
    if process.isRunning { process.terminate() }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Outcome(
        status: process.terminationStatus, seconds: Date().timeIntervalSince(start),
        output: String(decoding: data, as: UTF8.self))
}

@Suite(.serialized) struct PlymouthClientTests {
    @Test func realPlymouthCommandDrivesTheTranslator() throws {
        let debian = try DebianPlymouth.require()
        let server: FakePlymouthd
        do {
            server = try FakePlymouthd()
        } catch {
            Issue.record("cannot listen on @/org/freedesktop/plymouthd (\(error)); is a plymouthd running in this network namespace? Run the tests under `unshare -n` or stop it.")
            return
        }
        defer { server.stop() }

        let cases: [([String], Int32, [Request])] = [
            (["--ping"], 0, []),
            (["display-message", "--text=hi"], 0, [.message("hi")]),
            (["system-update", "--progress=42"], 0, [.progress(42, message: nil)]),
            (["update", "--status=fsck"], 0, [.step("fsck")]),
            // An update mode's own bar, its line the message shown and the warning (PlymouthUpdatesTests).
            (["change-mode", "--updates"], 0, [.title("Installing updates"), .progress(0, message: "hi Do not turn off the computer.")]),
            (["change-mode", "--boot-up"], 0, [.title("")]),
            (["hide-message", "--text=hi"], 0, [.message("")]),
            (["show-splash"], 0, [.show]),
            (["hide-splash"], 0, [.hide]),
            (["pause-progress"], 0, []),
            (["unpause-progress"], 0, []),
            (["--sysinit"], 0, []),
            (["--newroot=/sysroot"], 0, [.newRoot(path: "/sysroot")]),
            (["update-root-fs", "--new-root-dir=/root"], 0, [.newRoot(path: "/root")]),
            (["deactivate"], 0, [.deactivate]),
            (["reactivate"], 0, [.reactivate]),
            (["--has-active-vt"], 1, []),
            (["quit", "--retain-splash"], 0, [.quit(retain: true)]),
            (["quit"], 0, [.quit(retain: false)]),
            (["ask-for-password"], 1, []),
            (["ask-for-password", "--prompt=Passphrase"], 1, []),
            (["ask-question", "--prompt=Continue?"], 1, []),
            (["watch-keystroke", "--keys=yn"], 1, []),
        ]
        let gauge = try #require(gaugePlymouthPath, "Gauge's executable is not built")
        // Each command runs the whole table (the message list carries over between rows).
        for binary in [debian, gauge] {
            for (arguments, status, requests) in cases {
                // Gauge's asks on the console where the daemon refuses: tested with a
                // terminal in GaugedConsoleQuestionTests.
                if binary == gauge, arguments.first?.hasPrefix("ask-") == true { continue }
                let outcome = try plymouth(arguments, binary: binary)
                #expect(outcome.status == status, "\(binary) \(arguments): \(outcome.output)")
                #expect(outcome.seconds < 3, "\(binary) \(arguments) took \(outcome.seconds) s")
                #expect(server.takeRequests() == requests, "\(binary) \(arguments)")
            }
        }
    }

    /// With no daemon, and for command lines they do not take, both commands answer alike.
    @Test func gaugesPlymouthFailsAsPlymouthDoes() throws {
        let debian = try DebianPlymouth.require()
        let gauge = try #require(gaugePlymouthPath, "Gauge's executable is not built")
        try #require(geteuid() == 0, "a network namespace with no daemon needs root")
        let alone = ["/usr/bin/unshare", "--net"]
        let cases: [([String], Int32)] = [
            (["--ping"], 1), (["--has-active-vt"], 1), (["--wait"], 0), (["quit"], 1),
            (["update", "--status=x"], 1), (["ask-for-password", "--prompt=Disk"], 1),
            (["frobnicate"], 1), (["--frobnicate"], 1), (["quit", "--frobnicate"], 1), ([], 0),
        ]
        for (arguments, status) in cases {
            for binary in [debian, gauge] {
                let outcome = try plymouth(arguments, binary: binary, launcher: alone)
                #expect(outcome.status == status, "\(binary) \(arguments): \(outcome.output)")
                if arguments.first?.contains("frobnicate") == true {
                    #expect(outcome.output.contains("USAGE"), "\(binary) \(arguments) prints the usage: \(outcome.output)")
                }
            }
        }
        // ask-for-password --command with no daemon runs the command, which asks for itself.
        for binary in [debian, gauge] {
            #expect(try plymouth(["ask-for-password", "--command=/bin/true"], binary: binary, launcher: alone).status == 0)
            #expect(try plymouth(["ask-for-password", "--command=/bin/false", "--number-of-tries=2"], binary: binary, launcher: alone).status == 1)
        }
    }
}
