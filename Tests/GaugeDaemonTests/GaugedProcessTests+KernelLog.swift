import Foundation
import Glibc
import Testing
import GaugeTestSupport

// A daemon whose stderr is the kernel's log (initramfs-tools' script starts it so) writes
// its lines at info: at the kernel's default level, warning, every one of them would be
// among a failed boot's warnings, which the failure screen shows and puts in its QR code.

@Suite struct GaugedKernelLogTests {
    /// The daemon's "listening on" line reaches /dev/kmsg as one record of facility user,
    /// level info (priority 14), its text as written.
    @Test(.enabled(if: geteuid() == 0, "writing to and reading /dev/kmsg needs root"))
    func linesToTheKernelLogAreInfoNotWarnings() throws {
        let reader = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        try #require(reader >= 0, "cannot read /dev/kmsg: \(String(cString: strerror(errno)))")
        defer { close(reader) }
        lseek(reader, 0, SEEK_END)
        let directory = TemporaryDirectory()
        let socket = directory.appending("gauged.sock")
        let gauged = try BuiltBinary.require(BuiltBinary.gauged, "gauged")
        let pid = try spawn(
            gauged, ["--socket", socket, "--display", "memory:320x240"], environment: childEnvironment([:]),
            outputPath: "/dev/kmsg")
        defer {
            Glibc.kill(pid, SIGKILL)
            _ = reap(pid, within: 10)
        }
        let wanted = "gauged: listening on \(socket)"
        var found: String?
        var buffer = [UInt8](repeating: 0, count: 8192)
        let deadline = monotonicNow() + 30
        while found == nil, monotonicNow() < deadline {
            let count = read(reader, &buffer, buffer.count)
            if count > 0 {
                let record = String(decoding: buffer[..<count], as: UTF8.self)
                if record.contains(wanted) { found = record }
            } else if count < 0, errno == EPIPE {
                continue  // records overwritten before this read: read on
            } else {
                usleep(10_000)
            }
        }
        let record = try #require(found, "no record with \"\(wanted)\" in /dev/kmsg within 30 s")
        // "PRIORITY,SEQUENCE,MICROSECONDS,FLAGS;TEXT": user (1) * 8 + info (6).
        #expect(record.prefix(while: { $0 != "," }) == "14", "record: \(record)")
        #expect(record.hasSuffix(";\(wanted)\n"), "record: \(record)")
    }
}
