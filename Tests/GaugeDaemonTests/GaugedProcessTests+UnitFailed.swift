import Foundation
import GaugeProtocol
import Glibc
import Testing
import GaugeTestSupport

// integration/gauge-boot-failed's unit mode (gauged-unit-failed@UNIT.service, started by
// the OnFailure= of service.d/gauge-failure.conf): a unit failed while the boot goes on.
// Against the real gauged and gaugectl, with systemctl and journalctl standing in: what
// gaugectl is asked, byte for byte, and the keys that lead on.

@Suite struct GaugedProcessUnitFailedTests {
    /// A systemctl that answers `show` as systemd 257 does for the three targets the script
    /// asks about (a queued job for those with a file `pending-TARGET`) and the unit (its
    /// description "Example NAME", or its name with a file `no-description`; its Result
    /// exit-code, or the file `result`'s; status 3), `list-units --failed` with the file
    /// `failed`, and logs every call.
    static func systemctl(_ directory: TemporaryDirectory) -> String {
        """
        #!/bin/sh
        echo "$*" >> \(directory.appending("systemctl.log"))
        case "$1" in
          show)
            for id in emergency.target rescue.target shutdown.target; do
              printf 'Id=%s\\nDescription=%s\\nActiveState=inactive\\n' "$id" "$id"
              [ ! -e \(directory.path)/pending-$id ] || echo Job=42
              echo
            done
            for unit; do :; done
            description="Example ${unit%.service}"
            [ ! -e \(directory.path)/no-description ] || description=$unit
            printf 'Result=%s\\nExecMainStatus=3\\nId=%s\\nDescription=%s\\nActiveState=failed\\n' \\
              "$(cat \(directory.path)/result 2>/dev/null || echo exit-code)" "$unit" "$description" ;;
          list-units) cat \(directory.appending("failed")) 2>/dev/null ;;
        esac
        """
    }

    /// A journalctl that answers `-u NAME` with three lines of NAME's: its own error (as a
    /// service's standard error is logged, at info), systemd's about it, and systemd's that
    /// it starts the handler, which the script leaves out.
    static let journalctl = """
        #!/bin/sh
        case "$*" in
          "-b -q -o short-monotonic --no-pager -n "*)
            while [ $# -gt 0 ]; do
              if [ "$1" = -u ]; then
                printf '[    5.100000] boot-test %s[300]: cannot read /etc/example.conf: No such file or directory\\n' "${2%.service}"
                printf '[    5.200000] boot-test systemd[1]: %s: Main process exited, code=exited, status=3/NOTIMPLEMENTED\\n' "$2"
                printf '[    5.300000] boot-test systemd[1]: %s: Triggering OnFailure= dependencies.\\n' "$2"
                shift
              fi
              shift
            done ;;
        esac
        """

    private func unitFailed(_ daemon: GaugedProcess, _ unit: String = "example.service", tag: String = "") throws -> FailureScript {
        let directory = daemon.directory
        let journalctl = directory.appending("journalctl"), systemctl = directory.appending("systemctl")
        return try FailureScript(
            "integration/gauge-boot-failed", ["unit", unit], daemon: daemon,
            environment: [
                "JOURNALCTL": journalctl, "SYSTEMCTL": systemctl, "GAUGE_CONSOLE": directory.appending("console"),
                "GAUGE_UNIT_LOCK": directory.appending("unit-failed.lock"),
            ],
            executables: [(journalctl, Self.journalctl), (systemctl, Self.systemctl(directory))], tag: tag)
    }

    private static let title = "Part of this system could not start"

    /// Waits until the script waits for its key (its log's last call).
    private func waitForKeyWait(_ script: FailureScript) {
        let deadline = monotonicNow() + 20
        while !script.calls.hasSuffix("wait-key\n") && monotonicNow() < deadline { usleep(10_000) }
    }

