import Foundation
import Glibc
import Testing

@testable import GaugeDaemon
import GaugeTestSupport

// The systemd units in systemd/ and the initramfs integration under tools/, checked with
// the real tools: systemd-analyze verify, and initramfs-tools' own hook-functions.


/// The built executables (`swift build --build-tests` builds every product).
private func builtBinary(_ name: String) -> String? {
    let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    return [
        runner.deletingLastPathComponent().appendingPathComponent(name).path,
        repositoryRoot.appendingPathComponent(".build/debug/\(name)").path,
    ].first { FileManager.default.isExecutableFile(atPath: $0) }
}

private struct ShellResult {
    var status: Int32
    var output: String
}

/// Runs `script` with /bin/sh (bash when asked) in `directory`, stdout and stderr together.
private func shell(
    _ script: String, bash: Bool = false, environment: [String: String] = [:], directory: String? = nil
) throws -> ShellResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: bash ? "/bin/bash" : "/bin/sh")
    process.arguments = ["-c", script]
    var env = ProcessInfo.processInfo.environment
    env.merge(environment) { $1 }
    process.environment = env
    process.currentDirectoryURL = URL(fileURLWithPath: directory ?? repositoryRoot.path)
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ShellResult(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
}

private func lines(_ text: String) -> [String] {
    text.split(separator: "\n").map(String.init)
}

@Suite struct SystemdUnitTests {
    private let units = [
        "gauged.service", "gauged-quit.service", "gauged-poweroff.service", "gauged-reboot.service",
        "gauged-halt.service", "gauged-kexec.service", "gauged-switch-root.service",
        "gauged-ask-password.path", "gauged-ask-password.service", "gauged-jobs.service", "gauged-waits.service", "gauged-packagekit.service", "gauged-boot-failed@.service",
        "gauged-unit-failed@.service",
    ]
    private let dropIns = [
        "emergency.service.d/gauge.conf", "rescue.service.d/gauge.conf",
        "gdm.service.d/gauge.conf", "lightdm.service.d/gauge.conf",
        "service.d/gauge-failure.conf", "mount.d/gauge-failure.conf", "gauged-unit-failed@.service.d/gauge-no-failure.conf",
    ]
    /// The display managers' drop-ins go on units of other packages: stand-ins for those.
    private let displayManagers = ["gdm.service", "lightdm.service"]
    /// A mount for mount.d/'s drop-in (a disk the boot need not wait for).
    private let mount = ("data.mount", "[Mount]\nWhat=/dev/disk/by-label/data\nWhere=/data\nOptions=nofail\n")

    @Test func unitsVerifyCleanly() throws {
        let analyze = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        guard let analyze else {
            Issue.record("systemd-analyze is missing; run tools/install-deps --test (package systemd)")
            return
        }
        guard let gauged = builtBinary("gauged"), let gaugectl = builtBinary("gaugectl") else {
            Issue.record("gauged / gaugectl not built; run swift build --build-tests")
            return
        }
        // verify checks that ExecStart binaries exist: point them at the built ones.
        let directory = TemporaryDirectory()
        for unit in units {
            let text = try String(contentsOf: repositoryRoot.appendingPathComponent("systemd/\(unit)"), encoding: .utf8)
                .replacingOccurrences(of: "/usr/bin/gauged", with: gauged)
                .replacingOccurrences(of: "/usr/bin/gaugectl", with: gaugectl)
                .replacingOccurrences(of: "/usr/share/gauge/boot-failed",
                                      with: repositoryRoot.appendingPathComponent("integration/gauge-boot-failed").path)
            try text.write(toFile: directory.appending(unit), atomically: true, encoding: .utf8)
        }
        let paths = units.map { directory.appending($0) }.joined(separator: " ")
        let result = try shell("\(analyze) verify --man=no \(paths)", directory: directory.path)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output == "", "systemd-analyze verify is not clean:\n\(result.output)")

        // The drop-ins, on the system's own emergency and rescue units, on stand-ins for
        // the display managers' (other packages' units), on a mount and on the failure
        // handler's instance for it (the top-level service.d/ and mount.d/ apply to every
        // service and mount). Each is verified as shipped, then once more with an unknown
        // key added, which verify must name: the drop-in was read.
        let names = ["emergency.service", "rescue.service"] + displayManagers + [mount.0, "gauged-unit-failed@data.mount.service"]
        for probe in [false, true] {
            let unitPath = directory.appending(probe ? "probed" : "units")
            for dropIn in dropIns {
                let text = try String(contentsOf: repositoryRoot.appendingPathComponent("systemd/\(dropIn)"), encoding: .utf8)
                    .replacingOccurrences(of: "/usr/bin/gaugectl", with: gaugectl)
                let target = unitPath + "/" + dropIn
                try FileManager.default.createDirectory(
                    atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try (text + (probe ? "[Unit]\nGaugeTestProbe=yes\n" : "")).write(toFile: target, atomically: true, encoding: .utf8)
            }
            for unit in displayManagers {
                try "[Unit]\nDescription=\(unit)\n[Service]\nExecStart=/bin/true\n"
                    .write(toFile: unitPath + "/" + unit, atomically: true, encoding: .utf8)
            }
            try mount.1.write(toFile: unitPath + "/" + mount.0, atomically: true, encoding: .utf8)
            for unit in units {
                try FileManager.default.copyItem(atPath: directory.appending(unit), toPath: unitPath + "/" + unit)
            }
            let verified = try shell("\(analyze) verify --man=no \(names.joined(separator: " "))",
                                     environment: ["SYSTEMD_UNIT_PATH": unitPath + ":"], directory: directory.path)
            #expect(verified.status == 0, "\(verified.output)")
            for dropIn in dropIns {
                let named = verified.output.contains("\(unitPath)/\(dropIn):")
                #expect(named == probe, probe ? "\(dropIn) was not read:\n\(verified.output)" : "not clean:\n\(verified.output)")
            }
        }
    }

