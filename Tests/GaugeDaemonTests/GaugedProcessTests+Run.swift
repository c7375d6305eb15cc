import Foundation
import GaugeProtocol
import Glibc
import Testing
import GaugeTestSupport

// `gaugectl run -- COMMAND` against the real gauged: the command on a terminal of gaugectl's
// own, its output copied through without the OSC 9;4 progress sequences (split across
// writes here), which move the bar, and its exit status forwarded.

@Suite(.serialized) struct GaugectlRunTests {
    @Test func theCommandWritesToATerminalItsProgressMovesTheBarAndItsStatusIsGaugectls() throws {
        let work = TemporaryDirectory()
        let daemon = try GaugedProcess(["--fps", "60"])
        let gate = work.appending("go")
        // The script's progress, then it waits for the test to have seen it.
        let script = """
            printf 'start\\n\\033]9;4;1;40\\007'
            [ -t 1 ] && echo 'on a terminal'
            while [ ! -e '\(gate)' ]; do sleep 0.05; done
            printf '\\033]9;4;1;6'; sleep 0.2; printf '5\\033\\\\more\\n'
            printf '\\033]9;4;3\\007'
            exit ${1:-0}
            """
        let client = ["--socket", daemon.socketPath, "run", "--title", "Updating", "--stall", "0", "--creep", "0", "--"]
        let log = work.appending("out")
        let pid = try spawn(
            try BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl"), client + ["sh", "-c", script, "sh", "4"],
            environment: childEnvironment(), outputPath: log)
        var status = reap(pid, within: 0)
        defer { if status == nil { kill(pid, SIGKILL); _ = reap(pid, within: 5) } }
        let forty = try daemon.waitForStatus { $0.target == 40 }
        #expect(forty.state == .running && forty.title == "Updating" && forty.message == "Running sh")
        try Data().write(to: URL(fileURLWithPath: gate))
        let failed = try daemon.waitForStatus { $0.state == .failure }
        #expect(failed.target == 65 && failed.message == "sh failed (exit status 4)" && failed.mode == .determinate, "\(failed)")
        status = reap(pid, within: 10)
        #expect(status.map { ($0 >> 8) & 0xFF } == 4, "gaugectl's exit status is the command's")
        // stdout and stderr share the log: the command's output without the sequences,
        // with no carriage returns added, then gaugectl's own line.
        let output = try String(contentsOfFile: log, encoding: .utf8)
        #expect(output == "start\non a terminal\nmore\ngaugectl: run: sh failed (exit status 4)\n", "\(output)")

        // Exit status 0: the bar fills.
        try? FileManager.default.removeItem(atPath: gate)
        try Data().write(to: URL(fileURLWithPath: gate))
        let done = try gaugectl(client + ["sh", "-c", script])
        #expect(done.status == 0 && done.stdout == "start\non a terminal\nmore\n", "\(done.stdout) \(done.stderr)")
        let success = try daemon.waitForStatus { $0.state != .running }
        #expect(success.state == .success && success.target == 100 && success.message == "Done")

        // A command that cannot be started: 127 and the failure.
        let missing = try gaugectl(client + [work.appending("no-such-command")])
        #expect(missing.status == 127)
        #expect(try daemon.waitForStatus { $0.state != .running }.state == .failure)
    }
}
