import Foundation
import GaugeProtocol
import Glibc
import Testing
import GaugeTestSupport

// integration/initramfs-tools/scripts/panic/gauge, the failure screen when initramfs-tools
// gives up, against the real gauged and gaugectl: the console's text (a VT's vcs and vcsa
// standing in) as the summary and details, and the keys that lead out.

@Suite struct GaugedProcessInitramfsPanicTests {
    /// The console as initramfs-tools leaves it when the root never came, 40 columns wide:
    /// its explanation, the panic's message wrapped over two rows, the cursor below it, and
    /// older text past the cursor that is not read.
    static let rows = [
        "",
        "Gave up waiting for root file system dev",
        "ice.  Common problems:",
        " - Boot args (cat /proc/cmdline)",
        "",
        "ALERT!  UUID=1234-abcd does not exist.  ",
        "Dropping to a shell!",
        "",
        "stale text beyond the cursor",
    ]

    /// The script run against `daemon` (`FailureScript`) with a console of `rows` (the
    /// cursor on the row after the message) and, with `keyboard`, an input device to wait
    /// on; reboot standing in.
    private func panic(_ daemon: GaugedProcess, keyboard: Bool = true) throws -> FailureScript {
        let directory = daemon.directory
        let width = 40
        var screen = Data()
        for row in Self.rows { screen += Data(row.padding(toLength: width, withPad: " ", startingAt: 0).utf8) }
        try screen.write(to: URL(fileURLWithPath: directory.appending("vcs")))
        try Data([UInt8(Self.rows.count), UInt8(width), 0, 7]).write(to: URL(fileURLWithPath: directory.appending("vcsa")))
        let input = directory.appending("input")
        try FileManager.default.createDirectory(atPath: input, withIntermediateDirectories: true)
        if keyboard { #expect(FileManager.default.createFile(atPath: input + "/event0", contents: nil)) }
        let reboot = directory.appending("reboot")
        // As the real one, it does not come back (the test ends the script).
        return try FailureScript(
            "integration/initramfs-tools/scripts/panic/gauge", daemon: daemon,
            environment: [
                "GAUGE_VCS": directory.appending("vcs"), "GAUGE_INPUT": input, "REBOOT": reboot,
                "GAUGE_CONSOLE": directory.appending("console"),
            ],
            executables: [(reboot, "#!/bin/sh\necho \"$*\" >> \(directory.appending("reboot.log"))\nexec sleep 30\n")])
    }

    @Test func theConsolesWordsThenEnterGivesTheShell() throws {
        let daemon = try GaugedProcess(display: "memory:640x480")
        let script = try panic(daemon)
        defer { script.stop() }
        // Rows down to the cursor's, blank ones left out, a full row joined with the next.
        let status = try daemon.waitForStatus { $0.failure?.lines == 3 && $0.message != "" }
        #expect(status.state == .failure)
        #expect(status.failure == Status.Failure(
            title: "This system could not start",
            summary: "ALERT!  UUID=1234-abcd does not exist.  Dropping to a shell!", lines: 3, dropped: 0, boot: thisBoot))
        #expect(status.message == "Press Enter for a shell, or R to restart")
        usleep(200_000)
        #expect(script.process.isRunning, "the screen waits for a key")
        try script.press("enter")
        #expect(script.waitForExit())
        #expect(script.process.terminationStatus == 0)
        #expect(daemon.waitForExit(seconds: 10) == 0, "\(daemon.log)")
        #expect(!FileManager.default.fileExists(atPath: daemon.directory.appending("reboot.log")))
    }

    @Test func rRestartsTheMachine() throws {
        let daemon = try GaugedProcess(display: "memory:640x480")
        let script = try panic(daemon)
        defer { script.stop() }
        _ = try daemon.waitForStatus { $0.failure?.lines == 3 && $0.message != "" }
        try script.press("r")
        let log = daemon.directory.appending("reboot.log")
        // Until the stand-in has written its line (the file exists a moment before).
        let deadline = monotonicNow() + 30
        while ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").isEmpty && monotonicNow() < deadline { usleep(10_000) }
        #expect(try String(contentsOfFile: log, encoding: .utf8) == "-f\n")
        // The splash stays for the restart, saying so.
        #expect(try daemon.status().message == "Restarting")
        #expect(try daemon.status().state == .failure)
    }

    @Test func noKeyboardGivesTheShellAtOnce() throws {
        // No input device to read a key from: the words, then the shell; never a screen
        // nobody can leave.
        let daemon = try GaugedProcess(display: "memory:640x480")
        let script = try panic(daemon, keyboard: false)
        defer { script.stop() }
        #expect(script.waitForExit())
        #expect(daemon.waitForExit(seconds: 10) == 0, "\(daemon.log)")
    }

    @Test func noSplashOnScreenNoWait() throws {
        let daemon = try GaugedProcess(display: "none")
        let script = try panic(daemon)
        defer { script.stop() }
        #expect(script.waitForExit())
        #expect(daemon.waitForExit(seconds: 10) == 0, "\(daemon.log)")
    }
}