    /// ExecStopPost also runs when ExecCondition skips the unit under a running daemon:
    /// the console is reset only after the daemon was killed or crashed.
    @Test func consoleIsResetOnlyAfterAKill() throws {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("systemd/gauged.service"), encoding: .utf8)
        let line = try #require(lines(text).first { $0.hasPrefix("ExecStopPost=-/bin/sh -c '") && $0.hasSuffix("'") })
        let directory = TemporaryDirectory()
        let stub = directory.appending("gaugectl")
        try "#!/bin/sh\necho \"reset $*\"\n".write(toFile: stub, atomically: true, encoding: .utf8)
        chmod(stub, 0o755)
        // What systemd hands to sh: `$$` becomes `$`.
        let script = String(line.dropFirst("ExecStopPost=-/bin/sh -c '".count).dropLast())
            .replacingOccurrences(of: "$$", with: "$").replacingOccurrences(of: "/usr/bin/gaugectl", with: stub)
        for (code, reset) in [("killed", true), ("dumped", true), ("exited", false), ("", false)] {
            let result = try shell(script, environment: ["EXIT_CODE": code])
            #expect(result.status == 0)
            #expect(result.output == (reset ? "reset console-reset\n" : ""), "EXIT_CODE=\(code)")
        }
    }

    /// Where no daemon runs (turned off on the kernel command line, or it never started),
    /// every gaugectl call of the boot and shutdown units and of the initramfs scripts
    /// returns at once instead of waiting its 2 to 10 s timeout for a daemon to start.
    @Test func bootCallsNeverWaitForAnAbsentDaemon() throws {
        guard let gaugectl = builtBinary("gaugectl") else {
            Issue.record("gaugectl not built; run swift build --build-tests")
            return
        }
        let directory = TemporaryDirectory()
        let environment = ["GAUGE_SOCKET": directory.appending("absent.sock"), "GAUGECTL": gaugectl]
        var calls: [(String, String)] = []
        for name in units + dropIns {
            let text = try String(contentsOf: repositoryRoot.appendingPathComponent("systemd/\(name)"), encoding: .utf8)
            for line in lines(text) where line.hasPrefix("Exec") && line.contains("/usr/bin/gaugectl") {
                guard !line.contains("console-reset") else { continue }
                var command = line.drop { $0 != "=" }.dropFirst()
                if command.first == "-" { command = command.dropFirst() }
                calls.append((name, command.replacingOccurrences(of: "/usr/bin/gaugectl", with: gaugectl)))
            }
        }
        #expect(calls.count == 8, "\(calls.map(\.0))")
        for script in [
            "integration/initramfs-tools/scripts/init-bottom/gauge", "integration/initramfs-tools/scripts/panic/gauge",
            "integration/dracut/90gauge/gauge-newroot.sh", "integration/dracut/90gauge/gauge-emergency.sh",
            "integration/gauge-boot-failed",
        ] {
            calls.append((script, "sh \(script)"))
        }
        calls.append(("integration/gauge-boot-failed unit", "sh integration/gauge-boot-failed unit example.service"))
        for (source, command) in calls {
            let start = Date()
            let result = try shell(command, environment: environment)
            let seconds = Date().timeIntervalSince(start)
            #expect(seconds < 1.5, "\(source): \(command) took \(seconds) s")
            // The shutdown screens start gaugectl only where a daemon's socket exists.
            let guarded = command.hasPrefix("/bin/sh -c 'test -S /run/gauge/gauged.sock || exit 0; ")
            let expected: Int32 = command.hasSuffix("ping --absent") || guarded ? 0 : source.hasPrefix("integration/") ? 0 : 3
            #expect(result.status == expected, "\(source): \(command): \(result.output)")
        }
    }

    @Test func unitsSayWhatABootSplashNeeds() throws {
        func unit(_ name: String) throws -> [String] {
            lines(try String(contentsOf: repositoryRoot.appendingPathComponent("systemd/\(name)"), encoding: .utf8))
        }
        let service = try unit("gauged.service")
        for line in [
            "DefaultDependencies=no", "Type=notify", "ExecStart=/usr/bin/gauged --boot --theme /etc/gauge/gauge.theme --psplash-fifo --plymouth-compat", "Conflicts=shutdown.target",
            "WantedBy=sysinit.target", "IgnoreOnIsolate=yes",
            // A daemon from the initramfs answers: skip (exit 1), never a second one.
            "ExecCondition=/usr/bin/gaugectl --timeout 2 ping --absent",
        ] {
            #expect(service.contains(line), "gauged.service: \(line)")
        }
        #expect(service.contains { $0.hasPrefix("Before=sysinit.target") })
        #expect(!service.contains { $0.contains("gauged.socket") }, "no socket unit: a request after boot starts nothing")
        #expect(!FileManager.default.fileExists(atPath: repositoryRoot.appendingPathComponent("systemd/gauged.socket").path))
        let quit = try unit("gauged-quit.service")
        #expect(quit.contains { $0.hasPrefix("ExecStart=-/usr/bin/gaugectl") && $0.hasSuffix(" quit") })
        #expect(quit.contains("WantedBy=multi-user.target"))
        #expect(quit.contains("Before=getty@tty1.service display-manager.service"), "the login prompt is never covered")
        for (name, title) in [("poweroff", "Powering off"), ("reboot", "Restarting"), ("halt", "Shutting down"), ("kexec", "Restarting")] {
            let shutdown = try unit("gauged-\(name).service")
            // A boot screen still running is replaced by gauged itself (--replace), which
            // holds the cards meanwhile: no process before it, no console between the two.
            #expect(shutdown.contains("ExecStart=/usr/bin/gauged --theme /etc/gauge/gauge.theme --plymouth-compat --shutdown --replace --vt at-exit --title \"\(title)\""))
            // Not after the getty: it starts beside its stop, which leaves a DRM master's frame alone.
            #expect(shutdown.contains("After=display-manager.service gauged.service"))
            #expect(!shutdown.contains { $0.hasPrefix("Wants=") }, "gauged-\(name).service needs no unit before it")
            #expect(!shutdown.contains { $0.hasPrefix("ExecStartPre=") }, "gauged-\(name).service starts gauged first")
            #expect(!shutdown.contains { $0.hasPrefix("After=") && $0.contains("getty") }, "gauged-\(name).service waits for no getty")
            #expect(!shutdown.contains { $0.hasPrefix("After=") && $0.contains("gauged-quit") }, "nor for gauged-quit, stopped after the getty")
            #expect(shutdown.contains("Before=systemd-\(name).service") && shutdown.contains("WantedBy=\(name).target"))
            #expect(shutdown.contains("DefaultDependencies=no"))
            #expect(service.contains { $0.hasPrefix("Also=") && $0.contains("gauged-\(name).service") }, "enabled with gauged.service")
        }
        // systemd's password requests go to the splash only while a gauged --ask made
        // the pid file, never beside Plymouth's own forwarding, and before cryptsetup.target.
        let forward = try unit("gauged-ask-password.path")
        for line in [
            "DirectoryNotEmpty=/run/systemd/ask-password", "ConditionPathExists=/run/plymouth/pid",
            "ConditionPathExists=!/usr/lib/systemd/system/systemd-ask-password-plymouth.path",
            "Before=paths.target cryptsetup.target shutdown.target", "DefaultDependencies=no", "WantedBy=sysinit.target",
        ] {
            #expect(forward.contains(line), "gauged-ask-password.path: \(line)")
        }
        #expect(service.contains { $0.hasPrefix("Also=") && $0.contains("gauged-ask-password.path") }, "enabled with gauged.service")
        let agent = try unit("gauged-ask-password.service")
        #expect(agent.contains("ExecStart=/usr/bin/systemd-tty-ask-password-agent --watch --plymouth"))
        #expect(agent.contains("ConditionPathExists=/run/plymouth/pid"))
        // systemd's share of jobs done for a first boot's estimate: early, from systemd's own
        // socket, only where no history exists, enabled with the boot screen.
        let jobs = try unit("gauged-jobs.service")
        for line in [
            "ExecStart=/usr/bin/gaugectl --no-wait systemd --boot-estimate", "DefaultDependencies=no", "After=gauged.service",
            "Before=sysinit.target shutdown.target", "Conflicts=shutdown.target", "ConditionPathExists=/run/gauge/gauged.sock",
            "ConditionPathExists=!/var/lib/gauge/boot-duration", "WantedBy=sysinit.target",
        ] {
            #expect(jobs.contains(line), "gauged-jobs.service: \(line)")
        }
        #expect(service.contains { $0.hasPrefix("Also=") && $0.contains("gauged-jobs.service") }, "enabled with gauged.service")
        // What a boot that stops moving waits for: on every boot, from systemd's own socket.
        let waits = try unit("gauged-waits.service")
        for line in [
            "ExecStart=/usr/bin/gaugectl --no-wait systemd --waits", "DefaultDependencies=no",
            "Before=sysinit.target shutdown.target", "ConditionPathExists=/run/gauge/gauged.sock", "WantedBy=sysinit.target",
        ] {
            #expect(waits.contains(line), "gauged-waits.service: \(line)")
        }
        // From the real root's first moment where an initramfs started the daemon, not
        // after gauged.service (seconds later on a slow core); started by gauged.service
        // where that starts the daemon.
        #expect(!waits.contains { $0.hasPrefix("After=") }, "gauged-waits.service is ordered after nothing")
        #expect(service.contains("ExecStartPost=-/bin/systemctl --no-block start gauged-waits.service"))
        #expect(!waits.contains { $0.contains("boot-duration") }, "every boot, not only a first one")
        #expect(service.contains { $0.hasPrefix("Also=") && $0.contains("gauged-waits.service") }, "enabled with gauged.service")
        let switchRoot = try unit("gauged-switch-root.service")
        #expect(switchRoot.contains("ExecStart=-/usr/bin/gaugectl --no-wait --timeout 5 newroot /sysroot"))
        #expect(switchRoot.contains("Before=initrd-switch-root.service"))
        for dropIn in ["emergency.service.d/gauge.conf", "rescue.service.d/gauge.conf"] {
            #expect(try unit(dropIn).contains("ExecStartPre=-/usr/bin/gaugectl --no-wait --timeout 5 quit"), "\(dropIn)")
        }
        // The failure screen before those shells: ahead of their units (not behind their
        // Type=idle delay), waiting for a person without a start timeout.
        let failed = try unit("gauged-boot-failed@.service")
        for line in ["Before=%i.service shutdown.target", "Type=oneshot", "ExecStart=-/usr/share/gauge/boot-failed %i",
                     "TimeoutStartSec=infinity", "ConditionPathExists=/run/gauge/gauged.sock", "DefaultDependencies=no"] {
            #expect(failed.contains(line), "gauged-boot-failed@.service: \(line)")
        }
        // A unit failing while the boot goes on: every service and mount names the handler
        // for itself, whole (a mount's name with its type, as the journal knows it), and the
        // handler none; the end of the boot (whatever ends the splash) waits for its key.
        for dropIn in ["service.d/gauge-failure.conf", "mount.d/gauge-failure.conf"] {
            #expect(try unit(dropIn).contains("OnFailure=gauged-unit-failed@%n.service"), "\(dropIn)")
        }
        #expect(try unit("gauged-unit-failed@.service.d/gauge-no-failure.conf").contains("OnFailure="))
        #expect("gauge-no-failure.conf" > "gauge-failure.conf", "the handler's reset applies after the top-level drop-in")
        let unitFailed = try unit("gauged-unit-failed@.service")
        for line in [
            "Type=oneshot", "DefaultDependencies=no", "Conflicts=shutdown.target", "TimeoutStartSec=infinity",
            "ConditionPathExists=/run/gauge/gauged.sock", "ExecStart=-/usr/share/gauge/boot-failed unit %i",
            "Before=shutdown.target gauged-quit.service plymouth-quit.service plymouth-quit-wait.service",
            "Before=getty@tty1.service display-manager.service gdm.service lightdm.service",
        ] {
            #expect(unitFailed.contains(line), "gauged-unit-failed@.service: \(line)")
        }
        #expect(!unitFailed.contains { $0.hasPrefix("After=") }, "it waits for nothing: it runs while the boot goes on")
        // GDM and LightDM end the splash themselves: gauged-quit must not end it before them,
        // and must when they fail.
        for dropIn in ["gdm.service.d/gauge.conf", "lightdm.service.d/gauge.conf"] {
            let lines = try unit(dropIn)
            for line in ["Conflicts=gauged-quit.service", "After=gauged.service gauged-quit.service", "OnFailure=gauged-quit.service"] {
                #expect(lines.contains(line), "\(dropIn): \(line)")
            }
        }
    }
}

