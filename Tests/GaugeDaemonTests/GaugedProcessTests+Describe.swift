import Foundation
import GaugeProtocol
import Testing

/// `describe`: the boot's steps read as their units' descriptions on the message line, a
/// step not described yet by its name until its description comes, Gauge's own units
/// never; what a client sends is bounded.
@Suite struct GaugedStepDescriptionTests {
    @Test func stepsReadAsTheirDescriptionsAndGaugesOwnUnitsNever() throws {
        let daemon = try GaugedProcess(["--fps", "60"])
        #expect(try daemon.request("describe systemd-journald.service Journal Service") == "ok")
        #expect(try daemon.request("step systemd-journald.service") == "ok")
        #expect(try daemon.status().message == "Journal Service")
        // Not described yet: its name, until its description comes; another unit's leaves it.
        #expect(try daemon.request("step boot.mount") == "ok")
        #expect(try daemon.status().message == "boot.mount")
        #expect(try daemon.request("describe boot.mount /boot") == "ok")
        #expect(try daemon.status().message == "/boot")
        #expect(try daemon.request("describe other.service Other") == "ok")
        #expect(try daemon.status().message == "/boot")
        // Gauge's own units, described or not, never show.
        #expect(try daemon.request("describe gauged-poweroff.service Power-off Screen") == "ok")
        for unit in ["gauged-poweroff.service", "gauged.service", "gauged-waits.service"] {
            #expect(try daemon.request("step \(unit)") == "ok")
            #expect(try daemon.status().message == "/boot", "\(unit)")
        }
        // A client's message stays.
        #expect(try daemon.request("message Checking disks") == "ok")
        #expect(try daemon.request("step late.service") == "ok")
        #expect(try daemon.request("describe late.service Late") == "ok")
        #expect(try daemon.status().message == "Checking disks")
        #expect(try daemon.request("message") == "ok")
        // Bounded: a name past systemd's 256 bytes is refused, a text cut to 200 characters
        // with its line breaks made spaces, a control character refused with the line.
        let name = String(repeating: "n", count: 257) + ".service"
        #expect(try daemon.request("describe \(name) N").hasPrefix("err range"))
        #expect(try daemon.request("describe a.service A\u{2028}" + String(repeating: "é", count: 2000)) == "ok")
        #expect(try daemon.request("describe b.service B\u{1B}[2J").hasPrefix("err syntax"))
        #expect(try daemon.request("step a.service") == "ok")
        #expect(try daemon.status().message == "A " + String(repeating: "é", count: 198))
        #expect(try daemon.request("step b.service") == "ok")
        #expect(try daemon.status().message == "b.service")
        for n in 0..<600 { _ = try daemon.request("describe unit-\(n).service Unit \(n)") }
        #expect(try daemon.request("step unit-599.service") == "ok")
        #expect(try daemon.status().message == "Unit 599")
        #expect(try daemon.request("step unit-0.service") == "ok")
        #expect(try daemon.status().message == "unit-0.service", "past 512 units the oldest are forgotten")
    }
}
