import Foundation
import GaugeDisplay
import GaugeProtocol
import GaugeRender
import Glibc
import Testing
import GaugeTestSupport

// The README's installer recipe (its `install.sh`, taken from the README as written) against
// the real gauged on the memory display and an image file: what the screen shows (pixels,
// status), the script's exit status, and what landed in the image (partitions, the boot
// loader, the root file system with the package installed). ReadmeTests runs the whole
// block as pasted; this looks closer.

/// What the recipe's tools are; tools/install-deps --test installs them.
private let recipeTools = [
    "/usr/sbin/sfdisk", "/usr/bin/pv", "/usr/sbin/mkfs.ext4", "/usr/sbin/e2fsck", "/usr/sbin/debugfs", "/usr/bin/mformat",
    "/usr/bin/mcopy", "/usr/bin/syslinux", "/usr/lib/syslinux/mbr/mbr.bin", "/usr/bin/dpkg-deb",
]

/// The tree and packages the recipe installs, and the script itself, in a directory of
/// their own.
private final class RecipeFixture {
    let directory = TemporaryDirectory()
    var script: String { directory.appending("install.sh") }
    var tree: String { directory.appending("tree") }
    var image: String { directory.appending("disk.img") }
    func deb(_ name: String) -> String { directory.appending("\(name).deb") }

