import Foundation
import GaugeProtocol
import Glibc
import Testing
import GaugeTestSupport

// The D-Bus sources (`gaugectl systemd`, ...) against a private bus: `dbus-daemon
// --session` started by the test, and gauge-dbus-replay standing in for the tool's
// service, replaying a trace of its interface command by command.

/// Reads one line from `fd` within `seconds`; nil on timeout or end of file.
private func readLine(_ fd: Int32, seconds: Double = 30) -> String? {
    var line: [UInt8] = []
    let deadline = monotonicNow() + seconds
    while monotonicNow() < deadline {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, 100) >= 0 else { return nil }
        guard entry.revents != 0 else { continue }
        var byte: UInt8 = 0
        guard read(fd, &byte, 1) == 1 else { return nil }
        if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
        line.append(byte)
    }
    return nil
}

/// The peak resident set of process `pid` (VmHWM), in kB.
func peakResidentKilobytes(of pid: pid_t) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.dropFirst(6).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
    }
    return nil
}

/// A message bus of the test's own.
final class PrivateBus {
    let address: String
    private let process = Process()

    init() throws {
        let daemon = "/usr/bin/dbus-daemon"
        try #require(FileManager.default.isExecutableFile(atPath: daemon), "dbus-daemon is missing: run tools/install-deps --test")
        process.executableURL = URL(fileURLWithPath: daemon)
        process.arguments = ["--session", "--nofork", "--nopidfile", "--print-address=1"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        address = try #require(readLine(output.fileHandleForReading.fileDescriptor), "dbus-daemon printed no address")
    }

    deinit {
        // SIGKILL: a signal mask the test thread passed on may hold SIGTERM back.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// gauge-dbus-replay on `bus`: owns `name` and serves `properties` ("Name:signature")
/// on `path`, `interface`.
final class ReplayService {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()

    init(bus: PrivateBus, name: String, path: String, interface: String, properties: [String]) throws {
        process.executableURL = URL(fileURLWithPath: try BuiltBinary.require(BuiltBinary.dbusReplay, "gauge-dbus-replay"))
        process.arguments = [bus.address, name, path, interface] + properties
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        try #require(readLine(output.fileHandleForReading.fileDescriptor) == "ok", "the replay service did not start")
    }

    /// Sends one command (fields joined by tabs) and waits for its answer.
    func send(_ fields: String...) throws {
        input.fileHandleForWriting.write(Data((fields.joined(separator: "\t") + "\n").utf8))
        let answer = readLine(output.fileHandleForReading.fileDescriptor)
        try #require(answer == "ok", "replay: \(fields) answered \(answer ?? "nothing")")
    }

    deinit {
        try? input.fileHandleForWriting.close()
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// Stands between gaugectl and gauged on a socket of its own: passes the bytes both ways
/// and keeps what the clients sent, the bytes gauged receives. With `refusing`, it answers
/// each request line that starts so itself, as a daemon that does not know it would
/// (`err unknown`), and gauged never sees it (a batch comes in one write: its lines are
/// taken one by one).
final class RecordingRelay: @unchecked Sendable {
    let path: String
    private let listener: Int32
    private let lock = NSLock()
    private var bytes: [UInt8] = []
    private let refusing: String?

    init(to target: String, at path: String, refusing: String? = nil) {
        self.path = path
        self.refusing = refusing
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        precondition(bound == 0 && listen(listener, 8) == 0, "the relay cannot listen: errno \(errno)")
        Thread { [self] in
            while case let client = accept(listener, nil, nil), client >= 0 {
                Thread { [self] in pump(client, to: target) }.start()
            }
        }.start()
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func pump(_ client: Int32, to target: String) {
        defer { close(client) }
        guard let server = try? LineConnection(path: target) else { return }
        var entries = [pollfd(fd: client, events: Int16(POLLIN), revents: 0), pollfd(fd: server.fd, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 4096)
        while poll(&entries, 2, -1) > 0 {
            for side in 0..<2 where entries[side].revents != 0 {
                let count = read(entries[side].fd, &buffer, buffer.count)
                guard count > 0 else { return }
                if side == 0 { lock.withLock { bytes += buffer[..<count] } }
                if side == 0, let refusing {
                    for line in buffer[..<count].split(separator: UInt8(ascii: "\n")) {
                        if line.starts(with: refusing.utf8) {
                            _ = send(client, "err unknown unknown command\n", 28, Int32(MSG_NOSIGNAL))
                        } else {
                            _ = send(server.fd, Array(line) + [UInt8(ascii: "\n")], line.count + 1, Int32(MSG_NOSIGNAL))
                        }
                    }
                    continue
                }
                _ = send(entries[1 - side].fd, buffer, count, Int32(MSG_NOSIGNAL))
            }
        }
    }

    /// The request lines the clients sent so far.
    var lines: [String] {
        lock.withLock { String(decoding: bytes, as: UTF8.self) }.split(separator: "\n").map(String.init)
    }

    /// Waits (10 s at most) until a client has sent `line`.
    func waitFor(_ line: String) -> Bool {
        let deadline = monotonicNow() + 10
        while monotonicNow() < deadline {
            if lines.contains(line) { return true }
            usleep(20_000)
        }
        return false
    }
}

private func systemdManager(_ bus: PrivateBus) throws -> ReplayService {
    try ReplayService(
        bus: bus, name: "org.freedesktop.systemd1", path: "/org/freedesktop/systemd1",
        interface: "org.freedesktop.systemd1.Manager", properties: ["Progress:d", "SystemState:s", "NFailedUnits:u"])
}

/// systemd's Manager during a boot, for `gaugectl systemd --waits`: its jobs, unit objects
/// and job signals replayed by the test.
private func systemdBooting(_ bus: PrivateBus) throws -> ReplayService {
    let manager = try ReplayService(
        bus: bus, name: "org.freedesktop.systemd1", path: "/org/freedesktop/systemd1",
        interface: "org.freedesktop.systemd1.Manager", properties: ["UnitsLoadFinishTimestampMonotonic:t", "SystemState:s"])
    try manager.send("set", "SystemState", "starting")
    return manager
}

/// A booting systemd with one start job, for a disk that never comes (`dev-sdb.device`),
/// a daemon whose `wait_notice` is 1 s, and `gaugectl systemd --waits` following them.
private func followingADiskThatNeverComes() throws -> (PrivateBus, ReplayService, GaugedProcess, PipedGaugectl) {
    let bus = try PrivateBus()
    let manager = try systemdBooting(bus)
    let disk = "/org/freedesktop/systemd1/unit/dev_2dsdb_2edevice"
    try manager.send("unit", disk, "/dev/sdb", "0", "0")
    try manager.send("job", "7", "dev-sdb.device", "start", "running", disk)
    let daemon = try GaugedProcess(["--fps", "60"])
    _ = try daemon.request("theme wait_notice=1")
    let client = try PipedGaugectl(["--socket", daemon.socketPath, "systemd", "--waits", "--address", bus.address])
    return (bus, manager, daemon, client)
}

@Suite struct GaugedBusSourceTests {
    @Test func systemdBootFollowsProgressWithoutGoingBackAndEndsDegraded() throws {
        let bus = try PrivateBus()
        let daemon = try GaugedProcess(["--fps", "60"])
        let sampler = StatusSampler(daemon)
        // gaugectl first: systemd is not on the bus yet, which it waits for.
        let client = try PipedGaugectl([
            "--socket", daemon.socketPath, "systemd", "--address", bus.address, "--interval", "0.02", "--stall", "0",
        ])
        #expect(client.waitForError(containing: "trying again every second"))
        let manager = try systemdManager(bus)
        try manager.send("set", "Progress", "0.1")
        try manager.send("set", "SystemState", "starting")
        try daemon.waitForStatus { $0.target == 10 && $0.message == "Starting the system" && $0.state == .running }
        // New jobs: systemd's Progress falls; the bar holds.
        try manager.send("set", "Progress", "0.05")
        try manager.send("set", "Progress", "0.02")
        try manager.send("set", "Progress", "0.4")
        try daemon.waitForStatus { $0.target == 40 }
        try manager.send("set", "NFailedUnits", "2")
        try manager.send("set", "Progress", "1")
        try manager.send("set", "SystemState", "degraded")
        let final = try daemon.waitForStatus { $0.state == .failure }
        #expect(final.message == "2 units failed")
        let end = client.close()
        #expect(end.status == 0, "the boot is over: gaugectl ends")
        #expect(end.stderr.contains("the service answers again"), "\(end.stderr)")
        let samples = sampler.stop()
        for (before, after) in zip(samples, samples.dropFirst()) {
            #expect(after.target >= before.target, "the bar went back from \(before.target) to \(after.target)")
        }
        #expect(!samples.contains { $0.state == .success })
    }

    /// A first boot (no history), five seconds into it in a time namespace: `gaugectl
    /// systemd --boot-estimate` tells the daemon systemd's share of jobs done, the
    /// estimate follows it (never back while the share falls), and the bar stays the
    /// estimate's: no `progress` and no success at the end; gaugectl ends with the boot.
    @Test(.enabled(if: geteuid() == 0, "a time namespace needs root"))
    func systemdJobsCarryAFirstBootsEstimate() throws {
        let (bus, manager, daemon, history) = try firstBootFiveSecondsIn()
        _ = history
        let start = try daemon.status()
        #expect(start.target < 30, "the first boot's curve five seconds in: \(start.target)")
        let sampler = StatusSampler(daemon)
        let client = try PipedGaugectl([
            "--socket", daemon.socketPath, "systemd", "--boot-estimate", "--address", bus.address, "--interval", "0.02",
        ])
        try manager.send("set", "Progress", "0.5")
        let half = try daemon.waitForStatus { $0.target >= 55 }
        #expect(half.target < 65, "half the jobs: half the rest of the bar, \(half.target)")
        try manager.send("set", "Progress", "0.3")  // new jobs: systemd's share falls
        try manager.send("set", "Progress", "0.9")
        let late = try daemon.waitForStatus { $0.target >= 85 }
        #expect(late.target < 95, "never the end: \(late.target)")
        try manager.send("set", "Progress", "1")
        try manager.send("set", "SystemState", "running")
        let end = client.close()
        #expect(end.status == 0, "the boot is over: gaugectl ends quietly (\(end.stderr))")
        let samples = sampler.stop()
        for (before, after) in zip(samples, samples.dropFirst()) {
            #expect(after.target >= before.target, "the bar went back from \(before.target) to \(after.target)")
        }
        #expect(!samples.contains { $0.state == .success }, "the estimate's bar, not a finished one")
        #expect(daemon.log.contains("no boot history yet"), "\(daemon.log)")
        #expect(!daemon.log.contains("the boot estimate stops"), "jobs leave the estimate running")
    }

    /// A daemon that is there but slow to answer (stopped here for longer than gaugectl's
    /// timeout, as a loaded machine's can be) does not end the jobs' feed: the shares sent
    /// meanwhile fail, the next one after it answers again goes through. Only a daemon gone
    /// with its socket ends it.
    @Test(.enabled(if: geteuid() == 0, "a time namespace needs root"))
    func theJobsFeedOutlastsADaemonSlowToAnswer() throws {
        let (bus, manager, daemon, history) = try firstBootFiveSecondsIn()
        _ = history
        let client = try PipedGaugectl([
            "--socket", daemon.socketPath, "--timeout", "0.2", "systemd", "--boot-estimate", "--address", bus.address,
            "--interval", "0.02",
        ])
        try manager.send("set", "Progress", "0.5")
        try daemon.waitForStatus { $0.target >= 55 }
        // unshare's child is the daemon: stop every process of the group.
        let child = try #require(childPIDs(of: daemon.pid).first, "unshare forked the daemon")
        Glibc.kill(child, SIGSTOP)
        try manager.send("set", "Progress", "0.9")
        usleep(800_000)
        Glibc.kill(child, SIGCONT)
        // Its samples failed meanwhile (each after 0.2 s): still feeding, the next one
        // goes through. (The estimate rises on its own too: the feed's life is the proof.)
        usleep(300_000)
        #expect(client.process.isRunning, "the feed ended on a daemon slow to answer")
        let late = try daemon.waitForStatus(seconds: 10) { $0.target >= 85 }
        #expect(late.target < 95, "the share after the pause reached the daemon: \(late.target)")
        try manager.send("set", "Progress", "1")
        try manager.send("set", "SystemState", "running")
        let end = client.close()
        #expect(end.status == 0, "the boot is over: gaugectl ends quietly (\(end.stderr))")
    }

    /// A boot that stops moving: a disk's start job runs on while the theme's wait_notice
    /// (1 s here) passes; `gaugectl systemd --waits` names it with its description, how
    /// long it has run and its limit, again each second, never a job that only waits for
    /// others, and clears the message when the job ends; it ends with the boot.
    @Test func systemdWaitsNameTheStartJobTheBootWaitsFor() throws {
        let bus = try PrivateBus()
        let manager = try systemdBooting(bus)
        let disk = "/org/freedesktop/systemd1/unit/dev_2ddisk_2dby_5cx2duuid_2d1234_2edevice"
        let local = "/org/freedesktop/systemd1/unit/local_2dfs_2etarget"
        try manager.send("unit", disk, "/dev/disk/by-uuid/1234", "90000000", "0")
        try manager.send("unit", local, "Local File Systems", "0", "0")
        try manager.send("job", "7", "dev-disk-by\\x2duuid-1234.device", "start", "running", disk)
        try manager.send("job", "8", "local-fs.target", "start", "waiting", local)
        let daemon = try GaugedProcess(["--fps", "60"])
        _ = try daemon.request("theme wait_notice=1")
        _ = try daemon.request("message Mounting")
        let client = try PipedGaugectl(["--socket", daemon.socketPath, "systemd", "--waits", "--address", bus.address])
        let named = try daemon.waitForStatus(seconds: 10) { $0.message.hasPrefix("Waiting for") }
        #expect(named.message == "Waiting for /dev/disk/by-uuid/1234 (1 s of 1 min 30 s)", "\(named.message)")
        let later = try daemon.waitForStatus(seconds: 10) { $0.message.hasPrefix("Waiting for /dev/disk/by-uuid/1234 (2 s of") }
        #expect(later.message == "Waiting for /dev/disk/by-uuid/1234 (2 s of 1 min 30 s)")
        // The disk came: its job ends.
        try manager.send("unjob", "7")
        try manager.send("signal", "JobRemoved", "u", "7", "o", "/org/freedesktop/systemd1/job/7", "s",
                         "dev-disk-by\\x2duuid-1234.device", "s", "done")
        try daemon.waitForStatus(seconds: 10) { $0.message.isEmpty }
        // The target's job, still waiting for others, is not what the boot waits for.
        usleep(1_500_000)
        #expect(try daemon.status().message.isEmpty, "a job that only waits is never named")
        try manager.send("signal", "StartupFinished", "u", "0")
        let end = client.close()
        #expect(end.status == 0, "the boot is over: gaugectl ends (\(end.stderr))")
        // Started on a system that is up: nothing to follow, nothing shown.
        try manager.send("set", "SystemState", "running")
        let late = try gaugectl(["--socket", daemon.socketPath, "systemd", "--waits", "--address", bus.address])
        #expect(late.status == 0 && late.stderr.contains("the system is running; no boot to follow"), "\(late.stderr)")
    }

    /// A passphrase asked: its cryptsetup job runs past the notice while systemd's
    /// password request is there, and the boot waits for a person, not a stall: nothing is
    /// named until the request goes (answered), then the job if it still runs.
    @Test func systemdWaitsNameNoJobWhileAPasswordIsAsked() throws {
        let bus = try PrivateBus()
        let manager = try systemdBooting(bus)
        let unit = "/org/freedesktop/systemd1/unit/systemd_2dcryptsetup_40root_2eservice"
        try manager.send("unit", unit, "Cryptography Setup for root", "0", "0")
        try manager.send("job", "9", "systemd-cryptsetup@root.service", "start", "running", unit)
        let asks = TemporaryDirectory()
        let request = asks.appending("ask.Xyz123")
        #expect(FileManager.default.createFile(atPath: request, contents: Data("[Ask]\nPID=1\n".utf8)))
        let daemon = try GaugedProcess(["--fps", "60"])
        _ = try daemon.request("theme wait_notice=0.5")
        _ = try daemon.request("message Unlocking")
        let client = try PipedGaugectl([
            "--socket", daemon.socketPath, "systemd", "--waits", "--address", bus.address, "--ask-password-dir", asks.path,
        ])
        usleep(2_000_000)
        #expect(try daemon.status().message == "Unlocking", "a job waiting for a passphrase named as a stall")
        try FileManager.default.removeItem(atPath: request)
        let named = try daemon.waitForStatus(seconds: 10) { $0.message.hasPrefix("Waiting for") }
        #expect(named.message.hasPrefix("Waiting for Cryptography Setup for root ("), "\(named.message)")
        try manager.send("signal", "StartupFinished", "u", "0")
        #expect(client.close().status == 0)
        let misplaced = try gaugectl(["systemd", "--ask-password-dir", asks.path])
        #expect(misplaced.status == 2 && misplaced.stderr.contains("--ask-password-dir goes with --waits"), "\(misplaced.stderr)")
    }

    /// How the boot's steps read: `gaugectl systemd --waits` reads the Description of
    /// each start job's unit that systemd sends as a step, once, from ListJobs and JobNew
    /// (its object path made from the name), and sends it (`describe`, checked as gauged
    /// receives it); gauged shows the steps so, names the others, never its own units.
    @Test func systemdWaitsDescribeTheBootsSteps() throws {
        let bus = try PrivateBus()
        let manager = try systemdBooting(bus)
        let unitPath = "/org/freedesktop/systemd1/unit/"
        for (unit, path, description) in [
            ("systemd-journald.service", "systemd_2djournald_2eservice", "Journal Service"),
            ("boot.mount", "boot_2emount", "/boot"), ("local-fs.target", "local_2dfs_2etarget", "Local File Systems"),
            ("gauged-waits.service", "gauged_2dwaits_2eservice", "Boot Screen Waits"),
            ("plain.service", "plain_2eservice", "plain.service"),
            ("systemd-fsck@dev-disk-by\\x2duuid-12.service", "systemd_2dfsck_40dev_2ddisk_2dby_5cx2duuid_2d12_2eservice", "File System Check on /dev/disk/by-uuid/12"),
        ] {
            try manager.send("unit", unitPath + path, description, "0", "0")
            try manager.send("job", "\(unit.utf8.count)", unit, "start", "waiting", unitPath + path)
        }
        for unit in ["boot.mount", "systemd-fsck@dev-disk-by\\x2duuid-12.service"] { try manager.send("unjob", "\(unit.utf8.count)") }
        let daemon = try GaugedProcess(["--fps", "60"])
        let relay = RecordingRelay(to: daemon.socketPath, at: daemon.directory.appending("relay.sock"))
        let client = try PipedGaugectl(["--socket", relay.path, "systemd", "--waits", "--address", bus.address])
        // Every loaded unit at once (ListUnits), jobs or not yet.
        let fsck = "describe systemd-fsck@dev-disk-by\\x2duuid-12.service File System Check on /dev/disk/by-uuid/12"
        #expect(relay.waitFor(fsck), "\(relay.lines)")
        try manager.send("signal", "JobNew", "u", "99", "o", "/org/freedesktop/systemd1/job/99", "s", "boot.mount")
        // A unit loaded later: JobNew names it, not its object, whose Description is read.
        try manager.send("unit", unitPath + "late_2dwork_2eservice", "Late Work", "0", "0")
        try manager.send("signal", "JobNew", "u", "98", "o", "/org/freedesktop/systemd1/job/98", "s", "late-work.service")
        #expect(relay.waitFor("describe late-work.service Late Work"), "\(relay.lines)")
        try manager.send("signal", "JobNew", "u", "100", "o", "/org/freedesktop/systemd1/job/100", "s", "late-work.service")
        try manager.send("signal", "StartupFinished", "u", "0")
        let end = client.close()
        #expect(end.status == 0, "\(end.stderr)")
        // Once each, only the steps that read better than their names, never Gauge's own.
        #expect(relay.lines == [
            "status", "describe systemd-journald.service Journal Service", "describe boot.mount /boot", fsck,
            "describe late-work.service Late Work",
        ])
        for (step, shown) in [
            ("systemd-journald.service", "Journal Service"), ("boot.mount", "/boot"), ("plain.service", "plain.service"),
            ("gauged-waits.service", "plain.service"),
        ] {
            #expect(try daemon.request("step \(step)") == "ok")
            #expect(try daemon.status().message == shown, "\(step)")
        }
    }

    /// A daemon older than `describe` answers it `err unknown`: the follower says once that
    /// the steps keep their names, reads and sends no more descriptions, and goes on
    /// naming what the boot waits for, to the boot's end (exit 0).
    @Test func systemdWaitsGoOnWithADaemonThatTakesNoDescriptions() throws {
        let bus = try PrivateBus()
        let manager = try systemdBooting(bus)
        let unitPath = "/org/freedesktop/systemd1/unit/"
        try manager.send("unit", unitPath + "systemd_2djournald_2eservice", "Journal Service", "0", "0")
        try manager.send("unit", unitPath + "boot_2emount", "/boot", "0", "0")
        try manager.send("unit", unitPath + "dev_2dsdb_2edevice", "/dev/sdb", "0", "0")
        try manager.send("job", "1", "systemd-journald.service", "start", "waiting", unitPath + "systemd_2djournald_2eservice")
        try manager.send("job", "2", "dev-sdb.device", "start", "running", unitPath + "dev_2dsdb_2edevice")
        let daemon = try GaugedProcess(["--fps", "60"])
        _ = try daemon.request("theme wait_notice=1")
        let relay = RecordingRelay(to: daemon.socketPath, at: daemon.directory.appending("relay.sock"), refusing: "describe ")
        let client = try PipedGaugectl(["--socket", relay.path, "systemd", "--waits", "--address", bus.address])
        #expect(client.waitForError(containing: "the boot's steps keep their units' names"))
        // A unit loaded later: not read, not sent.
        try manager.send("unit", unitPath + "late_2eservice", "Late Service", "0", "0")
        try manager.send("signal", "JobNew", "u", "3", "o", "/org/freedesktop/systemd1/job/3", "s", "late.service")
        let named = try daemon.waitForStatus(seconds: 10) { $0.message.hasPrefix("Waiting for") }
        #expect(named.message == "Waiting for /dev/sdb (1 s)")
        try manager.send("signal", "StartupFinished", "u", "0")
        let end = client.close()
        #expect(end.status == 0, "\(end.stderr)")
        // The loaded units' descriptions went in one batch, answered `err` each; no more after.
        #expect(relay.lines.filter { $0.hasPrefix("describe") }
            == ["describe systemd-journald.service Journal Service", "describe boot.mount /boot"])
    }

    /// The disk never comes and the boot goes to emergency mode: the notice goes, and the
    /// follower leaves the screen to the failure screen's unit (whose own job, waiting for
    /// a key, it would otherwise take for what the boot waits for).
    @Test func systemdWaitsEndWhenTheBootGoesToEmergencyMode() throws {
        let (bus, manager, daemon, client) = try followingADiskThatNeverComes()
        _ = bus
        let named = try daemon.waitForStatus(seconds: 10) { $0.message.hasPrefix("Waiting for") }
        #expect(named.message == "Waiting for /dev/sdb (1 s)", "no limit set: none said")
        try manager.send("signal", "JobNew", "u", "9", "o", "/org/freedesktop/systemd1/job/9", "s", "emergency.target")
        try daemon.waitForStatus(seconds: 10) { $0.message.isEmpty }
        let end = client.close()
        #expect(end.status == 0, "the failure screen takes over: gaugectl ends (\(end.stderr))")
    }

    @Test func systemdWaitsPutTheFailureScreenUpWhenSystemdQueuesGaugesHandler() throws {
        let (bus, manager, daemon, client) = try followingADiskThatNeverComes()
        _ = bus
        // Following: the disk's wait is named.
        try daemon.waitForStatus(seconds: 10) { $0.message.hasPrefix("Waiting for") }
        try manager.send("signal", "JobNew", "u", "30", "o", "/org/freedesktop/systemd1/job/30", "s", "gauged-unit-failed@example.service.service")
        let shown = try daemon.waitForStatus(seconds: 10) { $0.failure != nil }
        #expect(shown.failure == Status.Failure(
            title: "Part of this system could not start", summary: "example.service failed", lines: 0, dropped: 0, boot: thisBoot))
        #expect(shown.state == .failure)
        // A second unit's handler while the screen is up: the screen is its script's to rebuild.
        try manager.send("signal", "JobNew", "u", "31", "o", "/org/freedesktop/systemd1/job/31", "s", "gauged-unit-failed@other.service.service")
        try manager.send("signal", "JobNew", "u", "32", "o", "/org/freedesktop/systemd1/job/32", "s", "gauged-unit-failed@.service")
        usleep(300_000)
        #expect(try daemon.status().failure?.summary == "example.service failed")
        // The boot goes to emergency mode (a failed mount's local-fs.target queues it): the
        // failed boot's screen at once, in its handler's first words, over the unit's.
        try manager.send("signal", "JobNew", "u", "33", "o", "/org/freedesktop/systemd1/job/33", "s", "emergency.target")
        let failed = try daemon.waitForStatus(seconds: 10) { $0.failure?.title != "Part of this system could not start" }
        #expect(failed.failure == Status.Failure(
            title: "This system could not start", summary: "The boot stopped in emergency mode", lines: 0, dropped: 0, boot: thisBoot))
        let end = client.close()
        #expect(end.status == 0, "\(end.stderr)")
    }

