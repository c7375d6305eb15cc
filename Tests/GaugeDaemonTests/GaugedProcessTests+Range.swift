import Foundation
import GaugeProtocol
import Glibc
import Testing
import GaugeTestSupport

// `--range FROM-TO` of `gaugectl gauge`, `apt` and `run` against the real gauged: one bar
// across several commands, each drawn in its part; a command's success ends at its TO with
// the state still running, its failure shows as without a range.

@Suite struct GaugedRangeTests {
    @Test func eachCommandDrawsInItsRangeAndOnlyTheScriptSaysSuccess() throws {
        let daemon = try GaugedProcess(["--fps", "60"])
        let socket = ["--socket", daemon.socketPath]

        // dialog's stream: 50 % of 20-40 is 30, its end (success) is 40, still running.
        let gauge = try PipedGaugectl(socket + ["gauge", "--range", "20-40", "--message", "Copying"])
        gauge.write("50\n")
        #expect(try daemon.waitForStatus(seconds: 10) { $0.target == 30 }.target == 30)
        #expect(try daemon.status().state == .running)
        let copied = gauge.close()
        #expect(copied.status == 0, "\(copied.stderr)")
        var status = try daemon.waitForStatus(seconds: 10) { $0.target == 40 }
        #expect(status.target == 40 && status.state == .running && status.message == "Copying", "\(status)")

        // A terminal progress sequence: 50 % of 40-80 is 60; success leaves it at 80.
        let run = try gaugectl(
            socket + ["run", "--range", "40-80", "--stall", "0", "--creep", "0", "--", "sh", "-c", #"printf '\033]9;4;1;50\a'; sleep 0.3"#])
        #expect(run.status == 0, "\(run.stderr)")
        status = try daemon.status()
        #expect(status.target == 80 && status.state == .running && status.message == "Running sh", "\(status)")

        // The last stage: even its 100 is short of full, which only the script's success is.
        let last = try gaugectl(socket + ["gauge", "--range", "80-100", "--", "sh", "-c", "echo 50; echo 100"])
        #expect(last.status == 0, "\(last.stderr)")
        status = try daemon.status()
        #expect(status.target == 99.9 && status.state == .running, "\(status)")
        #expect(try gaugectl(socket + ["success", "Installed"]).status == 0)
        status = try daemon.status()
        #expect(status.target == 100 && status.state == .success, "\(status)")

        // A command's failure: the failure state with its words, and its exit status.
        let failed = try gaugectl(socket + ["gauge", "--range", "80-90", "--", "sh", "-c", "echo 50; exit 3"])
        #expect(failed.status == 3, "\(failed.stderr)")
        status = try daemon.status()
        #expect(status.target == 85 && status.state == .failure && status.message == "sh failed (exit status 3)", "\(status)")
    }

    /// A command that cannot be started: the shell's 127, the failure shown naming it, the
    /// bar at the start of its range. (Not under qemu-user, which does not report a failed
    /// exec in posix_spawn: tools/check/check-cross.)
    @Test func aMissingCommandFailsAtTheStartOfItsRange() throws {
        let daemon = try GaugedProcess(["--fps", "60"])
        let missing = try gaugectl(["--socket", daemon.socketPath, "run", "--range", "90-100", "--", "/nonexistent/tool"])
        #expect(missing.status == 127, "\(missing.stderr)")
        let status = try daemon.waitForStatus(seconds: 10) { $0.state == .failure }
        #expect(status.target == 90 && status.message.contains("/nonexistent/tool"), "\(status)")
    }

    @Test(arguments: ["40-20", "20-20", "0-101", "-5-10", "10", "a-b", "10-", "1e1-20"])
    func aRangeThatIsNoRangeIsAUsageError(range: String) throws {
        for command in [["gauge"], ["apt", "--", "dpkg", "-i", "x.deb"], ["run", "--", "true"]] {
            let run = try gaugectl(["--socket", "/nonexistent/g.sock", command[0], "--range", range] + command.dropFirst())
            #expect(run.status == 2, "\(command[0]) --range \(range): \(run.stderr)")
            #expect(run.stderr.contains("--range needs FROM-TO"), "\(run.stderr)")
        }
    }
}

extension GaugedRangeTests {
    /// What bash completion offers after `gaugectl COMMAND -`: the file in
    /// integration/completion, without bash-completion's helpers.
    static func completion(of command: String) throws -> Set<String> {
        let file = repositoryRoot.appendingPathComponent("integration/completion/gaugectl.bash").path
        let script = #"source "$1"; COMP_WORDS=(gaugectl "$2" -); COMP_CWORD=2; _gaugectl; printf '%s\n' "${COMPREPLY[@]}""#
        let run = try runProgram("/bin/bash", ["-c", script, "complete", file, command])
        return Set(run.stdout.split(separator: "\n").map(String.init))
    }

    /// The commands that take --range offer every option of their help, --range among them.
    @Test(arguments: ["gauge", "apt", "run"])
    func theCompletionOffersEveryOptionOfTheHelp(command: String) throws {
        let help = try gaugectl([command, "--help"]).stdout
        let section = try #require(help.components(separatedBy: "Options:\n").dropFirst().first).components(separatedBy: "\n\n")[0]
        let options = section.split(separator: "\n").compactMap { line -> String? in
            let words = line.split(whereSeparator: { $0 == " " || $0 == "," })
            return words.first { $0.hasPrefix("--") }.map(String.init)
        }
        #expect(options.contains("--range"))
        let offered = try Self.completion(of: command)
        for option in options { #expect(offered.contains(option), "completion of \(command) lacks \(option): \(offered)") }
    }
}
