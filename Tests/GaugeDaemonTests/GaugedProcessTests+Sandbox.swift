import Foundation
import Glibc
import Testing
import GaugeTestSupport

// gauged.service's walls (docs/sandbox.md): measured with systemd-analyze (each unit's
// figure is held by tools/check/check-exposure), and the daemon run with no more
// capabilities than the unit's bounding set (setpriv) still does what needs them: the
// socket's group, a member served, newroot (chroot), the pid file, a pty read raw, a
// program waiting to read the console noticed.


private func unitLines() throws -> [String] {
    try String(contentsOf: repositoryRoot.appendingPathComponent("systemd/gauged.service"), encoding: .utf8)
        .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.hasPrefix("#") }
}

/// The unit's `CapabilityBoundingSet=`, as setpriv spells them (`sys_admin`).
private func boundingSet() throws -> [String] {
    let line = try #require(try unitLines().first { $0.hasPrefix("CapabilityBoundingSet=") })
    return line.dropFirst("CapabilityBoundingSet=".count).split(separator: " ").map {
        String($0.dropFirst("CAP_".count)).lowercased()
    }
}

@Suite struct GaugedSandboxTests {
    /// The exposure systemd-analyze gives the unit is 2.5 or lower (it was 9.5 with no
    /// walls, 4.1 before its devices and mount namespace were walled), and what the boot
    /// needs is not walled off.
    @Test func theUnitIsWalledInButKeepsWhatTheBootNeeds() throws {
        let analyze = try #require(
            ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first { FileManager.default.isExecutableFile(atPath: $0) },
            "systemd-analyze is missing; run tools/install-deps --test (package systemd)")
        let run = try runProgram(
            analyze, ["security", "--offline=yes", "--threshold=25", repositoryRoot.appendingPathComponent("systemd/gauged.service").path])
        let verdict = run.stdout.split(separator: "\n").last { $0.contains("Overall exposure level") } ?? ""
        #expect(run.status == 0, "exposure above 2.5: \(verdict)")
        #expect(verdict.contains("gauged.service"), "\(run.stdout.suffix(300)) \(run.stderr)")