@Suite struct InitramfsTests {
    /// A theme that names its own logo and font, and default fonts, all in a temp tree.
    private func fixture() throws -> (TemporaryDirectory, [String: String]) {
        let directory = TemporaryDirectory()
        let fonts = directory.appending("fonts")
        try FileManager.default.createDirectory(atPath: fonts, withIntermediateDirectories: true)
        for name in ["DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "Other.ttf", "logo.png", "CJK.ttc"] {
            _ = FileManager.default.createFile(atPath: fonts + "/" + name, contents: Data("x".utf8))
        }
        let theme = directory.appending("gauge.theme")
        try """
            # a theme
            fill_color = #ff8800
            logo = \(fonts)/logo.png
            font = "\(fonts)/Other.ttf"
            bold_font = \(fonts)/DejaVuSans-Bold.ttf
            [text]
            text.fallback_fonts = \(fonts)/CJK.ttc, /absent.ttf
            """.write(toFile: theme, atomically: true, encoding: .utf8)
        let bin = directory.appending("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let environment = [
            "GAUGE_THEME": theme, "GAUGE_FONTDIR": fonts, "GAUGE_LIBRARIES": loadedLibraries(directory).joined(separator: " "),
            "GAUGE_FILES": repositoryRoot.appendingPathComponent("integration/gauge-files").path,
            "GAUGE_QRENCODE": "", "GAUGE_LOCALE": directory.appending("absent-locale"),
        ]
        return (directory, environment)
    }

