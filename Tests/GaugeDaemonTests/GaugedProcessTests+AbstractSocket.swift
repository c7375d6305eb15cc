import Foundation
import Glibc
import Testing
import GaugeTestSupport

@Suite struct GaugedAbstractSocketTests {
    /// `@name` means the abstract namespace to both programs: gaugectl builds its address
    /// the way the daemon does (it used to connect to a file named `@name`).
    @Test func gaugectlReachesADaemonOnAnAbstractSocket() throws {
        let name = "@gauge-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let daemon = try GaugedProcess(display: "none", socketPath: name, waitForPing: false)
        let deadline = monotonicNow() + 30
        var run = try gaugectl(["--socket", name, "--timeout", "1", "ping"])
        while run.status != 0, monotonicNow() < deadline, daemon.waitForExit(seconds: 0.01) == nil {
            run = try gaugectl(["--socket", name, "--timeout", "1", "ping"])
        }
        #expect(run.status == 0, "\(run.stderr)\n\(daemon.log)")
        #expect(FileManager.default.fileExists(atPath: name) == false, "no file named \(name) involved")
        run = try gaugectl(["--socket", name, "progress", "41"])
        #expect(run.status == 0, "\(run.stderr)")
        run = try gaugectl(["--socket", name, "status", "--json"])
        #expect(run.stdout.contains("\"target\":41"), "\(run.stdout)")
    }

    /// `gaugectl gauge` keeps one connection; when the daemon drops it as idle, the next
    /// update goes over a new one instead of being lost.
    @Test func gaugeStreamSurvivesAnIdleDrop() throws {
        let daemon = try GaugedProcess(["--idle-timeout", "0.2"])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl"))
        process.arguments = ["--socket", daemon.socketPath, "gauge", "--on-eof", "keep"]
        let input = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(Data("10\n".utf8))
        try daemon.waitForStatus { $0.target == 10 }
        let deadline = monotonicNow() + 30
        while !daemon.log.contains("idle for 0.2 s, closed"), monotonicNow() < deadline { usleep(10_000) }
        #expect(daemon.log.contains("idle for 0.2 s, closed"), "\(daemon.log)")
        input.fileHandleForWriting.write(Data("20\n".utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(stderr)")
        #expect(try daemon.status().target == 20)
    }
}