        let lines = try unitLines()
        let caps = try boundingSet()
        for needed in ["sys_admin", "sys_tty_config", "sys_chroot", "chown", "sys_ptrace"] {
            #expect(caps.contains(needed), "CAP_\(needed.uppercased()) is needed")
        }
        #expect(!caps.contains { $0.hasPrefix("dac_") }, "every file and device gauged opens is root's")
        // The devices a display daemon opens are let in, by major: a card whose driver
        // loads after the unit started too (modprobe@drm makes the DRM major known).
        for device in ["char-drm rw", "char-fb rw", "char-tty rw", "/dev/console rw", "char-input r"] {
            #expect(lines.contains("DeviceAllow=\(device)"), "DeviceAllow=\(device)")
        }
        #expect(lines.contains("DevicePolicy=closed"))
        #expect(lines.contains { $0.hasPrefix("Wants=") && $0.contains("modprobe@drm.service") })
        #expect(lines.contains { $0.hasPrefix("After=") && $0.contains("modprobe@drm.service") })
        #expect(lines.contains("NoNewPrivileges=yes"))
        #expect(lines.contains("RestrictAddressFamilies=AF_UNIX AF_NETLINK"))
        #expect(lines.contains { $0.hasPrefix("SystemCallFilter=@system-service") && $0.contains("chroot") }, "newroot")
        // Walls that would break the boot: the devices stay (PrivateDevices), Plymouth's
        // abstract socket in the system's network namespace, /proc's files (the kernel's
        // command line), and the file systems it starts before and crosses into.
        for wall in ["PrivateDevices=", "PrivateNetwork=", "ProtectSystem=", "ProtectHome=", "PrivateTmp=", "ProcSubset="] {
            #expect(!lines.contains { $0.hasPrefix(wall) }, "\(wall) would wall off what the boot needs")
        }
    }

    /// With only the unit's capabilities (and no new privileges), the daemon still gives
    /// its socket to the group, serves a member, moves into a new root and creates the
    /// pid file; without CAP_CHOWN it could not give the socket to the group.
    @Test(.enabled(if: geteuid() == 0, "dropping capabilities needs root"))
    func theUnitsCapabilitiesAreEnoughForItsWork() throws {
        let caps = try boundingSet()
        let directory = TemporaryDirectory()
        chmod(directory.path, 0o755)
        let root = directory.appending("realroot")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let pty = try TypingPTY()
        let setpriv = ["/usr/bin/setpriv", "--bounding-set", "-all," + caps.map { "+" + $0 }.joined(separator: ","),
                       "--inh-caps", "-all", "--no-new-privs"]
        let daemon = try GaugedProcess(
            ["--group", "users", "--plymouth-compat", "--ask", "--ask-tty", pty.slavePath,
             "--plymouth-pid-file", directory.appending("plymouth/pid")],
            socketPath: directory.appending("gauged.sock"), launcher: ["/usr/bin/unshare", "--net"] + setpriv)
        let effective = try #require(try String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)
            .split(separator: "\n").first { $0.hasPrefix("CapEff:") })
        #expect(!effective.hasSuffix("000001ffffffffff"), "the daemon runs with fewer capabilities: \(effective)")

        var info = stat()
        #expect(stat(daemon.socketPath, &info) == 0 && info.st_gid == getgrnam("users").pointee.gr_gid, "CAP_CHOWN")
        let member = ["--reuid=nobody", "--regid=nogroup", "--groups=users"]
        let client = try reachableGaugectl(in: directory)
        let ping = try gaugectl(["--socket", daemon.socketPath, "ping"], asUser: member, binary: client)
        #expect(ping.status == 0, "\(ping.stderr)")
        #expect(FileManager.default.fileExists(atPath: directory.appending("plymouth/pid")))
        let deadline = monotonicNow() + 30
        while pty.settings.c_lflag & tcflag_t(ICANON) != 0, monotonicNow() < deadline { usleep(2_000) }
        #expect(pty.settings.c_lflag & tcflag_t(ICANON) == 0, "the pty is read raw")

        // CAP_SYS_PTRACE without CAP_DAC_*: a root program waiting to read the console is
        // seen (its /proc/PID/syscall, fd and mem), and the console gets the screen.
        let console = try TypingPTY()
        let watcher = try GaugedProcess(["--question-tty", console.slavePath], socketPath: directory.appending("watcher.sock"),
                                        launcher: setpriv)
        let reader = try ChildProgram("/bin/sh", ["-c", "read answer; echo \"got $answer\""], input: console.slavePath)
        _ = try watcher.waitForStatus { !$0.visible }
        #expect(watcher.log.contains("sh (pid \(reader.pid)) waits to read the console"), "\(watcher.log)")
        console.type("yes\n")
        #expect(reader.finish() == (0, "got yes\n"))

        let moved = try gaugectl(["--socket", daemon.socketPath, "newroot", root])
        #expect(moved.status == 0, "CAP_SYS_CHROOT: \(moved.stderr)")
        #expect(try daemon.request("snapshot /frame.png") == "ok")
        #expect(FileManager.default.fileExists(atPath: root + "/frame.png"), "\"/\" is the new root")

        // The check has teeth: without CAP_CHOWN the group cannot be given the socket.
        let weaker = TemporaryDirectory()
        let without = caps.filter { $0 != "chown" }
        let refused = try GaugedProcess(
            ["--group", "users"], socketPath: weaker.appending("gauged.sock"),
            launcher: ["/usr/bin/setpriv", "--bounding-set", "-all," + without.map { "+" + $0 }.joined(separator: ","),
                       "--inh-caps", "-all", "--no-new-privs"], waitForPing: false)
        #expect(refused.waitForExit(seconds: 30).flatMap(exitCode) == 1, "\(refused.log)")
    }
}