    /// gauge-files run on the fixture's own bin directory: this machine's /usr/bin (a
    /// plymouth of Debian's there, or none) must not decide the list.
    private func listFiles(_ directory: TemporaryDirectory, _ environment: [String: String]) throws -> (status: Int32, output: String) {
        var environment = environment
        environment["GAUGE_BINDIR"] = directory.appending("bin")
        let result = try shell("integration/gauge-files", environment: environment)
        return (result.status, result.output)
    }

    /// The dracut module sourced under bash with `stubs` standing in for dracut's functions,
    /// its initdir in `directory`, then `calls` run.
    private func runDracutModule(
        _ stubs: String, calls: String = "install", in directory: TemporaryDirectory, environment: [String: String]
    ) throws -> ShellResult {
        let script = "set -e\n\(stubs)\ninitdir=\(directory.appending("initrd"))\nmoddir=integration/dracut/90gauge\n"
            + ". integration/dracut/90gauge/module-setup.sh\n\(calls)\n"
        return try shell(script, bash: true, environment: environment)
    }

    /// The C libraries gauged loads at its start, as the fixture names them (GAUGE_LIBRARIES).
    private func loadedLibraries(_ directory: TemporaryDirectory) -> [String] {
        ["libdrm.so.2", "libpixman-1.so.0"].map { directory.appending($0) }
    }

    /// The executable, its links and the libraries it loads as `listFiles` lists them.
    private func executable(_ directory: TemporaryDirectory) -> [String] {
        let bin = directory.appending("bin")
        return ["exec \(bin)/gauged", "link \(bin)/gaugectl gauged", "link \(bin)/plymouth gauged"]
            + loadedLibraries(directory).map { "needed \($0)" }
    }

    /// The libraries gauge-files finds by itself are the ones gauged loads: the sonames of
    /// Sources/CGaugeLibraries, each found on this machine.
    @Test func fileListNamesTheLibrariesGaugedLoads() throws {
        let (directory, environment) = try fixture()
        var env = environment
        env.removeValue(forKey: "GAUGE_LIBRARIES")
        let listed = try listFiles(directory, env)
        #expect(listed.status == 0, "\(listed.output)")
        let found = lines(listed.output).filter { $0.hasPrefix("needed /") }.map { String($0.dropFirst("needed ".count)) }
        let source = try String(
            contentsOf: repositoryRoot.appendingPathComponent("Sources/CGaugeLibraries/CGaugeLibraries.c"), encoding: .utf8)
        let sonames = lines(source).filter { $0.hasPrefix("LIBRARY(") }.compactMap { $0.split(separator: "\"").dropFirst().first.map(String.init) }
        #expect(sonames.count == 5, "\(sonames)")
        #expect(found.map { ($0 as NSString).lastPathComponent } == sonames, "\(found)")
        for path in found {
            #expect(FileManager.default.fileExists(atPath: path), "\(path)")
        }
    }