    @Test func theUnitItsResultAndItsLinesThenEnterGivesTheProgressScreenBack() throws {
        let daemon = try GaugedProcess(display: "memory:640x480")
        try "example.service loaded failed failed Example example\n".write(
            toFile: daemon.directory.appending("failed"), atomically: true, encoding: .utf8)
        let script = try unitFailed(daemon)
        defer { script.stop() }
        let summary = "example.service exited with status 3 (Example example)"
        let status = try daemon.waitForStatus { $0.failure?.lines == 2 }
        #expect(status.failure == Status.Failure(title: Self.title, summary: summary, lines: 2, dropped: 0, boot: thisBoot))
        #expect(status.message == "Press Enter to continue, or R to restart")
        waitForKeyWait(script)
        // The screen at once, naming the unit; then again with systemd's facts and the
        // journal's lines.
        #expect(script.calls == """
            --no-wait --timeout 5 status --json
            --no-wait --timeout 5 failure --title \(Self.title) example.service failed
            --no-wait --timeout 5 message Press Enter to continue, or R to restart
            --no-wait --timeout 5 failure --title \(Self.title) --details - \(summary)
            | [5.100000] example[300]: cannot read /etc/example.conf: No such file or directory
            | [5.200000] systemd[1]: example.service: Main process exited, code=exited, status=3/NOTIMPLEMENTED
            --no-wait --timeout 0 wait-key

            """)
        let asked = try String(contentsOfFile: daemon.directory.appending("systemctl.log"), encoding: .utf8)
        #expect(asked == """
            show -p Id,ActiveState,Job,Description,Result,ExecMainStatus emergency.target rescue.target shutdown.target example.service
            list-units --failed --plain --no-legend --no-pager

            """)
        usleep(200_000)
        #expect(script.process.isRunning, "the boot waits for a key")
        // Enter: the progress screen again, running, the message line the boot's own; the
        // daemon stays for the rest of the boot.
        try script.press("enter")
        #expect(script.waitForExit())
        #expect(script.process.terminationStatus == 0)
        let after = try daemon.status()
        #expect(after.failure == nil)
        #expect(after.state == .running)
        #expect(after.message == "")
        #expect(script.calls.hasSuffix("""
            --no-wait --timeout 0 wait-key
            --no-wait --timeout 5 status --json
            --no-wait --timeout 5 send failure-clear
            --no-wait --timeout 5 running
            --no-wait --timeout 5 message

            """), "\(script.calls)")
        #expect(!FileManager.default.fileExists(atPath: daemon.directory.appending("console")), "the console is left alone")
    }

    @Test func rRestartsTheMachineInOrder() throws {
        let daemon = try GaugedProcess(display: "memory:640x480")
        let script = try unitFailed(daemon)
        defer { script.stop() }
        _ = try daemon.waitForStatus { $0.failure?.lines == 2 }
        waitForKeyWait(script)
        try script.press("r")
        #expect(script.waitForExit())
        let asked = try String(contentsOfFile: daemon.directory.appending("systemctl.log"), encoding: .utf8)
        // A running system: its units stopped in order, not --force.
        #expect(asked.hasSuffix("list-units --failed --plain --no-legend --no-pager\nreboot\n"), "\(asked)")
        #expect(try daemon.status().message == "Restarting")
    }

    /// A unit with no description of its own (systemd shows its name) is named once; a
    /// result is said in words.
    @Test(arguments: [("exit-code", "example.service exited with status 3"),
                      ("signal", "example.service was killed by signal 3"),
                      ("oom-kill", "example.service ran out of memory"),
                      ("protocol", "example.service failed (protocol)")])
    func theResultInWordsAndTheNameOnce(result: String, summary: String) throws {
        let daemon = try GaugedProcess(display: "memory:640x480")
        try "".write(toFile: daemon.directory.appending("no-description"), atomically: true, encoding: .utf8)
        try result.write(toFile: daemon.directory.appending("result"), atomically: true, encoding: .utf8)
        let script = try unitFailed(daemon)
        defer { script.stop() }
        let status = try daemon.waitForStatus { $0.failure?.lines == 2 }
        #expect(status.failure?.summary == summary)
    }

    @Test func theThemesTimeoutLetsTheBootGoOn() throws {
        // failure_timeout answers for nobody, as R by default: for a unit the boot goes on
        // instead (one failing at every boot would restart the machine forever).
        let daemon = try GaugedProcess(display: "memory:640x480")
        #expect(try gaugectl(["--socket", daemon.socketPath, "theme", "failure_timeout=1"]).status == 0)
        let script = try unitFailed(daemon)
        defer { script.stop() }
        _ = try daemon.waitForStatus { $0.failure?.lines == 2 }
        waitForKeyWait(script)
        usleep(1_000_000)
        try script.press("r")
        #expect(script.waitForExit())
        let asked = try String(contentsOfFile: daemon.directory.appending("systemctl.log"), encoding: .utf8)
        #expect(!asked.contains("reboot"), "\(asked)")
        #expect(try daemon.status().failure == nil)
    }

    @Test(arguments: ["emergency.target", "rescue.target", "shutdown.target"])
    func onTheWayToEmergencyTheScreenIsLeftToIt(target: String) throws {
        // A failed mount fails local-fs.target, whose OnFailure queues emergency.target: its
        // own screen (gauged-boot-failed@emergency, whose first request replaces this one's
        // first) says what failed. No wait for a key, no journal, no clearing.
        let daemon = try GaugedProcess(display: "memory:640x480")
        try "".write(toFile: daemon.directory.appending("pending-\(target)"), atomically: true, encoding: .utf8)
        let script = try unitFailed(daemon, "data.mount")
        defer { script.stop() }
        #expect(script.waitForExit())
        #expect(script.process.terminationStatus == 0)
        #expect(script.calls == """
            --no-wait --timeout 5 status --json
            --no-wait --timeout 5 failure --title \(Self.title) data.mount failed

            """)
        let asked = try String(contentsOfFile: daemon.directory.appending("systemctl.log"), encoding: .utf8)
        #expect(!asked.contains("list-units"), "\(asked)")
    }

    @Test func ourScreenPutUpBeforeTheScriptStillWaitsForTheKey() throws {
        // gauged-waits puts the screen up the moment systemd queues the handler; the
        // script then finds it up with nobody waiting for its key, and waits itself.
        let daemon = try GaugedProcess(display: "memory:640x480")
        try "example.service loaded failed failed Example example\n".write(
            toFile: daemon.directory.appending("failed"), atomically: true, encoding: .utf8)
        #expect(try gaugectl(["--socket", daemon.socketPath, "failure", "--title", Self.title, "example.service failed"]).status == 0)
        let script = try unitFailed(daemon)
        defer { script.stop() }
        _ = try daemon.waitForStatus { $0.failure?.lines == 2 }
        waitForKeyWait(script)
        #expect(script.calls.hasPrefix("""
            --no-wait --timeout 5 status --json
            --no-wait --timeout 5 message Press Enter to continue, or R to restart
            --no-wait --timeout 5 failure --title \(Self.title) --details - example.service exited with status 3 (Example example)

            """), "\(script.calls)")
        try #require(script.calls.hasSuffix("wait-key\n"), "nobody waits for the key: \(script.calls)")
        try script.press("enter")
        #expect(script.waitForExit())
        #expect(try daemon.status().failure == nil)
    }

    @Test func anotherFailureScreenIsLeftAlone() throws {
        let daemon = try GaugedProcess(display: "memory:640x480")
        #expect(try gaugectl(["--socket", daemon.socketPath, "failure", "--title", "This system could not start", "Local File Systems"]).status == 0)
        let script = try unitFailed(daemon)
        defer { script.stop() }
        #expect(script.waitForExit())
        #expect(script.calls == "--no-wait --timeout 5 status --json\n")
        #expect(try daemon.status().failure?.title == "This system could not start")
    }

    @Test func noSplashOnScreenNothingShown() throws {
        // A hidden splash: nobody would see the screen, so the boot must not wait for a key.
        let daemon = try GaugedProcess(display: "memory:640x480")
        #expect(try gaugectl(["--socket", daemon.socketPath, "hide"]).status == 0)
        let script = try unitFailed(daemon)
        defer { script.stop() }
        #expect(script.waitForExit())
        #expect(script.calls == "--no-wait --timeout 5 status --json\n")
        #expect(try daemon.status().failure == nil)
    }

    @Test func aSecondFailedUnitJoinsTheScreenTheFirstWaitsFor() throws {
        let daemon = try GaugedProcess(display: "memory:640x480")
        let failed = daemon.directory.appending("failed")
        try "example.service loaded failed failed Example example\n".write(toFile: failed, atomically: true, encoding: .utf8)
        let first = try unitFailed(daemon)
        defer { first.stop() }
        _ = try daemon.waitForStatus { $0.failure?.lines == 2 }
        waitForKeyWait(first)
        try "example.service loaded failed failed Example example\nother.service loaded failed failed Example other\n"
            .write(toFile: failed, atomically: true, encoding: .utf8)
        let second = try unitFailed(daemon, "other.service", tag: "-second")
        defer { second.stop() }
        // The second rebuilds the screen with both and leaves; the first still waits.
        #expect(second.waitForExit())
        let both = try daemon.status()
        #expect(both.failure == Status.Failure(
            title: Self.title, summary: "2 parts of this system failed: other.service, example.service", lines: 4, dropped: 0, boot: thisBoot))
        #expect(!second.calls.contains("wait-key") && !second.calls.contains("--details - Example"), "\(second.calls)")
        #expect(first.process.isRunning)
        try first.press("enter")
        #expect(first.waitForExit())
        #expect(try daemon.status().failure == nil)
    }
}
