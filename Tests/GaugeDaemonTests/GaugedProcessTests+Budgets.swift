import Foundation
import GaugeProtocol
import Glibc
import Testing
import GaugeTestSupport

// A hostile theme from one client against the real daemon: its memory stays bounded and
// other requests are still answered. The figures are printed (not compared with times).

@Suite struct GaugedBudgetTests {
    /// RSS in MiB from /proc (VmRSS or VmHWM).
    private func mebibytes(_ daemon: GaugedProcess, _ key: String) -> Double {
        Double(daemon.procStatus(key) ?? 0) / 1024
    }

    @Test func aLargeSlowIndicatorKeepsTheDaemonsMemoryBounded() throws {
        let daemon = try GaugedProcess(display: "memory:1920x1080")
        let connection = try daemon.connect(timeout: 5)
        #expect(try connection.request("progress 10") == "ok")
        let before = mebibytes(daemon, "VmRSS")
        let hostile = "theme indeterminate_style=circles indicator_size=1000 indicator_period=60"
        #expect(try connection.request(hostile) == "ok")
        #expect(try connection.request("mode indeterminate") == "ok")
        // Frames of 1000x1000 are 4 MB each: 60 distinct frames kept would be 240 MB.
        let first = try daemon.status().frames
        var worstPing = 0.0
        var frames = first
        while frames < first + 60 {
            let start = monotonicNow()
            #expect(try connection.request("ping") == "ok")
            worstPing = max(worstPing, monotonicNow() - start)
            frames = try daemon.status().frames
            usleep(20_000)
        }
        let after = mebibytes(daemon, "VmRSS")
        let peak = mebibytes(daemon, "VmHWM")
        print("large slow indicator, 60 frames: VmRSS \(before) → \(after) MiB, VmHWM \(peak) MiB, worst ping \(worstPing * 1000) ms")
        #expect(after - before < 48, "RSS grew from \(before) to \(after) MiB")
    }

    @Test func anOversizedLogoCostsNoMemory() throws {
        let daemon = try GaugedProcess(display: "memory:1920x1080")
        let connection = try daemon.connect(timeout: 5)
        let huge = daemon.directory.appending("huge.png")
        try Data(pngHeaderOnly(width: 8192, height: 8192)).write(to: URL(fileURLWithPath: huge))
        let before = mebibytes(daemon, "VmHWM")
        let start = monotonicNow()
        let reply = try connection.request("theme logo=\(huge)")
        let elapsed = monotonicNow() - start
        let after = mebibytes(daemon, "VmHWM")
        print("8192x8192 logo: \(reply); VmHWM \(before) → \(after) MiB in \(elapsed * 1000) ms")
        #expect(reply.hasPrefix("err io ") && reply.contains("larger than 4096x4096"), "\(reply)")
        #expect(after - before < 16, "peak RSS grew from \(before) to \(after) MiB")
    }
}
