import Foundation
import GaugeProtocol
import GaugeRender
import GaugeSystem
import Glibc
import Testing

@testable import GaugeDaemon
import GaugeTestSupport

private final class Lines: @unchecked Sendable {
    var all: [String] = []
}

/// A socket pair standing in for an input device (the uinput module is not there in every
/// test environment): the daemon's end non-blocking, as the watch opens a device.
private func fakeDevice() throws -> (daemonEnd: Int32, keyboard: Int32) {
    var fds: [Int32] = [0, 0]
    try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
    try Syscall.makeNonBlockingAndCloseOnExec(fds[0])
    return (fds[0], fds[1])
}

private func send(_ bytes: [UInt8], to fd: Int32) {
    bytes.withUnsafeBytes { raw in _ = write(fd, raw.baseAddress, raw.count) }
}

/// A daemon on a memory display with no VT, reading keyboards under `directory`/input (none
/// there: tests attach a `fakeDevice()`), and a client connected to it.
private func keyboardDaemon(in directory: TemporaryDirectory, themePath: String? = nil) throws -> (Daemon, Lines, TestClient) {
    var options = DaemonOptions()
    options.display = .memory(spec: "320x240")
    options.socketPath = directory.appending("gauged.sock")
    options.vt = "none"
    if let themePath { options.themePath = themePath }
    options.escapeInput = directory.appending("input")
    let lines = Lines()
    let daemon = try Daemon(options: options, log: Log(sink: { lines.all.append($0) }))
    try daemon.start()
    return (daemon, lines, try TestClient(path: options.socketPath))
}

/// A fake keyboard (`fakeDevice()`) attached to `daemon`'s keyboard watch: the end the
/// test writes its input records into.
private func attachKeyboard(to daemon: Daemon) throws -> Int32 {
    let watch = try #require(daemon.escapeWatch)
    let device = try fakeDevice()
    watch.attach(device.daemonEnd, path: "test-keyboard")
    return device.keyboard
}

@Suite("Escape on every boot (EscapeWatch)")
struct EscapeWatchTests {
    private let escape: UInt16 = 1

    /// Only Escape, Enter (the keypad's too) and R going down count: not their repeats or
    /// releases, not other keys, nor other kinds of event with their codes; a record split
    /// across reads counts once.
    @Test func onlyThePressesOfItsKeysCount() {
        func presses(_ bytes: [UInt8], chunk: Int) -> [EscapeWatch.Key] {
            var partial: [UInt8] = []
            var all: [EscapeWatch.Key] = []
            var index = 0
            while index < bytes.count {
                let end = min(bytes.count, index + chunk)
                all += bytes[index..<end].withUnsafeBytes { EscapeWatch.presses($0, partial: &partial) }
                index = end
            }
            return all
        }
        let typing = tap(30) + tap(escape) + inputRecord(code: escape, value: 1) + inputRecord(code: escape, value: 2)
            + inputRecord(code: escape, value: 0) + inputRecord(type: 4, code: 1, value: 1) + inputRecord(type: 2, code: 1, value: 1)
            + tap(28) + inputRecord(code: 19, value: 2) + tap(19) + tap(96) + inputRecord(type: 4, code: 28, value: 1) + tap(escape)
        for chunk in [1, 7, EvdevKeymap.recordSize, 100, typing.count] {
            #expect(presses(typing, chunk: chunk) == [.escape, .escape, .enter, .r, .enter, .escape], "in reads of \(chunk) bytes")
        }
        #expect(presses(tap(30) + tap(20) + inputRecord(code: escape, value: 2), chunk: 24) == [])
    }

