import Foundation
import GaugeProtocol
import Glibc
import Testing
import GaugeTestSupport

// `gaugectl apt` against Debian's real apt-get and dpkg (dpkg-scanpackages from dpkg-dev
// makes the repository; see tools/install-deps): a root of the test's own, with a shell
// and sleep for the maintainer scripts, which dpkg --root runs chrooted into it, and a
// local `copy:` repository of three tiny packages built with dpkg-deb. No network.
// dpkg's chroot needs root.

private let tools = ["/usr/bin/apt-get", "/usr/bin/dpkg", "/usr/bin/dpkg-deb", "/usr/bin/dpkg-scanpackages"]

/// The root apt-get and dpkg work on, and the repository they install from.
private final class AptRoot {
    let directory = TemporaryDirectory()

    var root: String { directory.appending("root") }
    var repository: String { directory.appending("repository") }

    init() throws {
        for name in [
            "etc/apt/apt.conf.d", "etc/apt/preferences.d", "etc/apt/sources.list.d", "var/lib/apt/lists/partial",
            "var/cache/apt/archives/partial", "var/lib/dpkg/info", "var/lib/dpkg/updates", "var/log/apt", "bin",
        ] {
            try FileManager.default.createDirectory(atPath: root + "/" + name, withIntermediateDirectories: true)
        }
        try FileManager.default.createDirectory(atPath: repository, withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: root + "/var/lib/dpkg/status"))
        try copyProgram("/bin/dash", as: "/bin/sh")
        try copyProgram("/bin/sleep", as: "/bin/sleep")
        // The postinst scripts wait a little, so a sampler sees each package configured.
        try makePackage("gauge-one", postinst: "sleep 0.4")
        try makePackage("gauge-two", postinst: "sleep 0.4")
        try makePackage("gauge-bad", postinst: "sleep 0.4; echo 'gauge-bad cannot be set up' >&2; exit 1")
        let scan = try runProgram("/bin/sh", ["-c", "cd '\(repository)' && dpkg-scanpackages -m . /dev/null > Packages"])
        try #require(scan.status == 0, "dpkg-scanpackages: \(scan.stderr)")
        try "deb [trusted=yes] copy:\(repository) ./\n".write(toFile: root + "/etc/apt/sources.list", atomically: true, encoding: .utf8)
        let update = try runProgram("/usr/bin/apt-get", aptOptions + ["update"])
        try #require(update.status == 0, "apt-get update: \(update.stdout) \(update.stderr)")
    }

    /// apt-get's options for this root: its files, dpkg --root, no locking of the host's.
    var aptOptions: [String] {
        [
            "Dir=\(root)", "Dir::Bin::Methods=/usr/lib/apt/methods", "Dir::Bin::dpkg=/usr/bin/dpkg",
            "DPkg::Options::=--root=\(root)", "APT::Sandbox::User=root", "Debug::NoLocking=1", "Dir::Log=\(root)/var/log/apt",
        ].flatMap { ["-o", $0] }
    }

    func deb(_ name: String) -> String { repository + "/\(name)_1.0_all.deb" }

    /// `program` and the libraries ldd names for it, at the same places in the root.
    private func copyProgram(_ program: String, as target: String) throws {
        let ldd = try runProgram("/usr/bin/ldd", [program])
        let libraries = ldd.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" })
            .map(String.init).filter { $0.hasPrefix("/") }
        for library in libraries {
            let destination = root + library
            try FileManager.default.createDirectory(
                atPath: (destination as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            // The file itself: a symbolic link would point outside the root.
            if !FileManager.default.fileExists(atPath: destination) {
                try FileManager.default.copyItem(atPath: URL(fileURLWithPath: library).resolvingSymlinksInPath().path, toPath: destination)
            }
        }
        try FileManager.default.copyItem(atPath: program, toPath: root + target)
    }

    private func makePackage(_ name: String, postinst: String) throws {
        let tree = directory.appending("build-\(name)")
        try FileManager.default.createDirectory(atPath: tree + "/DEBIAN", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: tree + "/usr/share/\(name)", withIntermediateDirectories: true)
        // 300 kB that do not compress: the download has bytes to count.
        let data = Data((0..<300_000).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 11) })
        try data.write(to: URL(fileURLWithPath: tree + "/usr/share/\(name)/data"))
        try """
            Package: \(name)
            Version: 1.0
            Architecture: all
            Maintainer: Gauge tests <tests@example.invalid>
            Description: a package for gaugectl apt's test

            """.write(toFile: tree + "/DEBIAN/control", atomically: true, encoding: .utf8)
        try "#!/bin/sh\n\(postinst)\n".write(toFile: tree + "/DEBIAN/postinst", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: tree + "/DEBIAN/postinst")
        let build = try runProgram("/usr/bin/dpkg-deb", ["--root-owner-group", "-Zgzip", "--build", tree, deb(name)])
        try #require(build.status == 0, "dpkg-deb: \(build.stderr)")
    }
}