    /// Rescue mode queued during the boot gets its own words; a failure screen of another
    /// producer's (an installer's) is never replaced.
    @Test func systemdWaitsPutTheFailedBootsScreenUpOnlyOverTheSplash() throws {
        let rescue = try failureWhileFollowing(queued: "rescue.target")
        #expect(rescue?.title == "This system is in rescue mode")
        #expect(rescue?.summary == "The boot stopped in rescue mode")

        let (bus2, manager2, daemon2, client2) = try followingADiskThatNeverComes()
        _ = bus2
        try daemon2.waitForStatus(seconds: 10) { $0.message.hasPrefix("Waiting for") }
        #expect(try daemon2.request("failure Installation failed") == "ok")
        try manager2.send("signal", "JobNew", "u", "41", "o", "/org/freedesktop/systemd1/job/41", "s", "emergency.target")
        #expect(client2.close().status == 0)
        #expect(try daemon2.status().failure?.title == "Installation failed")
    }

    /// A boot that failed as the follower started (emergency mode, or dracut's emergency
    /// shell in its systemd initrd, already queued when it lists the jobs): the failed
    /// boot's screen at once, and the follower ends; dracut's shell queued later is the
    /// same.
    @Test func systemdWaitsPutTheFailedBootsScreenUpForAModeQueuedBeforeIt() throws {
        for unit in ["emergency.target", "dracut-emergency.service"] {
            let bus = try PrivateBus()
            let manager = try systemdBooting(bus)
            try manager.send("job", "9", unit, "start", "waiting", "/")
            let daemon = try GaugedProcess(["--fps", "60"])
            let client = try PipedGaugectl(["--socket", daemon.socketPath, "systemd", "--waits", "--address", bus.address])
            let shown = try daemon.waitForStatus(seconds: 10) { $0.failure != nil }
            #expect(shown.failure == Status.Failure(
                title: "This system could not start", summary: "The boot stopped in emergency mode", lines: 0, dropped: 0,
                boot: thisBoot), "\(unit)")
            let end = client.close()
            #expect(end.status == 0, "\(unit): \(end.stderr)")
        }
        #expect(try failureWhileFollowing(queued: "dracut-emergency.service")?.summary == "The boot stopped in emergency mode")
    }

    /// The failure screen shown once systemd queues `unit` while the follower names a wait,
    /// the follower then ended (exit 0).
    private func failureWhileFollowing(queued unit: String) throws -> Status.Failure? {
        let (bus, manager, daemon, client) = try followingADiskThatNeverComes()
        _ = bus
        try daemon.waitForStatus(seconds: 10) { $0.message.hasPrefix("Waiting for") }
        try manager.send("signal", "JobNew", "u", "40", "o", "/org/freedesktop/systemd1/job/40", "s", unit)
        let shown = try daemon.waitForStatus(seconds: 10) { $0.failure != nil }
        #expect(client.close().status == 0, "\(unit)")
        return shown.failure
    }

    @Test func systemdAlreadyRunningLeavesTheScreenAlone() throws {
        let bus = try PrivateBus()
        let daemon = try GaugedProcess(["--fps", "60"])
        let manager = try systemdManager(bus)
        try manager.send("set", "Progress", "1")
        try manager.send("set", "SystemState", "running")
        let before = try daemon.status()
        let run = try gaugectl(["--socket", daemon.socketPath, "systemd", "--address", bus.address])
        #expect(run.status == 0)
        #expect(run.stderr.contains("running already"), "\(run.stderr)")
        let status = try daemon.status()
        #expect(status.state == before.state && status.target == before.target && status.message == before.message)
    }

    @Test func raucInstallationsEndInSuccessThenFailureWithRaucsError() throws {
        let bus = try PrivateBus()
        let daemon = try GaugedProcess(["--fps", "60"])
        let rauc = try ReplayService(
            bus: bus, name: "de.pengutronix.rauc", path: "/", interface: "de.pengutronix.rauc.Installer",
            properties: ["Operation:s:change", "Progress:(isi):change", "LastError:s:change"])
        try rauc.send("set", "Operation", "idle")
        let sampler = StatusSampler(daemon)
        // No --interval: every change comes by a signal.
        let client = try PipedGaugectl([
            "--socket", daemon.socketPath, "rauc", "--address", bus.address, "--stall", "0", "--creep", "0",
        ])
        try rauc.send("set", "Progress", "0", "Installing", "1")
        try rauc.send("set", "Operation", "installing")
        try daemon.waitForStatus { $0.state == .running && $0.message == "Installing" }
        for (percent, message, depth) in [
            ("20", "Checking bundle done.", "2"), ("80", "Copying image to rootfs.1", "3"),
            ("100", "Installing done.", "1"),
        ] {
            try rauc.send("set", "Progress", percent, message, depth)
            // RAUC's 100 % comes before Completed: not the end yet.
            try daemon.waitForStatus { $0.message == message && $0.target == min(Double(percent)!, 99.9) }
        }
        // RAUC's order: Completed, then Operation back to idle.
        try rauc.send("signal", "Completed", "i", "0")
        try rauc.send("set", "Operation", "idle")
        let success = try daemon.waitForStatus { $0.state == .success }
        #expect(success.message == "Update installed" && success.target == 100)
        let firstRun = sampler.stop()
        for (before, after) in zip(firstRun, firstRun.dropFirst()) {
            #expect(after.target >= before.target, "the bar went back from \(before.target) to \(after.target)")
        }

        // The next installation fails.
        try rauc.send("set", "Progress", "0", "Installing", "1")
        try rauc.send("set", "Operation", "installing")
        try daemon.waitForStatus { $0.state == .running && $0.target == 0 }
        try rauc.send("set", "Progress", "10", "Checking bundle done.", "2")
        try daemon.waitForStatus { $0.target == 10 }
        // A failed step at 100 % does not fill the bar.
        try rauc.send("set", "Progress", "100", "Installing failed.", "1")
        try daemon.waitForStatus { $0.message == "Installing failed." }
        try rauc.send("set", "LastError", "Failed to check bundle: signature mismatch")
        // Operation idle with 100 % ... done. would look like a success; Completed's result says otherwise.
        try rauc.send("set", "Progress", "100", "Installing done.", "1")
        try rauc.send("signal", "Completed", "i", "1")
        try rauc.send("set", "Operation", "idle")
        let failure = try daemon.waitForStatus { $0.state == .failure }
        #expect(failure.message == "Failed to check bundle: signature mismatch")
        let end = client.terminate()
        #expect(end.status != nil, "gaugectl rauc ends on SIGTERM")
    }

    /// PackageKit's transaction signals as `gaugectl packagekit` follows them during an
    /// offline update: the package being worked on named with the warning, a package
    /// finished naming nothing new, and an ErrorCode the failure at once, naming the
    /// package that failed, with PackageKit's details on one line.
    @Test func packagekitNamesThePackageAndShowsAFailureAtOnce() throws {
        let bus = try PrivateBus()
        let daemon = try GaugedProcess(["--fps", "60"])
        let transaction = try ReplayService(
            bus: bus, name: "org.freedesktop.PackageKit", path: "/42_abcdef",
            interface: "org.freedesktop.PackageKit.Transaction", properties: ["Percentage:u"])
        let client = try PipedGaugectl(["--socket", daemon.socketPath, "packagekit", "--address", bus.address])
        let updating = "Updating gauge-demo-a 1.1. Do not turn off the computer."
        // gaugectl subscribes after it starts: the first signal again until it is shown.
        var named = false
        for _ in 0..<50 where !named {
            try transaction.send("signal", "Package", "u", "11", "s", "gauge-demo-a;1.1;all;local", "s", "A demo")
            usleep(100_000)
            named = try daemon.status().message == updating
        }
        #expect(named, "the package being updated is named")
        try transaction.send("signal", "Package", "u", "18", "s", "gauge-demo-a;1.1;all;local", "s", "A demo")
        try transaction.send("signal", "Package", "u", "22", "s", "gauge-demo-b;1.1;all;local", "s", "B demo")
        try daemon.waitForStatus { $0.message == "Unpacking gauge-demo-b 1.1. Do not turn off the computer." }
        try transaction.send(
            "signal", "ErrorCode", "u", "6", "s",
            "dpkg: error processing package gauge-demo-b (--configure):\r installed post-installation script returned error exit status 1")
        let failure = try daemon.waitForStatus { $0.state == .failure }
        #expect(
            failure.message
                == "The update failed while unpacking gauge-demo-b 1.1: dpkg: error processing package gauge-demo-b (--configure): installed post-installation script returned error exit status 1",
            "\(failure.message)")
        // Nothing after the failure takes its line.
        try transaction.send("signal", "Package", "u", "11", "s", "gauge-demo-c;1.1;all;local", "s", "C demo")
        usleep(300_000)
        #expect(try daemon.status().message == failure.message)
        let end = client.terminate()
        #expect(end.status != nil, "gaugectl packagekit ends on SIGTERM")
    }

    /// RAUC dying in the middle of an installation and coming back: the dead installation
    /// ends in failure on the screen, and the next one starts from 0, not from the dead
    /// one's 81 %.
    @Test func raucRestartedMidInstallationClosesItOutAndTheNextStartsFromZero() throws {
        let bus = try PrivateBus()
        let daemon = try GaugedProcess(["--fps", "60"])
        let properties = ["Operation:s:change", "Progress:(isi):change", "LastError:s:change"]
        func startRauc() throws -> ReplayService {
            let rauc = try ReplayService(
                bus: bus, name: "de.pengutronix.rauc", path: "/", interface: "de.pengutronix.rauc.Installer",
                properties: properties)
            try rauc.send("set", "Operation", "idle")
            return rauc
        }
        var rauc: ReplayService? = try startRauc()
        let client = try PipedGaugectl([
            "--socket", daemon.socketPath, "rauc", "--address", bus.address, "--stall", "0", "--creep", "0",
        ])
        defer { _ = client.terminate() }
        try rauc?.send("set", "Progress", "0", "Installing", "1")
        try rauc?.send("set", "Operation", "installing")
        try rauc?.send("set", "Progress", "81", "Copying image to rootfs.1", "3")
        try daemon.waitForStatus { $0.state == .running && $0.target == 81 }
        rauc = nil
        let closed = try daemon.waitForStatus(seconds: 10) { $0.state != .running }
        #expect(closed.state == .failure && closed.message == "Installation interrupted: RAUC stopped", "\(closed.json())")

        rauc = try startRauc()
        #expect(client.waitForError(containing: "the service answers again"))
        let sampler = StatusSampler(daemon)
        try rauc?.send("set", "Progress", "0", "Installing", "1")
        try rauc?.send("set", "Operation", "installing")
        try daemon.waitForStatus(seconds: 10) { $0.state == .running && $0.target == 0 }
        try rauc?.send("set", "Progress", "20", "Checking bundle done.", "2")
        try daemon.waitForStatus(seconds: 10) { $0.state == .running && $0.target == 20 }
        let samples = sampler.stop()
        #expect(!samples.contains { $0.state == .running && $0.target > 20 }, "the dead installation's value is back")
    }

    /// fwupd going away mid-update: the update is closed out in failure, so the next one
    /// starts from 0 again.
    @Test func fwupdStoppedMidUpdateClosesItOut() throws {
        let bus = try PrivateBus()
        let daemon = try GaugedProcess(["--fps", "60"])
        var fwupd: ReplayService? = try ReplayService(
            bus: bus, name: "org.freedesktop.fwupd", path: "/", interface: "org.freedesktop.fwupd",
            properties: ["Status:u:change", "Percentage:u:change"])
        try fwupd?.send("set", "Status", "1")
        let client = try PipedGaugectl([
            "--socket", daemon.socketPath, "fwupd", "--address", bus.address, "--stall", "0", "--creep", "0",
        ])
        defer { _ = client.terminate() }
        try fwupd?.send("set", "Status", "5")
        try fwupd?.send("set", "Percentage", "60")
        try daemon.waitForStatus { $0.state == .running && $0.message == "Writing firmware" }
        fwupd = nil
        let closed = try daemon.waitForStatus(seconds: 10) { $0.state != .running }
        #expect(closed.state == .failure && closed.message == "Update interrupted: fwupd stopped", "\(closed.json())")
    }

    /// fwupd (or whoever owns its name) sending 200 signals of 1 MB while gaugectl reads
    /// its first properties: gaugectl keeps a bounded queue of them, not all of them.
    @Test func aFloodOfLargeSignalsDuringTheFirstReadsKeepsGaugectlSmall() throws {
        let bus = try PrivateBus()
        let daemon = try GaugedProcess(["--fps", "60"])
        let fwupd = try ReplayService(
            bus: bus, name: "org.freedesktop.fwupd", path: "/", interface: "org.freedesktop.fwupd",
            properties: ["Status:u:change", "Percentage:u:change"])
        try fwupd.send("set", "Status", "5")
        try fwupd.send("flood", "200", "1000000")
        let client = try PipedGaugectl([
            "--socket", daemon.socketPath, "fwupd", "--address", bus.address, "--stall", "0", "--creep", "0",
        ])
        try daemon.waitForStatus { $0.state == .running && $0.message == "Writing firmware" }
        // Still following fwupd after the flood.
        try fwupd.send("set", "Percentage", "50")
        try daemon.waitForStatus { $0.target == 62.5 }
        let peak = try #require(peakResidentKilobytes(of: client.process.processIdentifier))
        #expect(peak < 48 * 1024, "gaugectl's peak RSS: \(peak) kB")
        #expect(client.terminate().status != nil)
    }

    @Test func fwupdPhasesMakeOneBarEndingInSuccess() throws {
        let bus = try PrivateBus()
        let daemon = try GaugedProcess(["--fps", "60"])
        let fwupd = try ReplayService(
            bus: bus, name: "org.freedesktop.fwupd", path: "/", interface: "org.freedesktop.fwupd",
            properties: ["Status:u:change", "Percentage:u:change"])
        try fwupd.send("set", "Status", "1")
        let sampler = StatusSampler(daemon)
        // No --interval: fwupd announces Status and Percentage with PropertiesChanged.
        let client = try PipedGaugectl([
            "--socket", daemon.socketPath, "fwupd", "--address", bus.address, "--stall", "0", "--creep", "0",
        ])
        // Leaving idle, the status first: a percentage announced while fwupd is idle may be
        // the last operation's end, and whether gaugectl has subscribed by then or reads it
        // when it starts must not decide what is shown.
        try fwupd.send("set", "Status", "8")
        try fwupd.send("set", "Percentage", "50")
        try daemon.waitForStatus { $0.target == 15 && $0.message == "Downloading firmware" }
        for (status, percentage, target, message) in [
            ("5", "0", 40.0, "Writing firmware"), ("5", "50", 62.5, "Writing firmware"), ("6", "0", 85, "Verifying firmware"),
        ] {
            // Percentage first: fwupd starts each phase again at 0, which must not show.
            try fwupd.send("set", "Percentage", percentage)
            try fwupd.send("set", "Status", status)
            try daemon.waitForStatus { $0.target == target && $0.message == message }
        }
        // A device asks something of the user: fwupd's own text, or a known request's.
        try fwupd.send(
            "signal", "DeviceRequest", "a{sv}",
            "AppstreamId=org.freedesktop.fwupd.request.remove-replug;UpdateMessage=Unplug the dock, then plug it in again")
        try daemon.waitForStatus { $0.message == "Unplug the dock, then plug it in again" && $0.target == 85 }
        try fwupd.send("signal", "DeviceRequest", "a{sv}", "AppstreamId=org.freedesktop.fwupd.request.remove-replug")
        try daemon.waitForStatus { $0.message == "Unplug and replug the device" }
        try fwupd.send("set", "Status", "1")
        let end = try daemon.waitForStatus { $0.state == .success }
        #expect(end.message == "Firmware updated")
        let samples = sampler.stop()
        for (before, after) in zip(samples, samples.dropFirst()) {
            #expect(after.target >= before.target, "the bar went back from \(before.target) to \(after.target)")
        }
        #expect(client.terminate().status != nil)
    }
}

/// systemd starting a first boot (no history; 5% of its jobs done) on a private bus, and a
/// boot daemon five seconds into it in a time namespace (root only), with the directory
/// that holds its history.
private func firstBootFiveSecondsIn() throws -> (PrivateBus, ReplayService, GaugedProcess, TemporaryDirectory) {
    let uptime = monotonicNow()
    try #require(uptime > 10, "the machine has been up for more than ten seconds")
    let directory = TemporaryDirectory()
    let bus = try PrivateBus()
    let manager = try systemdManager(bus)
    try manager.send("set", "Progress", "0.05")
    try manager.send("set", "SystemState", "starting")
    let daemon = try GaugedProcess(
        ["--boot", "--boot-history", directory.appending("boot-duration"), "--fps", "60"],
        launcher: ["/usr/bin/unshare", "--time", "--fork", "--kill-child", "--monotonic=-\(Int(uptime) - 5)"])
    return (bus, manager, daemon, directory)
}

/// The children of `pid` (`/proc/PID/task/PID/children`).
private func childPIDs(of pid: pid_t) -> [pid_t] {
    let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
    return text.split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
}
