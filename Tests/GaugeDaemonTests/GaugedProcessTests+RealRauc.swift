import Foundation
import GaugeProtocol
import Glibc
import Testing
import GaugeTestSupport

// `gaugectl rauc` against Debian's real RAUC (packages rauc, squashfs-tools, openssl; see
// tools/install-deps): `rauc service` on a private bus, with a system.conf of two
// file-backed raw slots and the noop bootloader, installs bundles built by `rauc bundle`
// and signed with a certificate the test makes, while gaugectl follows it. Installing
// mounts the bundle (a loop device), so the test needs root.

private let tools = ["/usr/bin/rauc", "/usr/bin/openssl", "/usr/bin/mksquashfs"]

/// A RAUC system of the test's own: keys, slots, bundles and the service.
private final class RaucSystem {
    let directory = TemporaryDirectory()
    let bus: PrivateBus
    private let service = Process()
    private var serviceLog = Pipe()

    init(bus: PrivateBus) throws {
        self.bus = bus
        for name in ["content", "mnt", "data"] {
            try FileManager.default.createDirectory(atPath: path(name), withIntermediateDirectories: true)
        }
        try makeCertificate("signing")
        try makeCertificate("stranger")
        // The image: 4 MiB that are not all zeros, so a copy to the slot shows.
        let block = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        let image = Data((0..<1024).flatMap { _ in block })
        try image.write(to: URL(fileURLWithPath: path("content/rootfs.img")))
        for slot in ["slot-a.img", "slot-b.img"] {
            try Data(count: 8 << 20).write(to: URL(fileURLWithPath: path(slot)))
        }
        try """
            [system]
            compatible=Gauge Test
            bootloader=noop
            mountprefix=\(path("mnt"))
            data-directory=\(path("data"))

            [keyring]
            path=\(path("signing.cert.pem"))

            [slot.rootfs.0]
            device=\(path("slot-a.img"))
            type=raw
            bootname=A

            [slot.rootfs.1]
            device=\(path("slot-b.img"))
            type=raw
            bootname=B

            """.write(toFile: path("system.conf"), atomically: true, encoding: .utf8)
        service.executableURL = URL(fileURLWithPath: "/usr/bin/rauc")
        service.arguments = ["service", "--conf=\(path("system.conf"))", "--override-boot-slot=A"]
        service.environment = childEnvironment(["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        service.standardInput = FileHandle.nullDevice
        service.standardOutput = serviceLog
        service.standardError = serviceLog
    }

    func path(_ name: String) -> String { directory.appending(name) }

    private func makeCertificate(_ name: String) throws {
        let run = try runProgram(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=Gauge test \(name)",
                "-keyout", path("\(name).key.pem"), "-out", path("\(name).cert.pem"),
            ])
        try #require(run.status == 0, "openssl: \(run.stderr)")
    }

    /// A bundle of the image for `compatible`, signed by `signer`'s key.
    func bundle(_ name: String, compatible: String = "Gauge Test", signer: String = "signing") throws -> String {
        try """
            [update]
            compatible=\(compatible)
            version=1.0

            [bundle]
            format=plain

            [image.rootfs]
            filename=rootfs.img

            """.write(toFile: path("content/manifest.raucm"), atomically: true, encoding: .utf8)
        let output = path(name)
        let run = try runProgram(
            "/usr/bin/rauc",
            ["bundle", "--cert=\(path("\(signer).cert.pem"))", "--key=\(path("\(signer).key.pem"))", path("content"), output])
        try #require(run.status == 0, "rauc bundle: \(run.stdout) \(run.stderr)")
        return output
    }

    func startService() throws { try service.run() }

    /// `rauc install` through the service; RAUC's own account of it.
    func install(_ bundle: String) throws -> ProgramRun {
        try runProgram("/usr/bin/rauc", ["install", bundle], environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
    }

    deinit {
        if service.isRunning {
            kill(service.processIdentifier, SIGKILL)
            service.waitUntilExit()
        }
    }
}

/// The messages `rauc install` printed as it went ("NN% text" lines).
private func progressMessages(_ output: String) -> Set<String> {
    var messages = Set<String>()
    for line in output.split(separator: "\n") {
        let trimmed = line.drop { $0 == " " }
        guard let percent = trimmed.firstIndex(of: "%") else { continue }
        messages.insert(String(trimmed[trimmed.index(after: percent)...].drop { $0 == " " }))
    }
    return messages
}

/// Checks what the daemon showed during one installation: the bar never went back while
/// running, every message is RAUC's (or the start's), and it ran before it ended.
/// The run begins where the bar was reset: between gaugectl's `state running` and its
/// `progress 0` the status still holds the last installation's value.
/// A refused bundle can fail within milliseconds, between two samples: only the good
/// installation must be seen running.
private func checkRun(_ all: [Status], raucMessages: Set<String>, label: String, mustSeeRunning: Bool = true) {
    let samples = Array(all.drop { !($0.state == .running && $0.target < 100) })
    for (before, after) in zip(samples, samples.dropFirst()) where before.state == .running && after.state == .running {
        #expect(after.target >= before.target, "\(label): the bar went back from \(before.target) to \(after.target)")
    }
    let running = samples.filter { $0.state == .running }
    #expect(!mustSeeRunning || !running.isEmpty, "\(label): the daemon never showed the installation running")
    // Full only once RAUC says 100 % and done (a failed step's 100 % does not count).
    for status in running where status.target >= 100 {
        #expect(status.message.hasSuffix("done."), "\(label): the bar was full at '\(status.message)'")
    }
    // (A fresh daemon has no message before gaugectl's first state.)
    for status in running where !["Installing update", ""].contains(status.message) {
        #expect(raucMessages.contains(status.message), "\(label): '\(status.message)' is not one of RAUC's messages")
    }
}

@Suite(.serialized) struct RealRaucTests {
    @Test(.enabled(if: geteuid() == 0, "rauc mounts the bundle on a loop device"))
    func realInstallationsEndInSuccessThenInFailureWithRaucsLastError() throws {
        for tool in tools where !FileManager.default.isExecutableFile(atPath: tool) {
            Issue.record("\(tool) is missing; run tools/install-deps --test (Debian packages rauc, squashfs-tools, openssl)")
            return
        }
        let bus = try PrivateBus()
        let rauc = try RaucSystem(bus: bus)
        let good = try rauc.bundle("update.raucb")
        let forged = try rauc.bundle("forged.raucb", signer: "stranger")
        let foreign = try rauc.bundle("foreign.raucb", compatible: "Another Board")

        let daemon = try GaugedProcess(["--fps", "60"])
        // gaugectl first: it waits for RAUC to come onto the bus, and has subscribed to
        // RAUC's signals by the time it says RAUC answers.
        let client = try PipedGaugectl([
            "--socket", daemon.socketPath, "rauc", "--address", bus.address, "--stall", "0", "--creep", "0",
        ])
        var ended = false
        defer { if !ended { _ = client.terminate() } }
        #expect(client.waitForError(containing: "trying again every second"))
        try rauc.startService()
        #expect(client.waitForError(containing: "the service answers again"), "gaugectl never found RAUC on the bus")

        var sampler = StatusSampler(daemon)
        let installed = try rauc.install(good)
        try #require(installed.status == 0, "rauc install: \(installed.stdout) \(installed.stderr)")
        let success = try daemon.waitForStatus { $0.state == .success }
        #expect(success.message == "Update installed" && success.target == 100)
        checkRun(sampler.stop(), raucMessages: progressMessages(installed.stdout), label: "good bundle")
        let slot = try Data(contentsOf: URL(fileURLWithPath: rauc.path("slot-b.img")))
        let image = try Data(contentsOf: URL(fileURLWithPath: rauc.path("content/rootfs.img")))
        #expect(slot.prefix(image.count) == image, "RAUC did not write the image to the other slot")

        for (bundle, label) in [(forged, "forged signature"), (foreign, "wrong compatible")] {
            sampler = StatusSampler(daemon)
            let refused = try rauc.install(bundle)
            #expect(refused.status != 0, "\(label): rauc install succeeded")
            // RAUC's client prints the service's LastError; the screen must show the same.
            let lastError = refused.stdout.split(separator: "\n").first { $0.hasPrefix("LastError: ") }
                .map { String($0.dropFirst("LastError: ".count)) }
            let expected = try #require(lastError, "\(label): rauc install printed no LastError: \(refused.stdout)")
            let shown = try daemon.waitForStatus(seconds: 30) { $0.state != .running && $0.message == CompatText.clean(expected) }
            #expect(shown.state == .failure, "\(label)")
            checkRun(sampler.stop(), raucMessages: progressMessages(refused.stdout), label: label, mustSeeRunning: false)
        }
        // The next good installation starts the bar again and succeeds.
        let again = try rauc.install(good)
        #expect(again.status == 0)
        let last = try daemon.waitForStatus { $0.state == .success }
        #expect(last.message == "Update installed")
        ended = true
        #expect(client.terminate().status != nil, "gaugectl rauc ends on SIGTERM")
    }
}