/// Checks one run as the daemon showed it: the bar never went back while running, never
/// full before the end, rose above 0, and named `package` with an action.
private func checkRun(_ all: [Status], package: String, label: String) {
    let samples = Array(all.drop { !($0.state == .running && $0.target < 100) })
    for (before, after) in zip(samples, samples.dropFirst()) where before.state == .running && after.state == .running {
        #expect(after.target >= before.target, "\(label): the bar went back from \(before.target) to \(after.target)")
    }
    let running = samples.filter { $0.state == .running }
    #expect(running.allSatisfy { $0.target < 100 }, "\(label): the bar was full while the command ran")
    #expect(running.contains { $0.target > 0 }, "\(label): the bar never rose: \(running.map(\.target))")
    #expect(
        running.contains { $0.message.hasPrefix("Configuring \(package)") },
        "\(label): no message named \(package) being configured: \(Set(running.map(\.message)))")
}

@Suite(.serialized) struct RealAptTests {
    @Test(.enabled(if: geteuid() == 0, "dpkg --root runs the maintainer scripts chrooted"))
    func aptGetAndDpkgShowOneRisingBarAndTheirFailuresWithAptsWords() throws {
        for tool in tools where !FileManager.default.isExecutableFile(atPath: tool) {
            Issue.record("\(tool) is missing; run tools/install-deps --test (Debian packages apt, dpkg, dpkg-dev)")
            return
        }
        let apt = try AptRoot()
        let daemon = try GaugedProcess(["--fps", "60"])
        let client = ["--socket", daemon.socketPath, "apt", "--stall", "0", "--creep", "0", "--"]

        var sampler = StatusSampler(daemon)
        let installed = try gaugectl(client + ["apt-get"] + apt.aptOptions + ["-y", "install", "gauge-one", "gauge-two"])
        #expect(installed.status == 0, "apt-get install: \(installed.stderr)")
        // apt-get's own output still reaches gaugectl's standard output.
        #expect(installed.stdout.contains("Setting up gauge-two (1.0)"))
        let done = try daemon.waitForStatus { $0.state != .running }
        #expect(done.state == .success && done.target == 100 && done.message == "Done")
        checkRun(sampler.stop(), package: "gauge-one", label: "apt-get install")

        sampler = StatusSampler(daemon)
        let failed = try gaugectl(client + ["apt-get"] + apt.aptOptions + ["-y", "install", "gauge-bad"])
        #expect(failed.status == 100, "apt-get's own exit status is gaugectl's: \(failed.stderr)")
        let words = "installed gauge-bad package post-installation script subprocess returned error exit status 1"
        // dpkg's words in apt-get's own output are the failure's on the screen.
        let said = failed.stdout + failed.stderr
        #expect(said.contains(words) && said.contains("gauge-bad cannot be set up"), "\(said)")
        let failure = try daemon.waitForStatus { $0.state != .running }
        #expect(failure.state == .failure && failure.message == "gauge-bad: " + words, "\(failure)")
        #expect(failure.target < 100)
        checkRun(sampler.stop(), package: "gauge-bad", label: "apt-get install of a failing package")

        // dpkg itself: a purge of the two (a step each) and an install from .deb files.
        let purged = try gaugectl(client + ["dpkg", "--root", apt.root, "--purge", "gauge-one", "gauge-two"])
        #expect(purged.status == 0, "dpkg --purge: \(purged.stderr)")
        #expect(try daemon.waitForStatus { $0.state != .running }.state == .success)

        sampler = StatusSampler(daemon)
        let dpkgInstalled = try gaugectl(client + ["dpkg", "--root", apt.root, "-i", apt.deb("gauge-one"), apt.deb("gauge-two")])
        #expect(dpkgInstalled.status == 0, "dpkg -i: \(dpkgInstalled.stderr)")
        #expect(try daemon.waitForStatus { $0.state != .running }.state == .success)
        checkRun(sampler.stop(), package: "gauge-two", label: "dpkg -i")
    }
}

