import Foundation
import GaugeProtocol
import GaugeSystem
import Testing

@testable import GaugeDaemon

#if canImport(Glibc)
    import Glibc
#endif

// Runs Debian's real `plymouth` command (package `plymouth`, see tools/install-deps)
// against a listener bound as the daemon binds it + PlymouthSession on the abstract socket
// /org/freedesktop/plymouthd. Abstract names are per network namespace: if a plymouthd
// (or another run of this test) holds the name, the bind fails and the test says so.

private let plymouthPath: String? = ["/usr/bin/plymouth", "/bin/plymouth"].first {
    FileManager.default.isExecutableFile(atPath: $0)
}

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

private func plymouth(_ arguments: [String]) throws -> Outcome {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: plymouthPath!)
    process.arguments = arguments
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
        guard plymouthPath != nil else {
            Issue.record("the plymouth command is missing; run tools/install-deps (Debian package plymouth)")
            return
        }
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
            (["change-mode", "--updates"], 0, [.title("Installing updates")]),
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
            (["ask-for-password"], 1, [.hide]),
            (["ask-for-password", "--prompt=Passphrase"], 1, [.hide]),
            (["ask-question", "--prompt=Continue?"], 1, [.hide]),
            (["watch-keystroke", "--keys=yn"], 1, []),
        ]
        for (arguments, status, requests) in cases {
            let outcome = try plymouth(arguments)
            #expect(outcome.status == status, "plymouth \(arguments): \(outcome.output)")
            #expect(outcome.seconds < 3, "plymouth \(arguments) took \(outcome.seconds) s")
            #expect(server.takeRequests() == requests, "plymouth \(arguments)")
        }
    }
}
