import Foundation
import GaugeProtocol
import Glibc
import Testing
import GaugeTestSupport

// `gaugectl fwupd` against Debian's real fwupd (package fwupd; see tools/install-deps):
// the daemon on a private bus, with directories and a configuration of the test's own
// that turn on its test plugin (TestDevices: a fake webcam that takes firmware), installs
// a cabinet built by `fwupdtool build-cabinet` while gaugectl follows it. The plugin's
// settings make the write slow, ask the user to replug the device (DeviceRequest), or
// fail it. Installing needs root (fwupd asks polkit for anyone else).

private let fwupdDaemon = "/usr/libexec/fwupd/fwupd"
private let fwupdTools = [fwupdDaemon, "/usr/bin/fwupdmgr", "/usr/bin/fwupdtool"]
/// The test plugin's device, and what its replug request says.
private let fakeDeviceGUID = "b585990a-003e-5270-89d5-3705a17f9a43"
private let replugText = "Please pretend to remove the device you cannot see or touch and please re-insert it."

/// fwupd's daemon with `settings` for its test plugin, on `bus`.
private final class FwupdService {
    private let process = Process()

    init(bus: PrivateBus, directory: TemporaryDirectory, testPlugin settings: String) throws {
        let root = directory.appending("fwupd-\(UUID().uuidString.prefix(8))")
        for name in ["etc/fwupd", "var", "cache", "state", "run", "lock"] {
            try FileManager.default.createDirectory(atPath: root + "/" + name, withIntermediateDirectories: true)
        }
        let config = root + "/etc/fwupd/fwupd.conf"
        try "[fwupd]\nTestDevices=true\nOnlyTrusted=false\n[test]\n\(settings)\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        chmod(config, 0o640)  // fwupd refuses a world-readable configuration
        process.executableURL = URL(fileURLWithPath: fwupdDaemon)
        process.environment = childEnvironment([
            "DBUS_SYSTEM_BUS_ADDRESS": bus.address, "FWUPD_SYSCONFDIR": root + "/etc",
            "FWUPD_LOCALSTATEDIR": root + "/var", "CACHE_DIRECTORY": root + "/cache", "STATE_DIRECTORY": root + "/state",
            "FWUPD_RUNDIR": root + "/run", "FWUPD_LOCKDIR": root + "/lock",
        ])
        process.standardInput = FileHandle.nullDevice
        log = root + "/fwupd.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.arguments = ["--verbose"]
        process.standardOutput = output
        process.standardError = output
        try process.run()
    }

    /// The daemon's log, for a failure's message.
    let log: String
    var logText: String { (try? String(contentsOfFile: log, encoding: .utf8)).map { String($0.suffix(1500)) } ?? "" }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// The messages `gaugectl fwupd` shows for fwupd's phases.
private let phaseMessages: Set<String> = [
    "Loading", "Decompressing firmware", "Downloading firmware", "Scheduling the update", "Reading from the device",
    "Erasing the device", "Writing firmware", "Verifying firmware", "Restarting the device",
    "Waiting for authentication", "Waiting for the device", "Waiting for the user",
]

/// What the daemon showed during one operation, from the sample where the bar was reset
/// (see checkRun in the RAUC test): never back while running, only fwupd's phases and
/// `extra` as messages.
private func checkFwupdRun(_ all: [Status], extra: Set<String>, label: String) -> [String] {
    let samples = Array(all.drop { !($0.state == .running && $0.target < 100) })
    let running = samples.filter { $0.state == .running }
    for (before, after) in zip(samples, samples.dropFirst()) where before.state == .running && after.state == .running {
        #expect(after.target >= before.target, "\(label): the bar went back from \(before.target) to \(after.target)")
    }
    for status in running where !phaseMessages.union(extra).union([""]).contains(status.message) {
        Issue.record("\(label): '\(status.message)' is not a message of fwupd's")
    }
    return running.map(\.message)
}

@Suite(.serialized) struct RealFwupdTests {
    @Test(.enabled(if: geteuid() == 0, "fwupd lets root install without polkit"))
    func realUpdateShowsTheReplugRequestAndEndsInSuccessThenAFailedWriteShowsFwupdsError() throws {
        for tool in fwupdTools where !FileManager.default.isExecutableFile(atPath: tool) {
            Issue.record("\(tool) is missing; run tools/install-deps --test (Debian package fwupd)")
            return
        }
        let directory = TemporaryDirectory()
        let metainfo = directory.appending("firmware.metainfo.xml")
        try """
            <?xml version="1.0" encoding="UTF-8"?>
            <component type="firmware">
              <id>org.example.gauge.test.firmware</id>
              <name>Gauge test firmware</name>
              <summary>Firmware for the fake device of fwupd's test plugin</summary>
              <description><p>A payload for the test plugin.</p></description>
              <provides><firmware type="flashed">\(fakeDeviceGUID)</firmware></provides>
              <metadata_license>CC0-1.0</metadata_license>
              <project_license>CC0-1.0</project_license>
              <developer_name>Gauge</developer_name>
              <releases>
                <release version="1.2.4" date="2026-01-01"><description><p>Test release.</p></description></release>
              </releases>
              <custom><value key="LVFS::UpdateProtocol">com.acme.test</value></custom>
            </component>

            """.write(toFile: metainfo, atomically: true, encoding: .utf8)
        try Data((0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 7919 >> 5) })
            .write(to: URL(fileURLWithPath: directory.appending("firmware.bin")))
        let cabinet = directory.appending("firmware.cab")
        let built = try runProgram(
            "/usr/bin/fwupdtool", ["build-cabinet", cabinet, directory.appending("firmware.bin"), metainfo])
        try #require(built.status == 0, "fwupdtool build-cabinet: \(built.stdout) \(built.stderr)")