    /// What has no EV_KEY bits (a socket, a regular file) is no keyboard with Escape.
    @Test func onlyInputDevicesWithAnEscapeKeyAreRead() throws {
        let device = try fakeDevice()
        defer { close(device.daemonEnd); close(device.keyboard) }
        #expect(!EscapeWatch.hasEscapeKey(device.daemonEnd))
        let directory = TemporaryDirectory()
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: directory.appending("event0")))
        let loop = try EventLoop()
        let lines = Lines()
        let watch = EscapeWatch(directory: directory.path, loop: loop, log: Log(sink: { lines.all.append($0) })) { _ in }
        watch.setActive(true)
        defer { watch.setActive(false) }
        #expect(watch.paths.isEmpty, "a regular file named event0 is not read")
        #expect(lines.all.contains { $0.contains("escape: no keyboard under \(directory.path) yet") }, "\(lines.all)")
    }

    /// The daemon on a memory display: Escape on a keyboard shows the boot's messages
    /// (pixels of the details view), Escape again the splash; hidden, no keyboard is read,
    /// and shown again they are read once more. No `--ask`, no VT: nothing but the watch.
    @Test func escapeShowsTheBootsMessagesAndBringsTheSplashBack() throws {
        let directory = TemporaryDirectory()
        let themePath = directory.appending("still.theme")
        try "animate = false\ntransition_duration = 0\n".write(toFile: themePath, atomically: false, encoding: .utf8)
        let (daemon, lines, client) = try keyboardDaemon(in: directory, themePath: themePath)
        defer { daemon.shutdown() }
        defer { client.close() }
        func request(_ line: String) throws -> String {
            let before = client.lines.count
            client.send(line + "\n")
            try #require(try pump(daemon.loop) { client.lines.count > before }, "no reply to \(line)")
            return client.lines[before]
        }
        func waitForFrame(_ model: ScreenModel, _ what: String) throws {
            var theme = Theme()
            theme.animate = false
            theme.transitionDuration = 0
            let expected = try renderedFrame(model, theme: theme, width: 320, height: 240)
            var differing = Int.max
            let deadline = monotonicNow() + 30
            while differing != 0, monotonicNow() < deadline {
                let path = directory.appending("snap.png")
                #expect(try request("snapshot \(path)") == "ok")
                differing = differingPixels(try PNG.read(path), expected)
                try pump(daemon.loop, for: 0.01)
            }
            #expect(differing == 0, "\(what): \(differing) pixels differ")
        }
        let watch = try #require(daemon.escapeWatch)
        #expect(watch.isActive, "the splash shows: Escape is watched")
        let keyboard = try attachKeyboard(to: daemon)
        defer { close(keyboard) }

        #expect(try request("progress 20 Checking disks") == "ok")
        #expect(try request("step systemd-udevd.service") == "ok")
        #expect(try request("progress 42 Mounting /home") == "ok")
        let plain = settledModel(42, message: "Mounting /home")
        try waitForFrame(plain, "the splash")
        var details = plain
        details.details = ["Checking disks", "systemd-udevd.service", "Mounting /home"]
        send(tap(30) + tap(escape), to: keyboard)
        try waitForFrame(details, "Escape: the boot's messages")
        send(inputRecord(code: escape, value: 2) + tap(28), to: keyboard)
        try pump(daemon.loop, for: 0.2)
        try waitForFrame(details, "a held Escape's repeats and other keys change nothing")
        send(tap(escape), to: keyboard)
        try waitForFrame(plain, "Escape again: the splash")
        #expect(lines.all.filter { $0.contains("Escape: the") }.count == 2, "\(lines.all)")

        #expect(try request("hide") == "ok")
        #expect(!watch.isActive && watch.paths.isEmpty, "hidden: no keyboard is read")
        #expect(try request("show") == "ok")
        #expect(watch.isActive, "shown again: Escape is watched again")
    }

    /// `wait-key`, the failure screen's ways out: answered at the next Enter (the keypad's
    /// too) or R on a keyboard, not before, not by other keys; Enter with nobody waiting
    /// answers nothing later; Escape still turns the details view over meanwhile. With
    /// `--escape-input none` there are no keyboards to wait on: an error at once.
    @Test func waitKeyIsAnsweredByEnterOrR() throws {
        let directory = TemporaryDirectory()
        let (daemon, lines, client) = try keyboardDaemon(in: directory)
        defer { daemon.shutdown() }
        defer { client.close() }
        let keyboard = try attachKeyboard(to: daemon)
        defer { close(keyboard) }

        client.send("wait-key\n")
        send(tap(30) + tap(escape) + inputRecord(code: 28, value: 2), to: keyboard)
        try pump(daemon.loop, for: 0.2)
        #expect(client.lines.isEmpty, "other keys, Escape and a repeat answer nothing: \(client.lines)")
        #expect(lines.all.contains { $0.contains("Escape: the boot's messages shown") }, "\(lines.all)")
        send(tap(19), to: keyboard)
        try #require(try pump(daemon.loop) { client.lines.count == 1 })
        #expect(client.lines[0] == "ok r")
        send(tap(28), to: keyboard)
        try pump(daemon.loop, for: 0.2)
        client.send("wait-key\n")
        try pump(daemon.loop, for: 0.2)
        #expect(client.lines.count == 1, "an Enter before the request is no answer to it")
        send(tap(96), to: keyboard)
        try #require(try pump(daemon.loop) { client.lines.count == 2 })
        #expect(client.lines[1] == "ok enter")

        var none = DaemonOptions()
        none.display = .memory(spec: "320x240")
        none.vt = "none"
        none.socketPath = directory.appending("none.sock")
        let plain = try Daemon(options: none, log: Log(sink: { _ in }))
        try plain.start()
        defer { plain.shutdown() }
        let other = try TestClient(path: none.socketPath)
        defer { other.close() }
        other.send("wait-key\n")
        try #require(try pump(plain.loop) { other.lines.count == 1 })
        #expect(other.lines[0] == "err state no keyboards are read here (--escape-input none)")
    }

    /// A person reads the failure screen's "Press Enter" before its script has asked
    /// (`wait-key` comes once the journal is read): Enter or R pressed while the failure
    /// screen is up answers the next `wait-key` at once, the last one pressed; a key pressed
    /// before the screen went up, or kept for a screen since taken down or replaced, never does.
    @Test func aKeyPressedOnTheFailureScreenBeforeTheWaitAnswersIt() throws {
        let directory = TemporaryDirectory()
        let (daemon, log, client) = try keyboardDaemon(in: directory)
        defer { daemon.shutdown() }
        defer { client.close() }
        let keyboard = try attachKeyboard(to: daemon)
        defer { close(keyboard) }
        func ask(_ line: String) throws -> String {
            let count = client.lines.count
            client.send(line + "\n")
            try #require(try pump(daemon.loop) { client.lines.count == count + 1 }, "\(line): \(log.all)")
            return client.lines[count]
        }
        func press(_ code: UInt16) throws {
            send(tap(code), to: keyboard)
            try pump(daemon.loop, for: 0.1)
        }

        try press(28)
        #expect(try ask("failure Boot failed") == "ok")
        client.send("wait-key\n")
        try pump(daemon.loop, for: 0.2)
        #expect(client.lines.count == 1, "an Enter before the failure screen is no answer")
        try press(19)
        try #require(try pump(daemon.loop) { client.lines.count == 2 })
        #expect(client.lines[1] == "ok r")

        try press(28)
        try press(19)
        try press(28)
        #expect(try ask("wait-key") == "ok enter", "the last key pressed on the screen, at once")
        client.send("wait-key\n")
        try pump(daemon.loop, for: 0.2)
        #expect(client.lines.count == 3, "kept once")
        try press(28)
        try #require(try pump(daemon.loop) { client.lines.count == 4 })

        try press(19)
        #expect(try ask("failure-clear") == "ok")
        #expect(try ask("failure Boot failed again") == "ok")
        client.send("wait-key\n")
        try pump(daemon.loop, for: 0.2)
        #expect(client.lines.count == 6, "a key kept for a screen taken down answers nothing")
        try press(28)
        try #require(try pump(daemon.loop) { client.lines.count == 7 })
        #expect(client.lines[6] == "ok enter")
    }

    /// The theme's `failure_timeout`, for a machine with nobody at a keyboard: with no key
    /// that long after the first client began to wait, every waiting client is answered as
    /// `failure_timeout_action` says (`restart` as R, `console` as Enter), and it is logged;
    /// a key before it answers as before and disarms it; 0 (the default) waits for a key.
    @Test func failureTimeoutAnswersForNobody() throws {
        let directory = TemporaryDirectory()
        let themePath = directory.appending("gauge.theme")
        try "failure_timeout = 0.5\n".write(toFile: themePath, atomically: true, encoding: .utf8)
        let (daemon, lines, client) = try keyboardDaemon(in: directory, themePath: themePath)
        defer { daemon.shutdown() }
        defer { client.close() }
        let second = try TestClient(path: directory.appending("gauged.sock"))
        defer { second.close() }
        func request(_ line: String) throws -> String {
            let before = client.lines.count
            client.send(line + "\n")
            try #require(try pump(daemon.loop) { client.lines.count > before }, "no reply to \(line)")
            return client.lines[before]
        }

        let asked = monotonicNow()
        client.send("wait-key\n")
        try pump(daemon.loop, for: 0.2)
        second.send("wait-key\n")
        try pump(daemon.loop, for: 0.1)
        #expect(client.lines.isEmpty && second.lines.isEmpty, "not before the timeout")
        try #require(try pump(daemon.loop) { client.lines.count == 1 && second.lines.count == 1 })
        #expect(monotonicNow() - asked >= 0.5)
        #expect(client.lines == ["ok r"] && second.lines == ["ok r"], "restart, the default action, answers as R")
        #expect(lines.all.contains { $0.contains("wait-key: no key in 0.5 s (failure_timeout): answering as R (failure_timeout_action = restart)") },
                "\(lines.all)")

        // A key first: answered by it, and the timeout does not answer the next wait early.
        #expect(try request("theme failure_timeout_action=console failure_timeout=0.4") == "ok")
        let keyboard = try attachKeyboard(to: daemon)
        defer { close(keyboard) }
        client.send("wait-key\n")
        try pump(daemon.loop, for: 0.1)
        send(tap(28), to: keyboard)
        try #require(try pump(daemon.loop) { client.lines.count == 3 })
        #expect(client.lines[2] == "ok enter")
        let again = monotonicNow()
        #expect(try request("wait-key") == "ok enter", "console answers as Enter")
        #expect(monotonicNow() - again >= 0.4, "armed afresh for the new wait")

        // 0: only a key.
        #expect(try request("theme failure_timeout=0") == "ok")
        client.send("wait-key\n")
        try pump(daemon.loop, for: 0.8)
        #expect(client.lines.count == 5, "no answer without a key: \(client.lines)")
        send(tap(19), to: keyboard)
        try #require(try pump(daemon.loop) { client.lines.count == 6 })
        #expect(client.lines[5] == "ok r")
    }
}
