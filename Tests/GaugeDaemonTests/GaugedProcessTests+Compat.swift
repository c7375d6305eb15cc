import Foundation
import GaugeProtocol
import GaugeTranslators
import GaugeRender
import Glibc
import Testing
import GaugeTestSupport

// The tools people already run, driving the real gauged on the memory display: psplash's
// FIFO, the real `plymouth` command and a `dialog --gauge` stream through `gaugectl gauge`.
// Each checks `status` and the pixels of a snapshot, and that bad input is logged and
// ignored while the daemon keeps serving.

private let still = ["--fps", "60"]

/// Makes the daemon's frames deterministic (no stripe motion, no easing) for snapshots.
private func freeze(_ daemon: GaugedProcess) throws {
    #expect(try daemon.request("theme animate=false transition_duration=0") == "ok")
}

private var frozenTheme: Theme {
    var theme = Theme()
    theme.animate = false
    theme.transitionDuration = 0
    return theme
}

/// The daemon's snapshot equals an in-process render of `model`.
private func expectSnapshot(_ daemon: GaugedProcess, equals model: ScreenModel, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let path = daemon.directory.appending("snap-\(UInt32.random(in: 0...UInt32.max)).png")
    #expect(try daemon.request("snapshot \(path)") == "ok", sourceLocation: sourceLocation)
    let snapshot = try PNG.read(path)
    let expected = try renderedFrame(model, theme: frozenTheme, width: 320, height: 240)
    #expect(differingPixels(snapshot, expected) == 0, "snapshot differs from the in-process frame", sourceLocation: sourceLocation)
}

/// What `psplash-write` does: open without blocking, write, close.
private func psplashWrite(_ path: String, _ bytes: [UInt8]) -> Bool {
    let fd = open(path, O_WRONLY | O_NONBLOCK)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count
}

@Suite struct GaugedCompatTests {
    @Test func psplashFIFODrivesTheScreen() throws {
        let directory = TemporaryDirectory()
        let fifo = directory.appending("psplash_fifo")
        let daemon = try GaugedProcess(still + ["--psplash-fifo", fifo])
        try freeze(daemon)

        // Several commands in one write, NUL-separated, as psplash-write sends them.
        #expect(psplashWrite(fifo, Array("PROGRESS 42\0MSG Unpacking packages\0".utf8)))
        var status = try daemon.waitForStatus { $0.target == 42 && $0.message == "Unpacking packages" }
        #expect(status.shown == 42)
        try expectSnapshot(daemon, equals: settledModel(42, message: "Unpacking packages"))

        // A long-lived writer, newline-separated, a command split across writes.
        let writer = open(fifo, O_WRONLY | O_NONBLOCK)
        #expect(writer >= 0)
        for chunk in ["PROGRESS 5", "5\nMSG Almost", " there\n"] {
            _ = chunk.withCString { write(writer, $0, strlen($0)) }
            usleep(20_000)
        }
        status = try daemon.waitForStatus { $0.target == 55 && $0.message == "Almost there" }

        // Bad commands are logged and ignored; the daemon still serves.
        _ = "BOGUS 1\nPROGRESS lots\n".withCString { write(writer, $0, strlen($0)) }
        close(writer)
        #expect(try daemon.request("ping") == "ok")
        try daemon.waitForStatus { _ in daemon.log.contains("psplash") && daemon.log.contains("BOGUS") }
        status = try daemon.status()
        #expect(status.target == 55 && status.message == "Almost there")
        try expectSnapshot(daemon, equals: settledModel(55, message: "Almost there"))

        // QUIT ends the daemon cleanly, as it ends psplash.
        #expect(psplashWrite(fifo, Array("QUIT\0".utf8)))
        #expect(daemon.waitForExit(seconds: 30).flatMap(exitCode) == 0)
    }

