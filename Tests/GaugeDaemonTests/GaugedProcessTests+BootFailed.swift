import Foundation
import GaugeProtocol
import Glibc
import Testing
import GaugeTestSupport

// integration/gauge-boot-failed, the failure screen before systemd's emergency shell
// (gauged-boot-failed@.service),
// against the real gauged and gaugectl, with journalctl and systemctl standing in: the chain
// from systemd's job results, the journal's lines, the keys that lead out.

@Suite struct GaugedProcessBootFailedTests {
    /// A journalctl that answers as systemd 257's journal does after an fstab entry whose
    /// disk never came (`-p warning`: the job results and a kernel error).
    static let journal = """
        #!/bin/sh
        case "$*" in
          "-b -q -o short-monotonic --no-pager -p warning") printf '%s\\n' '[    1.000000] boot-test kernel: an early error' \\
            '[    3.100000] boot-test systemd[1]: Timed out waiting for device dev-disk-by\\x2duuid-1234.device - /dev/disk/by-uuid/1234.' \\
            '[    3.200000] boot-test systemd[1]: Dependency failed for data.mount - /data.' \\
            '[    3.300000] boot-test systemd[1]: Dependency failed for local-fs.target - Local File Systems.' ;;
          "-b -q -o short-monotonic --no-pager PRIORITY=0 PRIORITY=1 PRIORITY=2 PRIORITY=3 PRIORITY=4 + SYSLOG_IDENTIFIER=dracut-initqueue")
            printf '%s\n' '[    1.000000] boot-test kernel: an early error' \
            '[    8.100000] boot-test dracut-initqueue[305]: Warning: dracut-initqueue: timeout, still waiting for following initqueue hooks:' \
            '[    8.200000] boot-test dracut-initqueue[305]: Warning: /lib/dracut/hooks/initqueue/finished/devexists-\\x2fdev\\x2fdisk\\x2fby-uuid\\x2f1234.sh: "if ! grep -q After=remote-fs-pre.target /run/systemd/generator/systemd-cryptsetup@*.service 2>/dev/null; then' \
            '[    8.300000] boot-test dracut-initqueue[305]: Warning: Could not boot.' ;;
        esac
        """

    /// The script run against `daemon` (`FailureScript`), journalctl and systemctl standing in.
    private func bootFailed(_ daemon: GaugedProcess, mode: String = "emergency") throws -> FailureScript {
        let directory = daemon.directory
        let journalctl = directory.appending("journalctl"), systemctl = directory.appending("systemctl")
        return try FailureScript(
            "integration/gauge-boot-failed", [mode], daemon: daemon,
            environment: ["JOURNALCTL": journalctl, "SYSTEMCTL": systemctl, "GAUGE_CONSOLE": directory.appending("console")],
            executables: [
                (journalctl, Self.journal),
                (systemctl, "#!/bin/sh\necho \"$*\" >> \(directory.appending("systemctl.log"))\n"),
            ])
    }