        let bus = try PrivateBus()
        let daemon = try GaugedProcess(["--fps", "60"])
        let client = try PipedGaugectl([
            "--socket", daemon.socketPath, "fwupd", "--address", bus.address, "--stall", "0", "--creep", "0",
        ])
        var ended = false
        defer { if !ended { _ = client.terminate() } }
        #expect(client.waitForError(containing: "trying again every second"))
        /// fwupdmgr's run; its output with the progress lines it redraws (\r) one a line.
        let install = { () throws -> (status: Int32, output: String) in
            let run = try runProgram(
                "/usr/bin/fwupdmgr", ["install", cabinet, "--allow-reinstall", "--no-reboot-check", "--assume-yes"],
                environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
            return (run.status, (run.stdout + "\n" + run.stderr).replacingOccurrences(of: "\r", with: "\n"))
        }

        // A slow write after the device asked to be replugged.
        var fwupd = try FwupdService(
            bus: bus, directory: directory,
            testPlugin: "RequestSupported=true\nRequestDelay=600\nWriteDelay=300\nVerifyDelay=100")
        #expect(client.waitForError(containing: "the service answers again"), "gaugectl never found fwupd on the bus")
        var sampler = StatusSampler(daemon)
        let updated = try install()
        try #require(updated.status == 0, "fwupdmgr install: \(updated.output.suffix(800))\nfwupd: \(fwupd.logText)")
        let success = try daemon.waitForStatus { $0.state == .success }
        #expect(success.message == "Firmware updated" && success.target == 100)
        let messages = checkFwupdRun(sampler.stop(), extra: [replugText], label: "update")
        #expect(!messages.isEmpty, "the daemon never showed the update running")
        #expect(messages.contains(replugText), "the device's request never showed: \(Set(messages))")
        #expect(messages.contains("Writing firmware"), "\(Set(messages))")

        // fwupd again, with a device that refuses the write.
        fwupd.stop()
        #expect(client.waitForError(containing: "trying again every second", times: 2))
        fwupd = try FwupdService(bus: bus, directory: directory, testPlugin: "WriteSupported=false")
        #expect(client.waitForError(containing: "the service answers again", times: 2))
        sampler = StatusSampler(daemon)
        let refused = try install()
        #expect(refused.status != 0, "fwupdmgr install succeeded")
        let said = refused.output.split(separator: "\n").map(String.init).first { $0.hasSuffix("device was not in supported mode") }
        let error = try #require(said, "fwupdmgr did not say why: \(refused.output.suffix(800))")
        let failure = try daemon.waitForStatus { $0.state == .failure }
        #expect(failure.message == error)
        _ = checkFwupdRun(sampler.stop(), extra: [], label: "failed write")
        ended = true
        #expect(client.terminate().status != nil, "gaugectl fwupd ends on SIGTERM")
    }
}