    @Test func dialogGaugeStreamDrivesTheScreen() throws {
        let daemon = try GaugedProcess(still)
        try freeze(daemon)
        let client = try BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: client)
        process.arguments = ["--socket", daemon.socketPath, "gauge", "--title", "Installing"]
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // What an installer script pipes into `dialog --gauge`, bad lines and dialog's
        // line break included.
        let stream = "10\n25\nnot a number\nXXX\n70\nConfiguring the\nbootloader\\nand the kernel\nXXX\n"
        input.fileHandleForWriting.write(Data(stream.utf8))
        let message = "Configuring the bootloader\u{2028}and the kernel"
        let status = try daemon.waitForStatus { $0.target == 70 }
        #expect(status.message == message && status.title == "Installing")
        try expectSnapshot(daemon, equals: settledModel(70, message: message, title: "Installing"))
        // At the end of the stream the work is done (--on-eof success, the default).
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let done = try daemon.waitForStatus { $0.state == .success }
        #expect(done.target == 100 && done.message == message)
        #expect(try daemon.request("ping") == "ok")
        try expectSnapshot(daemon, equals: settledModel(100, message: message, title: "Installing", state: .success))
    }

    /// The real `plymouth` command against gauged, both in a network namespace of their
    /// own so the abstract socket is private to this test.
    @Test func realPlymouthCommandDrivesTheScreen() throws {
        let plymouth = try DebianPlymouth.require()
        try #require(geteuid() == 0, "a private network namespace needs root")
        let daemon = try GaugedProcess(still + ["--plymouth-compat"], launcher: ["/usr/bin/unshare", "--net"])
        try freeze(daemon)
        func run(_ arguments: [String]) throws -> ProgramRun {
            try runProgram("/usr/bin/nsenter", ["--net=/proc/\(daemon.pid)/ns/net", plymouth] + arguments)
        }
        #expect(try run(["--ping"]).status == 0)
        #expect(try run(["system-update", "--progress=42"]).status == 0)
        #expect(try run(["display-message", "--text=Checking disks"]).status == 0)
        _ = try daemon.waitForStatus { $0.target == 42 && $0.message == "Checking disks" }
        // PackageKit's offline update (pk-offline-update's calls): the mode, its message, then
        // percentages whose count starts again (PlymouthUpdatesTests has the fold's values).
        #expect(try run(["change-mode", "--updates"]).status == 0)
        #expect(try run(["display-message", "--text=Installing updates; this could take a while..."]).status == 0)
        for value in [0, 40, 93, 24, 60, 0, 30] {
            if value > 10 { #expect(try run(["display-message", "--text=Installing Updates — \(value)%"]).status == 0) }
            #expect(try run(["system-update", "--progress=\(value)"]).status == 0)
        }
        let line = "Installing updates; this could take a while... Do not turn off the computer."
        let status = try daemon.waitForStatus { $0.target == 68.1 && $0.message == line }
        #expect(status.title == "Installing updates")
        try expectSnapshot(daemon, equals: settledModel(68.1, message: line, title: status.title))

        // What Gauge cannot serve is refused at once, so the caller falls back.
        let password = try run(["ask-for-password", "--prompt=Disk password"])
        #expect(password.status != 0 && password.seconds < 3)
        #expect(try daemon.request("ping") == "ok")

        #expect(try run(["quit"]).status == 0)
        #expect(daemon.waitForExit(seconds: 30).flatMap(exitCode) == 0)
    }
}

@Suite struct GaugedSWUpdateTests {
    @Test func swupdateProgressDrivesTheScreen() throws {
        let daemon = try GaugedProcess(still)
        try freeze(daemon)
        let swupdate = FakeSWUpdate([(.aligned, [
            .init(status: .start, source: 4),
            .init(status: .run, steps: 2, step: 1, stepPercent: 50, image: "rootfs.ext4", handler: "raw"),
            .init(status: .run, steps: 2, step: 2, stepPercent: 100, image: "boot.img", handler: "rawfile"),
            .init(status: .success),
        ])])
        let client = try BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: client)
        process.arguments = ["--socket", daemon.socketPath, "swupdate", "--progress-socket", swupdate.path]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let status = try daemon.waitForStatus { $0.state == .success }
        #expect(status.target == 100 && status.message == "Update successful")
        try expectSnapshot(daemon, equals: settledModel(100, message: "Update successful", state: .success))
    }
}