    @Test func theChainAndTheJournalThenEnterGivesTheConsole() throws {
        let daemon = try GaugedProcess(display: "memory:640x480")
        let script = try bootFailed(daemon)
        defer { script.stop() }
        let status = try daemon.waitForStatus { $0.failure?.lines == 4 }
        #expect(status.state == .failure)
        #expect(status.failure == Status.Failure(
            title: "This system could not start", summary: "Local File Systems ← /data ← /dev/disk/by-uuid/1234", lines: 4, dropped: 0, boot: thisBoot))
        #expect(status.message == "Press Enter for a maintenance shell, or R to restart")
        usleep(200_000)
        #expect(script.process.isRunning, "the screen waits for a key")
        // The same words on the console, under the splash.
        let console = try String(contentsOfFile: daemon.directory.appending("console"), encoding: .utf8)
        #expect(console == "\nThis system could not start\nLocal File Systems ← /data ← /dev/disk/by-uuid/1234\n"
            + "Press Enter for a maintenance shell, or R to restart\n")
        // Enter: the splash ends (the console is back), and the script with it.
        try script.press("enter")
        #expect(script.waitForExit())
        #expect(script.process.terminationStatus == 0)
        #expect(daemon.waitForExit(seconds: 10) == 0, "\(daemon.log)")
    }

    @Test func rRestartsTheMachine() throws {
        let daemon = try GaugedProcess(display: "memory:640x480")
        let script = try bootFailed(daemon, mode: "rescue")
        defer { script.stop() }
        let shown = try daemon.waitForStatus { $0.failure?.lines == 4 }
        #expect(shown.failure?.title == "This system is in rescue mode")
        try script.press("r")
        #expect(script.waitForExit())
        let called = try String(contentsOfFile: daemon.directory.appending("systemctl.log"), encoding: .utf8)
        #expect(called == "--force reboot\n")
        // The splash stays for the reboot, saying so.
        #expect(try daemon.status().message == "Restarting")
    }

    @Test func dracutsInitqueueGaveUpOnTheRoot() throws {
        // In dracut's initrd, before its emergency shell: the device its initqueue waited
        // for, and its warnings (info in the journal) among the lines.
        let daemon = try GaugedProcess(display: "memory:640x480")
        let script = try bootFailed(daemon, mode: "dracut-emergency")
        defer { script.stop() }
        let status = try daemon.waitForStatus { $0.failure?.lines == 4 }
        #expect(status.failure == Status.Failure(
            title: "This system could not start", summary: "/dev/disk/by-uuid/1234 does not exist", lines: 4, dropped: 0, boot: thisBoot))
        try script.press("enter")
        #expect(script.waitForExit())
        #expect(daemon.waitForExit(seconds: 10) == 0, "\(daemon.log)")
    }

    /// A journal nobody should have to read (10,000 lines at warning or worse: a 500-character
    /// unit's description, 300 units failed, bytes that are not UTF-8, escape sequences that
    /// would retitle or clear a terminal): the screen shows the chain and the newest lines,
    /// no control character reaches the daemon's words or the console, the daemon keeps
    /// answering, and Enter still leads out.
    @Test func aJournalOfBadInputIsShownWithoutHarm() throws {
        let daemon = try GaugedProcess(display: "memory:640x480")
        let directory = daemon.directory
        let long = String(repeating: "x", count: 500)
        let journal = """
            #!/bin/sh
            case "$*" in
              "-b -q -o short-monotonic --no-pager -p warning")
                awk 'BEGIN {
                  for (i = 1; i <= 9396; i++) printf "[%8d.000000] boot-test kernel: noise %d \\377\\376 \\033]0;owned\\007\\033[2J end\\n", i, i
                  for (i = 1; i <= 300; i++) printf "[%8d.100000] boot-test systemd[1]: Failed to start unit-%d.service - Unit \\033[31m%d.\\n", i, i, i
                  for (i = 1; i <= 300; i++) printf "[%8d.200000] boot-test systemd[1]: unit-%d.service: Main process exited, code=exited, status=1/FAILURE\\n", i, i
                  printf "[%8d.300000] boot-test systemd[1]: Dependency failed for \(long).mount - /\(long) \\033]0;owned\\007.\\n", 9999
                  printf "[%8d.400000] boot-test systemd[1]: Dependency failed for local-fs.target - Local File Systems.\\n", 10000
                }' ;;
            esac
            """
        let journalctl = directory.appending("journalctl"), systemctl = directory.appending("systemctl")
        let script = try FailureScript(
            "integration/gauge-boot-failed", ["emergency"], daemon: daemon,
            environment: ["JOURNALCTL": journalctl, "SYSTEMCTL": systemctl, "GAUGE_CONSOLE": directory.appending("console")],
            executables: [(journalctl, journal), (systemctl, "#!/bin/sh\n")])
        defer { script.stop() }
        // gaugectl keeps the newest and says how many of the 9,998 it left out in a first
        // line of its own, which the daemon keeps: nothing dropped there.
        let status = try daemon.waitForStatus(seconds: 30) { $0.failure?.lines == Limits.maxFailureLines }
        let failure = try #require(status.failure)
        #expect(failure.dropped == 0, "the note of lines not sent is kept with them")
        #expect(failure.summary.hasPrefix("Local File Systems \u{2190} /xxx"), "\(failure.summary.prefix(80))")
        #expect(failure.summary.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F }, "no control character in the summary")
        // The script writes the console after the daemon has the lines.
        let deadline = monotonicNow() + 10
        while !FileManager.default.fileExists(atPath: directory.appending("console")) && monotonicNow() < deadline { usleep(10_000) }
        let console = try Data(contentsOf: URL(fileURLWithPath: directory.appending("console")))
        #expect(!console.contains(0x1B) && !console.contains(0x07), "no escape sequence written to the console")
        #expect(try daemon.status().failure?.title == "This system could not start", "the daemon still answers")
        try script.press("enter")
        #expect(script.waitForExit())
        #expect(daemon.waitForExit(seconds: 10) == 0, "\(daemon.log)")
    }

    @Test func noWayToWaitGivesTheConsole() throws {
        // wait-key failing (no keyboards read, the daemon gone): the shell, not a trap.
        let daemon = try GaugedProcess(display: "memory:640x480")
        let script = try bootFailed(daemon)
        defer { script.stop() }
        _ = try daemon.waitForStatus { $0.failure?.lines == 4 }
        try script.press("")
        #expect(script.waitForExit())
        #expect(daemon.waitForExit(seconds: 10) == 0, "\(daemon.log)")
    }

    @Test func noSplashOnScreenNoWait() throws {
        // A splash that is not on screen ends at once: the shell must not wait for a key.
        let daemon = try GaugedProcess(display: "none")
        let script = try bootFailed(daemon)
        defer { script.stop() }
        #expect(script.waitForExit())
        #expect(daemon.waitForExit(seconds: 10) == 0, "\(daemon.log)")
    }
}