    /// libqrencode, for the failure screen's QR code, is listed after the executable where
    /// the system has it, and the initramfs hook copies it with its libraries; where it is
    /// not, nothing (gauged shows the words alone).
    @Test func fileListCarriesLibqrencodeWhereThereIsOne() throws {
        let (directory, environment) = try fixture()
        let library = directory.appending("libqrencode.so.4")
        #expect(FileManager.default.createFile(atPath: library, contents: Data("x".utf8)))
        var env = environment
        env["GAUGE_QRENCODE"] = library
        let listed = try listFiles(directory, env)
        #expect(listed.status == 0, "\(listed.output)")
        #expect(Array(lines(listed.output).prefix(6)) == executable(directory) + ["library \(library)"])
        env["GAUGE_QRENCODE"] = directory.appending("absent.so.4")
        #expect(!(try listFiles(directory, env)).output.contains("library "))

        let stub = directory.appending("hook-functions")
        try """
            copy_exec() { echo "copy_exec $*" >> "$LOG"; }
            copy_file() { :; }
            copy_modules_dir() { :; }
            manual_add_modules() { :; }
            """.write(toFile: stub, atomically: true, encoding: .utf8)
        env["GAUGE_QRENCODE"] = library
        env["GAUGE_HOOK_FUNCTIONS"] = stub
        env["LOG"] = directory.appending("log")
        env["DESTDIR"] = directory.appending("root")
        env["GAUGE_BINDIR"] = directory.appending("bin")
        let hook = try shell("integration/initramfs-tools/hooks/gauge", environment: env)
        #expect(hook.status == 0, "\(hook.output)")
        let log = try String(contentsOfFile: directory.appending("log"), encoding: .utf8)
        #expect(lines(log) == ["copy_exec \(directory.appending("bin"))/gauged"] + loadedLibraries(directory).map { "copy_exec \($0)" }
            + ["copy_exec \(library)"])
    }

    /// HarfBuzz and FriBidi are listed where the system's language is written in a script
    /// that needs them (here Arabic and Thai), or where GAUGE_SHAPING=1 asks; not for
    /// English, nor with GAUGE_SHAPING=0.
    @Test func fileListCarriesTheShapingLibrariesForALanguageThatNeedsThem() throws {
        let (directory, environment) = try fixture()
        let locale = directory.appending("locale")
        var env = environment
        env["GAUGE_LOCALE"] = locale
        func libraries() throws -> [String] {
            let listed = try listFiles(directory, env)
            #expect(listed.status == 0, "\(listed.output)")
            return lines(listed.output).filter { $0.hasPrefix("library ") }.map { String($0.split(separator: "/").last ?? "") }
        }
        for (lang, wanted) in [("LANG=ar_EG.UTF-8", true), ("LANG=\"th_TH.UTF-8\"", true), ("LANG=en_US.UTF-8", false), ("LANG=C.UTF-8", false)] {
            try "# the system's locale\n\(lang)\n".write(toFile: locale, atomically: true, encoding: .utf8)
            let found = try libraries()
            #expect(found == (wanted ? ["libharfbuzz.so.0", "libfribidi.so.0"] : []), "\(lang): \(found)")
        }
        env["GAUGE_SHAPING"] = "0"
        try "LANG=he_IL.UTF-8\n".write(toFile: locale, atomically: true, encoding: .utf8)
        #expect(try libraries().isEmpty)
        env["GAUGE_SHAPING"] = "1"
        try "LANG=en_GB.UTF-8\n".write(toFile: locale, atomically: true, encoding: .utf8)
        #expect(try libraries() == ["libharfbuzz.so.0", "libfribidi.so.0"])
    }

    /// Another package's plymouth in the bin directory is left alone: no link over it.
    @Test func fileListLinksNoPlymouthOverAnotherPackages() throws {
        let (directory, environment) = try fixture()
        _ = FileManager.default.createFile(atPath: directory.appending("bin/plymouth"), contents: Data("#!/bin/sh\n".utf8))
        let result = try listFiles(directory, environment)
        #expect(result.status == 0, "\(result.output)")
        #expect(Array(lines(result.output).prefix(5)) == Array(executable(directory).prefix(2))
            + loadedLibraries(directory).map { "needed \($0)" } + ["file \(directory.appending("gauge.theme"))"])
    }

    /// Exactly what the theme can use: DejaVuSans.ttf is not, the theme names another font.
    @Test func fileListHasTheBinaryAndWhatTheThemeUsesOnce() throws {
        let (directory, environment) = try fixture()
        let result = try listFiles(directory, environment)
        #expect(result.status == 0, "\(result.output)")
        let fonts = directory.appending("fonts")
        #expect(lines(result.output) == executable(directory) + [
            "file \(directory.appending("gauge.theme"))", "file \(fonts)/logo.png",
            "file \(fonts)/Other.ttf", "file \(fonts)/DejaVuSans-Bold.ttf", "file \(fonts)/CJK.ttc",
        ])
    }

    /// `logo = firmware` is read from sysfs at run time: the initramfs carries only the
    /// fallback logo (a file named `firmware` beside the theme is not the theme's logo).
    @Test func fileListOfAFirmwareLogoHasItsFallbackOnly() throws {
        let (directory, environment) = try fixture()
        let theme = directory.appending("firmware.theme")
        _ = FileManager.default.createFile(atPath: directory.appending("firmware"), contents: Data("x".utf8))
        try "logo = firmware\nlogo_fallback = fonts/logo.png\n".write(toFile: theme, atomically: true, encoding: .utf8)
        var env = environment
        env["GAUGE_THEME"] = theme
        let result = try listFiles(directory, env)
        #expect(result.status == 0, "\(result.output)")
        let fonts = directory.appending("fonts")
        #expect(lines(result.output) == executable(directory) + [
            "file \(theme)", "file \(fonts)/logo.png", "file \(fonts)/DejaVuSans.ttf", "file \(fonts)/DejaVuSans-Bold.ttf",
        ])
    }

    /// Fonts named by family: the files fontconfig's fc-match picks, where the daemon finds
    /// them by their names at boot.
    @Test func fileListOfFontFamiliesHasTheFilesFcMatchPicks() throws {
        let (directory, environment) = try fixture()
        let theme = directory.appending("family.theme")
        try "font = DejaVu Serif\nbold_font = \"DejaVu Sans:style=Bold\"\n".write(toFile: theme, atomically: true, encoding: .utf8)
        var env = environment
        env["GAUGE_THEME"] = theme
        let result = try listFiles(directory, env)
        #expect(result.status == 0, "\(result.output)")
        #expect(lines(result.output) == executable(directory) + [
            "file \(theme)",
            "file /usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf", "file /usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
        ])
    }

    /// A theme that names no fonts uses gauged's defaults, and no logo; the built-in CJK
    /// fallbacks are not listed.
    @Test func fileListOfAThemeWithoutFilesHasTheDefaultFonts() throws {
        let (directory, environment) = try fixture()
        let theme = directory.appending("plain.theme")
        try "fill_color = #ff8800\n".write(toFile: theme, atomically: true, encoding: .utf8)
        var env = environment
        env["GAUGE_THEME"] = theme
        let result = try listFiles(directory, env)
        #expect(result.status == 0, "\(result.output)")
        let fonts = directory.appending("fonts")
        #expect(lines(result.output) == executable(directory) + [
            "file \(theme)", "file \(fonts)/DejaVuSans.ttf", "file \(fonts)/DejaVuSans-Bold.ttf",
        ])
    }

    @Test func initramfsToolsHookCopiesTheListWithStubbedFunctions() throws {
        let (directory, environment) = try fixture()
        let stub = directory.appending("hook-functions")
        try """
            copy_exec() { echo "copy_exec $*" >> "$LOG"; }
            copy_file() { echo "copy_file $*" >> "$LOG"; }
            copy_modules_dir() { echo "copy_modules_dir $*" >> "$LOG"; }
            manual_add_modules() { echo "manual_add_modules $*" >> "$LOG"; }
            """.write(toFile: stub, atomically: true, encoding: .utf8)
        var env = environment
        env["GAUGE_HOOK_FUNCTIONS"] = stub
        env["LOG"] = directory.appending("log")
        env["DESTDIR"] = directory.appending("root")
        env["MODULES"] = "most"
        let result = try shell("integration/initramfs-tools/hooks/gauge", environment: env)
        #expect(result.status == 0, "\(result.output)")
        let log = try String(contentsOfFile: directory.appending("log"), encoding: .utf8)
        let fonts = directory.appending("fonts")
        let files = ["copy_exec /usr/bin/gauged"] + loadedLibraries(directory).map { "copy_exec \($0)" } + [
            "copy_file gauge \(directory.appending("gauge.theme"))", "copy_file gauge \(fonts)/logo.png",
            "copy_file gauge \(fonts)/Other.ttf", "copy_file gauge \(fonts)/DejaVuSans-Bold.ttf",
            "copy_file gauge \(fonts)/CJK.ttc",
        ]
        // MODULES=most (Debian's default): every KMS driver, as Plymouth's hook; and evdev
        // for the keyboards, whatever MODULES says.
        #expect(lines(log) == files + ["copy_modules_dir kernel/drivers/gpu/drm mga r128 savage sis tdfx via panfrost", "manual_add_modules evdev"])
        // gaugectl: a link to the one executable, made by the hook itself.
        let link = try FileManager.default.destinationOfSymbolicLink(atPath: directory.appending("root/usr/bin/gaugectl"))
        #expect(link == "gauged")

        // MODULES=list: only what the list names, and a warning saying so.
        try FileManager.default.removeItem(atPath: directory.appending("log"))
        env["MODULES"] = "list"
        let listed = try shell("integration/initramfs-tools/hooks/gauge", environment: env)
        #expect(listed.status == 0, "\(listed.output)")
        #expect(listed.output.contains("MODULES=list"), "\(listed.output)")
        #expect(lines(try String(contentsOfFile: directory.appending("log"), encoding: .utf8)) == files + ["manual_add_modules evdev"])
        let prereqs = try shell(
            "integration/initramfs-tools/hooks/gauge prereqs && integration/initramfs-tools/scripts/init-top/gauge prereqs && integration/initramfs-tools/scripts/init-bottom/gauge prereqs && integration/initramfs-tools/scripts/panic/gauge prereqs")
        // init-top: none, so it runs before udev's (the firmware's framebuffer from the
        // initramfs's first moment); init-bottom: after udev's, which moves /dev.
        #expect(prereqs.output == "\n\nudev\n\n")
    }

    /// With the system's gaugectl (the built one here), the hook copies the theme's fonts
    /// through `gaugectl copy-font`: DejaVu Sans Bold without its hinting, a file that is no
    /// TrueType font as it is; the CJK collection and the logo through copy_file.
    @Test func theHookCopiesTheFontsThroughGaugectl() throws {
        let (directory, environment) = try fixture()
        let gauged = try BuiltBinary.require(BuiltBinary.gauged, "gauged")
        let bin = directory.appending("bin")
        try FileManager.default.createSymbolicLink(atPath: bin + "/gauged", withDestinationPath: gauged)
        try FileManager.default.createSymbolicLink(atPath: bin + "/gaugectl", withDestinationPath: "gauged")
        let fonts = directory.appending("fonts")
        let bold = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
        try FileManager.default.removeItem(atPath: fonts + "/DejaVuSans-Bold.ttf")
        try FileManager.default.copyItem(atPath: bold, toPath: fonts + "/DejaVuSans-Bold.ttf")
        let stub = directory.appending("hook-functions")
        try """
            copy_exec() { echo "copy_exec $*" >> "$LOG"; }
            copy_file() { echo "copy_file $*" >> "$LOG"; }
            copy_modules_dir() { :; }
            manual_add_modules() { :; }
            """.write(toFile: stub, atomically: true, encoding: .utf8)
        var env = environment
        env["GAUGE_HOOK_FUNCTIONS"] = stub
        env["GAUGE_BINDIR"] = bin
        env["LOG"] = directory.appending("log")
        env["DESTDIR"] = directory.appending("root")
        env["verbose"] = "y"
        let result = try shell("integration/initramfs-tools/hooks/gauge", environment: env)
        #expect(result.status == 0, "\(result.output)")
        let log = try String(contentsOfFile: directory.appending("log"), encoding: .utf8)
        #expect(lines(log).filter { $0.hasPrefix("copy_file") } == ["copy_file gauge \(directory.appending("gauge.theme"))",
            "copy_file gauge \(fonts)/logo.png", "copy_file gauge \(fonts)/CJK.ttc"], "\(log)")
        let copied = try FileManager.default.attributesOfItem(atPath: directory.appending("root") + fonts + "/DejaVuSans-Bold.ttf")[.size] as? Int ?? 0
        let original = try FileManager.default.attributesOfItem(atPath: bold)[.size] as? Int ?? 0
        #expect(copied > 0 && copied * 100 < original * 85, "\(copied) of \(original) bytes")
        #expect(FileManager.default.contents(atPath: directory.appending("root") + fonts + "/Other.ttf") == Data("x".utf8))
        #expect(result.output.contains("I: gauge: \(directory.appending("root"))\(fonts)/DejaVuSans-Bold.ttf: \(fonts)/DejaVuSans-Bold.ttf without its hinting and glyph names"), "\(result.output)")

        // A font already in the tree (another hook's, or here the first run's) is left to
        // copy_file, which keeps what is there.
        try FileManager.default.removeItem(atPath: directory.appending("log"))
        let again = try shell("integration/initramfs-tools/hooks/gauge", environment: env)
        #expect(again.status == 0 && !again.output.contains("I: gauge:"), "\(again.output)")
        let second = try String(contentsOfFile: directory.appending("log"), encoding: .utf8)
        #expect(lines(second).filter { $0.hasPrefix("copy_file") && $0.hasSuffix(".ttf") }
            == ["copy_file gauge \(fonts)/Other.ttf", "copy_file gauge \(fonts)/DejaVuSans-Bold.ttf"], "\(second)")
        #expect(try FileManager.default.attributesOfItem(atPath: directory.appending("root") + fonts + "/DejaVuSans-Bold.ttf")[.size] as? Int == copied)
    }

    /// The hook carries the machine's console keymap as gauged reads it with no VT: made
    /// by the real loadkeys from console-setup's cached map, read back by gauged's decoder.
    @Test func theHookCarriesTheConsoleKeymap() throws {
        let (directory, environment) = try fixture()
        let stub = directory.appending("hook-functions")
        try "copy_exec() { :; }\ncopy_file() { :; }\ncopy_modules_dir() { :; }\nmanual_add_modules() { :; }\n".write(toFile: stub, atomically: true, encoding: .utf8)
        let setup = directory.appending("console-setup")
        try FileManager.default.createDirectory(atPath: setup, withIntermediateDirectories: true)
        // A layout with A and Q swapped, as French keyboards have them.
        let made = try shell(
            "printf 'keymaps 0-1\\nkeycode 16 = +a +A\\nkeycode 30 = +q +Q\\nkeycode 42 = Shift\\n' | gzip > \(setup)/cached_UTF-8_del.kmap.gz")
        #expect(made.status == 0, "\(made.output)")
        var env = environment
        env["GAUGE_HOOK_FUNCTIONS"] = stub
        env["GAUGE_CONSOLE_SETUP"] = setup
        env["DESTDIR"] = directory.appending("root")
        let result = try shell("integration/initramfs-tools/hooks/gauge", environment: env)
        #expect(result.status == 0, "\(result.output)")
        var keymap = EvdevKeymap(map: try ConsoleKeymap(path: directory.appending("root/etc/gauge/keymap.bmap")))
        var typed: [UInt8] = []
        let keys = tap(16) + inputRecord(code: 42, value: 1) + tap(30) + inputRecord(code: 42, value: 0)
        keys.withUnsafeBytes { keymap.feed($0, into: &typed) }
        #expect(typed == Array("aQ".utf8))

        // No keymap on the machine (the console is US too): none in the initramfs, quietly.
        env["GAUGE_CONSOLE_SETUP"] = "/nonexistent"
        env["GAUGE_VCONSOLE"] = "/nonexistent"
        env["DESTDIR"] = directory.appending("bare")
        let bare = try shell("integration/initramfs-tools/hooks/gauge", environment: env)
        #expect(bare.status == 0 && bare.output.isEmpty, "\(bare.output)")
        #expect(!FileManager.default.fileExists(atPath: directory.appending("bare/etc/gauge/keymap.bmap")))
    }

    /// `systemctl disable gauged.service` turns the boot screen off in the initramfs too:
    /// the hook copies nothing and says why; any other answer (enabled, no such unit, no
    /// systemctl) keeps Gauge in.
    @Test func initramfsToolsHookAddsNothingWhenTheBootScreenIsDisabled() throws {
        let (directory, environment) = try fixture()
        let stub = directory.appending("hook-functions")
        try """
            copy_exec() { echo "copy_exec $*" >> "$LOG"; }
            copy_file() { echo "copy_file $*" >> "$LOG"; }
            copy_modules_dir() { echo "copy_modules_dir $*" >> "$LOG"; }
            manual_add_modules() { echo "manual_add_modules $*" >> "$LOG"; }
            """.write(toFile: stub, atomically: true, encoding: .utf8)
        let bin = directory.appending("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        var env = environment
        env["GAUGE_HOOK_FUNCTIONS"] = stub
        env["LOG"] = directory.appending("log")
        env["DESTDIR"] = directory.appending("root")
        env["MODULES"] = "most"
        env["PATH"] = bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        for (state, copies) in [("disabled", false), ("enabled", true), ("", true)] {
            // systemctl as systemctl is-enabled answers: the state on stdout.
            try "#!/bin/sh\n[ \"$1 $2\" = \"is-enabled gauged.service\" ] && [ -n \"\(state)\" ] && echo \(state) && exit 0\nexit 1\n"
                .write(toFile: bin + "/systemctl", atomically: true, encoding: .utf8)
            _ = try shell("chmod +x \(bin)/systemctl; rm -f \(directory.appending("log"))")
            let result = try shell("integration/initramfs-tools/hooks/gauge", environment: env)
            #expect(result.status == 0, "\(result.output)")
            let log = (try? String(contentsOfFile: directory.appending("log"), encoding: .utf8)) ?? ""
            #expect(log.contains("copy_exec /usr/bin/gauged") == copies, "is-enabled says '\(state)': \(log)")
            #expect(result.output.contains("gauged.service is disabled: no boot screen in the initramfs") == !copies, "\(result.output)")
        }
    }

    @Test func initramfsToolsHookWithTheRealHookFunctionsCopiesLibraries() throws {
        let functions = "/usr/share/initramfs-tools/hook-functions"
        guard FileManager.default.fileExists(atPath: functions) else {
            Issue.record("\(functions) is missing; run tools/install-deps --test (package initramfs-tools-core)")
            return
        }
        guard let gauged = builtBinary("gauged") else {
            Issue.record("gauged not built")
            return
        }
        let (directory, environment) = try fixture()
        var env = environment
        let root = directory.appending("root")
        env["DESTDIR"] = root
        env["verbose"] = "n"
        env["GAUGE_BINDIR"] = URL(fileURLWithPath: gauged).deletingLastPathComponent().path
        // The libraries gauged loads, found on this machine, copied with theirs.
        env.removeValue(forKey: "GAUGE_LIBRARIES")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let result = try shell("integration/initramfs-tools/hooks/gauge", environment: env)
        #expect(result.status == 0, "\(result.output)")
        let copied = try shell("cd \(root) && find . -type f -o -type l")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: root + env["GAUGE_BINDIR", default: ""] + "/gaugectl") == "gauged")
        for name in ["/gauged", "libpixman-1.so", "libdrm.so", "libfreetype.so", "libpng16.so", "libudev.so", "libbrotlidec.so", "/Other.ttf", "/logo.png", "/gauge.theme"] {
            #expect(copied.output.contains(name), "\(name) not in the initramfs tree:\n\(copied.output)")
        }
    }

    @Test func dracutModuleInstallsTheSameList() throws {
        let (directory, environment) = try fixture()
        var env = environment
        env["LOG"] = directory.appending("log")
        let result = try runDracutModule("""
            inst_binary() { echo "inst_binary $*" >> "$LOG"; }
            inst_simple() { echo "inst_simple $*" >> "$LOG"; }
            inst_hook() { echo "inst_hook $1 $2 ${3##*/}" >> "$LOG"; }
            dracut_module_included() { return 1; }
            """, calls: "depends\ninstall", in: directory, environment: env)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output == "drm\n")
        let fonts = directory.appending("fonts")
        let log = try String(contentsOfFile: directory.appending("log"), encoding: .utf8)
        #expect(lines(log) == ["inst_binary /usr/bin/gauged"] + loadedLibraries(directory).map { "inst_binary \($0)" } + [
            "inst_simple \(directory.appending("gauge.theme"))", "inst_simple \(fonts)/logo.png",
            "inst_simple \(fonts)/Other.ttf", "inst_simple \(fonts)/DejaVuSans-Bold.ttf",
            "inst_simple \(fonts)/CJK.ttc",
            "inst_hook pre-trigger 10 gauge-start.sh", "inst_hook pre-pivot 90 gauge-newroot.sh",
            "inst_hook emergency 50 gauge-emergency.sh",
        ])
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: directory.appending("initrd/usr/bin/gaugectl")) == "gauged")
    }

    /// dracut resolves the libraries of executables only: the module adds those a library
    /// gauged loads needs itself (FreeType's zlib, libpng and brotli here).
    @Test func dracutModuleAddsTheLibrariesALoadedLibraryNeeds() throws {
        let freetype = try #require(
            ["/lib/x86_64-linux-gnu/libfreetype.so.6", "/usr/lib/x86_64-linux-gnu/libfreetype.so.6",
             "/lib/aarch64-linux-gnu/libfreetype.so.6", "/usr/lib/aarch64-linux-gnu/libfreetype.so.6"]
                .first { FileManager.default.fileExists(atPath: $0) }, "no libfreetype.so.6 on this machine")
        let (directory, environment) = try fixture()
        var env = environment
        env["LOG"] = directory.appending("log")
        env["GAUGE_LIBRARIES"] = freetype
        let result = try runDracutModule("""
            inst_binary() { echo "inst_binary $*" >> "$LOG"; }
            inst_simple() { :; }
            inst_hook() { :; }
            dracut_module_included() { return 1; }
            """, in: directory, environment: env)
        #expect(result.status == 0, "\(result.output)")
        let installed = lines(try String(contentsOfFile: directory.appending("log"), encoding: .utf8))
            .map { ($0 as NSString).lastPathComponent }
        for name in ["libfreetype.so.6", "libz.so.1", "libpng16.so.16", "libbrotlidec.so.1", "libbrotlicommon.so.1"] {
            #expect(installed.contains(name), "\(name) not installed: \(installed)")
        }
    }

    @Test func dracutModuleInASystemdInitrdInstallsTheUnits() throws {
        let (directory, environment) = try fixture()
        var env = environment
        env["LOG"] = directory.appending("log")
        let result = try runDracutModule("""
            inst_binary() { :; }
            inst_simple() { :; }
            inst_multiple() { echo "inst_multiple $*" >> "$LOG"; }
            inst_hook() { echo "inst_hook $*" >> "$LOG"; }
            inst_libdir_file() { echo "inst_libdir_file $*" >> "$LOG"; }
            dracut_module_included() { [ "$1" = systemd ]; }
            SYSTEMCTL=fake_systemctl
            fake_systemctl() { echo "systemctl $*" >> "$LOG"; }
            systemdsystemunitdir=/usr/lib/systemd/system
            """, in: directory, environment: env)
        #expect(result.status == 0, "\(result.output)")
        let log = try String(contentsOfFile: directory.appending("log"), encoding: .utf8)
        let units = "/usr/lib/systemd/system"
        #expect(lines(log) == [
            "inst_multiple -o \(units)/gauged.service \(units)/gauged-switch-root.service \(units)/emergency.service.d/gauge.conf \(units)/rescue.service.d/gauge.conf",
            "systemctl -q --root \(directory.appending("initrd")) add-wants sysinit.target gauged.service",
            "systemctl -q --root \(directory.appending("initrd")) add-wants initrd-switch-root.target gauged-switch-root.service",
            // The initrd's jobs followed (gauged.service starts the follower), with sd-bus.
            "inst_multiple -o \(units)/gauged-waits.service", "inst_libdir_file libsystemd.so.0*",
            // An encrypted root's passphrase is asked on the splash (gauge.ask=1) there too.
            "inst_multiple -o \(units)/gauged-ask-password.path \(units)/gauged-ask-password.service systemd-tty-ask-password-agent",
            "systemctl -q --root \(directory.appending("initrd")) add-wants sysinit.target gauged-ask-password.path",
            // A failed boot's screen, before systemd's emergency shell and dracut's own.
            "inst_multiple -o \(units)/gauged-boot-failed@.service /usr/share/gauge/boot-failed awk",
            "inst_hook emergency 50 integration/dracut/90gauge/gauge-emergency.sh",
        ])
        #expect(!log.contains("gauged.socket"))
        for (wanting, instance) in [("emergency.target", "emergency"), ("dracut-emergency.service", "dracut-emergency")] {
            let link = directory.appending("initrd\(units)/\(wanting).wants/gauged-boot-failed@\(instance).service")
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "../gauged-boot-failed@.service")
        }
        // The initrd's daemon crosses switch-root: no mount namespace of its own there
        // (docs/sandbox.md), every other wall kept.
        let dropIn = try String(contentsOfFile: directory.appending("initrd\(units)/gauged.service.d/initrd.conf"), encoding: .utf8)
        #expect(lines(dropIn) == ["[Service]", "PrivateMounts=no", "ProtectKernelTunables=no", "ProtectKernelModules=no",
                                  "ProtectKernelLogs=no", "ProtectControlGroups=no", "ProtectProc=default"])
        // The initrd's follower ends before the switch; the real root's follows on.
        let waits = try String(contentsOfFile: directory.appending("initrd\(units)/gauged-waits.service.d/initrd.conf"), encoding: .utf8)
        #expect(lines(waits) == ["[Unit]", "Conflicts=initrd-switch-root.target", "Before=initrd-switch-root.target"])
    }

    @Test func scriptsParse() throws {
        for (path, bash) in [
            ("integration/gauge-files", false), ("integration/initramfs-tools/hooks/gauge", false),
            ("integration/initramfs-tools/scripts/init-top/gauge", false), ("integration/dracut/90gauge/module-setup.sh", true),
            ("integration/dracut/90gauge/gauge-start.sh", false), ("integration/dracut/90gauge/gauge-newroot.sh", false),
            ("integration/initramfs-tools/scripts/init-bottom/gauge", false), ("integration/initramfs-tools/scripts/panic/gauge", false),
            ("integration/dracut/90gauge/gauge-emergency.sh", false),
        ] {
            let result = try shell("\(bash ? "bash" : "sh") -n \(path)")
            #expect(result.status == 0, "\(path): \(result.output)")
        }
    }
}