    init() throws {
        let block = try #require(try ReadmeExamples.blocks(in: "README.md").first { $0.name == "installer" })
        let opening = "cat > /tmp/install.sh <<'EOF'\n"
        let body = try #require(block.code.components(separatedBy: opening).dropFirst().first?.components(separatedBy: "\nEOF\n").first)
        try (body + "\n").write(toFile: script, atomically: true, encoding: .utf8)
        let make = #"""
            cd "$1"
            mkdir -p tree/boot tree/etc tree/var/lib/dpkg/info tree/var/lib/dpkg/updates
            touch tree/var/lib/dpkg/status
            head -c 1000000 /dev/urandom >tree/boot/vmlinuz-6.1.0-0-amd64
            head -c 500000 /dev/urandom >tree/boot/initrd.img-6.1.0-0-amd64
            ln -s boot/vmlinuz-6.1.0-0-amd64 tree/vmlinuz
            ln -s boot/initrd.img-6.1.0-0-amd64 tree/initrd.img
            echo installed >tree/etc/hostname
            for name in hello broken; do
              mkdir -p $name/DEBIAN $name/usr/share/doc/gauge-$name
              echo "gauge-$name" >$name/usr/share/doc/gauge-$name/README
              printf 'Package: gauge-%s\nVersion: 1.0\nArchitecture: all\nMaintainer: Gauge <gauge@example.invalid>\nDescription: tiny\n' $name >$name/DEBIAN/control
            done
            echo "Depends: gauge-missing" >>broken/DEBIAN/control
            for name in hello broken; do dpkg-deb --root-owner-group --build $name $name.deb >/dev/null; done
            """#
        let made = try runProgram("/bin/bash", ["-e", "-c", make, "make", directory.path])
        try #require(made.status == 0, "\(made.stderr)")
    }

    /// Runs the recipe on a fresh image of `megabytes` with `debs`, against `daemon`.
    func install(_ debs: [String], megabytes: Int = 256, daemon: GaugedProcess) throws -> ProgramRun {
        unlink(image)
        #expect(FileManager.default.createFile(atPath: image, contents: nil))
        #expect(truncate(image, off_t(megabytes) << 20) == 0)
        let client = try BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl")
        let path = (client as NSString).deletingLastPathComponent + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        return try runProgram(
            "/bin/bash", [script, image, tree] + debs.map(deb), environment: ["PATH": path, "GAUGE_SOCKET": daemon.socketPath])
    }

    /// `command` (a shell line) run on the image's root partition, copied out of it.
    func onRootPartition(_ command: String) throws -> ProgramRun {
        let part = directory.appending("root.img")
        let copy = try runProgram("/bin/dd", ["if=\(image)", "of=\(part)", "bs=512", "skip=264192", "status=none"])
        try #require(copy.status == 0, "\(copy.stderr)")
        return try runProgram("/bin/sh", ["-c", command, "sh", part])
    }
}

@Suite(.serialized) struct InstallerRecipeTests {
    /// The daemon the recipe draws on, its frames settled at once (no easing, no
    /// animation), so a snapshot is the frame of one model.
    static func daemon() throws -> GaugedProcess {
        let daemon = try GaugedProcess(display: "memory:480x320")
        #expect(try daemon.request("theme animate=false transition_duration=0") == "ok")
        return daemon
    }

    /// The frame the daemon shows now, against the one an in-process scene draws for
    /// `model`.
    static func expectFrame(_ daemon: GaugedProcess, _ model: ScreenModel) throws {
        #expect(try daemon.request("wait") == "ok")
        let path = daemon.directory.appending("frame.png")
        #expect(try daemon.request("snapshot \(path)") == "ok")
        var theme = Theme()
        theme.animate = false
        theme.transitionDuration = 0
        let expected = try renderedFrame(model, theme: theme, width: 480, height: 320)
        #expect(differingPixels(try PNG.read(path), expected) == 0, "the frame is not \(model)")
    }

    @Test(.enabled(if: geteuid() == 0, "dpkg --root chroots; the README's recipe runs as root"))
    func aPassingInstallationFillsTheBarAndLeavesABootableImage() throws {
        for tool in recipeTools where !FileManager.default.fileExists(atPath: tool) {
            Issue.record("\(tool) is missing; run tools/install-deps --test")
            return
        }
        let fixture = try RecipeFixture()
        let daemon = try Self.daemon()
        let sampler = StatusSampler(daemon)
        let run = try fixture.install(["hello"], daemon: daemon)
        let samples = sampler.stop()
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let status = try daemon.status()
        #expect(status.state == .success && status.target == 100 && status.message == "Installed" && status.title == "Installing")
        try Self.expectFrame(daemon, settledModel(100, message: "Installed", title: "Installing", state: .success))
        // One bar: never back, rising through the stages, success only once at the end
        // (a stage's success is its range's end, still running).
        for (a, b) in zip(samples, samples.dropFirst()) { #expect(b.target >= a.target, "\(a.target) then \(b.target)") }
        #expect(Set(samples.map(\.target)).count >= 3, "\(samples.map(\.target))")
        #expect(samples.drop { $0.state != .success }.allSatisfy { $0.state == .success }, "\(samples.map(\.state))")

        // The image: two partitions, the first bootable FAT with SYSLINUX and the kernel,
        // the MBR's boot code SYSLINUX's, the root file system clean with the package in.
        let table = try runProgram("/usr/sbin/sfdisk", ["--dump", fixture.image]).stdout
        #expect(table.contains("start=        2048, size=      262144, type=c, bootable"), "\(table)")
        #expect(table.contains("start=      264192, size=      260096, type=83"), "\(table)")
        let image = try Data(contentsOf: URL(fileURLWithPath: fixture.image))
        let mbr = try Data(contentsOf: URL(fileURLWithPath: "/usr/lib/syslinux/mbr/mbr.bin"))
        #expect(image.prefix(440) == mbr.prefix(440))
        #expect(image[510] == 0x55 && image[511] == 0xAA)
        let files = try runProgram("/usr/bin/mdir", ["-a", "-b", "-i", fixture.image + "@@1048576", "::"]).stdout
        for name in ["ldlinux.sys", "ldlinux.c32", "syslinux.cfg", "vmlinuz", "initrd.img"] {
            #expect(files.lowercased().contains("::/\(name)"), "\(name) not on the boot partition: \(files)")
        }
        let config = try runProgram("/usr/bin/mtype", ["-i", fixture.image + "@@1048576", "::/syslinux.cfg"]).stdout
        let diskID = try runProgram("/usr/sbin/sfdisk", ["--disk-id", fixture.image]).stdout.dropFirst(2).dropLast()
        #expect(config.contains("INITRD /initrd.img\n  APPEND root=PARTUUID=\(diskID)-02 ro"), "\(config)")
        // The kernel itself, not the link to it.
        let kernel = try runProgram("/bin/sh", ["-c", "mtype -i \"$1@@1048576\" ::/vmlinuz | cmp - \"$2\"", "sh", fixture.image, fixture.tree + "/boot/vmlinuz-6.1.0-0-amd64"])
        #expect(kernel.status == 0, "\(kernel.stdout)\(kernel.stderr)")
        let check = try fixture.onRootPartition("e2fsck -fn \"$1\"")
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        let root = try fixture.onRootPartition(
            "debugfs -R 'cat /usr/share/doc/gauge-hello/README' \"$1\"; debugfs -R 'cat /var/lib/dpkg/status' \"$1\"; debugfs -R 'cat /etc/hostname' \"$1\"")
        #expect(root.stdout.hasPrefix("gauge-hello\n"), "\(root.stdout)")
        #expect(root.stdout.contains("Package: gauge-hello\nStatus: install ok installed\n"), "\(root.stdout)")
        #expect(root.stdout.hasSuffix("installed\n"))
    }

    @Test(.enabled(if: geteuid() == 0, "dpkg --root chroots; the README's recipe runs as root"))
    func aFailingStageStopsItShowsItsWordsAndItsStatusIsTheScripts() throws {
        for tool in recipeTools where !FileManager.default.fileExists(atPath: tool) {
            Issue.record("\(tool) is missing; run tools/install-deps --test")
            return
        }
        let fixture = try RecipeFixture()
        let daemon = try Self.daemon()

        // The packages stage (35-70 %): dpkg's words, dpkg's status.
        var run = try fixture.install(["hello", "broken"], daemon: daemon)
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        #expect(run.stderr.contains("gaugectl: apt: dpkg failed (exit status 1)"), "\(run.stderr)")
        var status = try daemon.status()
        let words = "gauge-broken: dependency problems - leaving unconfigured"
        #expect(status.state == .failure && status.message == words, "\(status)")
        #expect(status.target > 35 && status.target < 70, "\(status.target)")
        try Self.expectFrame(daemon, settledModel(status.target, message: words, title: "Installing", state: .failure))
        // Stopped there: no boot loader written (the MBR's boot code is not SYSLINUX's).
        let image = try Data(contentsOf: URL(fileURLWithPath: fixture.image))
        #expect(image.prefix(440) != (try Data(contentsOf: URL(fileURLWithPath: "/usr/lib/syslinux/mbr/mbr.bin"))).prefix(440))

        // The first stage: a disk too small for the partitions (1 MiB), sfdisk's status.
        run = try fixture.install(["hello"], megabytes: 1, daemon: daemon)
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        status = try daemon.status()
        #expect(status.state == .failure && status.message == "sfdisk failed (exit status 1)" && status.target == 0, "\(status)")
        try Self.expectFrame(daemon, settledModel(0, message: "sfdisk failed (exit status 1)", title: "Installing", state: .failure))
    }
}