/// A stand-in named apt-get that misbehaves as the issue lists: binary output, a status
/// line that never ends, garbage, SIGTERM ignored, and a child that keeps the status pipe
/// open after it exits.
private let misbehavingAptGet = #"""
    #!/bin/sh
    for work in "$@"; do :; done
    printf 'pmstatus:hello:30.0000:Unpacking hello (amd64)\n\001\002binary\377\n' >&3
    head -c 20000 /dev/zero | tr '\0' x >&3
    printf '\nnot a status line\n' >&3
    printf '\000\377\376raw bytes\200' 
    trap '' TERM
    touch "$work/ready"
    while [ ! -e "$work/stop" ]; do sleep 0.05; done
    sleep 15 >/dev/null 2>&1 </dev/null &
    exit 7
    """#

@Suite(.serialized) struct AptBadCommandTests {
    @Test func aCommandIgnoringSIGTERMIsWaitedForAndItsEndIsForwardedEvenWithThePipeHeldOpen() throws {
        let work = TemporaryDirectory()
        let fake = work.appending("apt-get")
        try misbehavingAptGet.write(toFile: fake, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: fake)
        let daemon = try GaugedProcess(["--fps", "60"])
        let log = work.appending("gaugectl.log")
        let pid = try spawn(
            try BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl"),
            ["--socket", daemon.socketPath, "apt", "--stall", "0", "--creep", "0", "--", fake, work.path],
            environment: childEnvironment(), outputPath: log)
        var status = reap(pid, within: 0)
        defer { if status == nil { kill(pid, SIGKILL); _ = reap(pid, within: 5) } }
        let deadline = monotonicNow() + 30
        while !FileManager.default.fileExists(atPath: work.appending("ready")) && monotonicNow() < deadline { usleep(10_000) }
        let running = try daemon.waitForStatus { $0.message == "Unpacking hello (amd64)" }
        #expect(running.state == .running && running.target == 30)
        kill(pid, SIGTERM)
        let stopping = try daemon.waitForStatus { $0.message == "Stopping: waiting for apt-get to end" }
        #expect(stopping.state == .running && stopping.target == 30, "the bar holds while the command goes on")
        status = reap(pid, within: 0.3)
        #expect(status == nil, "gaugectl waits for a command that ignores SIGTERM")
        try Data().write(to: URL(fileURLWithPath: work.appending("stop")))
        // The sleep the stand-in left behind holds the pipe for 15 s: gaugectl does not wait for it.
        status = reap(pid, within: 10)
        #expect(status.map { ($0 >> 8) & 0xFF } == 7, "gaugectl's exit status is the command's 7")
        // gaugectl's stdout and stderr share the log: the command's bytes pass unchanged.
        let output = try Data(contentsOf: URL(fileURLWithPath: log))
        #expect(output.range(of: Data([0, 0xFF, 0xFE] + Array("raw bytes".utf8) + [0x80])) != nil)
        let stderr = String(decoding: output, as: UTF8.self)
        for text in [
            "gaugectl: apt: a status line that is not APT's or dpkg's skipped: '  binary\u{FFFD}'",
            "gaugectl: apt: a status line longer than 16384 bytes skipped",
            "gaugectl: apt: a status line that is not APT's or dpkg's skipped: 'not a status line'",
            "gaugectl: apt: passed signal 15 on to apt-get (pid ",
            "gaugectl: apt: apt-get failed (exit status 7)",
        ] {
            #expect(stderr.contains(text), "gaugectl's log lacks \(text): \(stderr)")
        }
        let end = try daemon.waitForStatus { $0.state != .running }
        #expect(end.state == .failure && end.message == "apt-get failed (exit status 7)" && end.target == 30)
    }

    @Test func aCommandKilledBySignalNExitsWith128PlusNAndAMissingOneWith127() throws {
        let work = TemporaryDirectory()
        let fake = work.appending("dpkg")
        try "#!/bin/sh\nprintf 'processing: install: hello\\n' >&3\nkill -9 $$\n".write(toFile: fake, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: fake)
        let daemon = try GaugedProcess(["--fps", "60"])
        let killed = try gaugectl(["--socket", daemon.socketPath, "apt", "--", fake, "-i", "hello.deb"])
        #expect(killed.status == 137, "\(killed.stderr)")
        let end = try daemon.waitForStatus { $0.state != .running }
        #expect(end.state == .failure && end.message == "dpkg was killed by signal 9")
        let missing = try gaugectl(["--socket", daemon.socketPath, "apt", "--", work.appending("nothing/apt-get"), "update"])
        #expect(missing.status == 127 && missing.stderr.contains("cannot run"), "\(missing.stderr)")
        let usage = try gaugectl(["--socket", daemon.socketPath, "apt", "--", "sh", "-c", "apt-get update"])
        #expect(usage.status == 2 && usage.stderr.contains("no word of the command is apt-get, apt, aptitude or dpkg"))
    }
}
