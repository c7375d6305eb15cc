import Foundation
import GaugeProtocol
import Glibc
import Testing

// Stray signals and requests with nothing to do: the daemon answers clearly and lives on.

@Suite struct GaugedStrayTests {
    @Test func straySignalsDoNotEndTheDaemon() throws {
        let daemon = try GaugedProcess()
        for stray in [SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGIO, SIGPIPE, SIGXFSZ, SIGPWR] {
            kill(daemon.pid, stray)
            #expect(try daemon.request("ping") == "ok", "after signal \(stray)")
        }
        #expect(daemon.log.contains("signal \(SIGUSR1) ignored"), "\(daemon.log)")
        #expect(exitCode(daemon.signalAndWait(SIGTERM) ?? -1) == 0, "SIGTERM still ends it")
    }

    /// A terminal display whose reader is gone costs the daemon an EPIPE, which it reports
    /// before exiting with status 1, not a death by SIGPIPE: SIGPIPE is ignored before
    /// the first frame is written.
    @Test func aTerminalWithoutReaderIsAnErrorNotASignal() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        close(ends[0])
        defer { close(ends[1]) }
        let daemon = try GaugedProcess(
            display: "terminal", passing: ends[1], launcher: ["/bin/sh", "-c", "exec \"$@\" 1>&3 3>&-", "sh"],
            waitForPing: false)
        let status = try #require(reap(daemon.pid, within: 30), "gauged did not exit; its log:\n\(daemon.log)")
        #expect(exitCode(status) == 1, "wait status \(status); log:\n\(daemon.log)")
        #expect(daemon.log.contains("terminal: write failed: Broken pipe"), "\(daemon.log)")
    }

    /// `wait` waits for the bar to show its value; in indeterminate mode there is no
    /// value, so it says so at once, and a waiter caught by the switch is told too.
    @Test func waitInIndeterminateModeIsAStateError() throws {
        let daemon = try GaugedProcess(["--fps", "10"])
        let connection = try daemon.connect(timeout: 3)
        #expect(try connection.request("mode indeterminate") == "ok")
        let reply = try connection.request("wait")
        #expect(reply.hasPrefix("err state ") && reply.contains("indeterminate"), "\(reply)")

        #expect(try connection.request("mode determinate") == "ok")
        #expect(try connection.request("theme transition_duration=30") == "ok")
        #expect(try connection.request("progress 90") == "ok")
        let waiter = try daemon.connect(timeout: 3)
        try waiter.send("wait\n")
        #expect(try connection.request("mode indeterminate") == "ok")
        let late = try #require(try waiter.readLine())
        #expect(late.hasPrefix("err state "), "\(late)")

        #expect(try connection.request("mode determinate") == "ok")
        #expect(try connection.request("theme transition_duration=0") == "ok")
        #expect(try connection.request("progress 50") == "ok")
        #expect(try connection.request("wait") == "ok")
    }
}
