import Foundation
import GaugeRender
import Testing
import GaugeTestSupport

/// `gaugectl theme --list`, `--set NAME` and `--rebuild-initramfs`, run as programs on a
/// temporary root (`GAUGE_THEME` for /etc/gauge/gauge.theme, `GAUGE_THEMES` for the
/// shipped themes: the checkout's `data/themes`), and what the boot then gets of it.
@Suite("Choosing a theme (gaugectl theme --list, --set, --rebuild-initramfs)")
struct ThemeChoiceTests {
    private let themes = repositoryRoot.path + "/data/themes"

    private func run(_ arguments: [String], _ environment: [String: String]) throws -> ProgramRun {
        try runProgram(try BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl"), arguments, environment: environment)
    }

    private func contents(_ path: String) -> String? {
        try? String(contentsOfFile: path, encoding: .utf8)
    }

    @Test func listAndSetIntoATemporaryRoot() throws {
        let directory = TemporaryDirectory()
        let chosen = directory.appending("gauge.theme")
        let environment = ["GAUGE_THEME": chosen, "GAUGE_THEMES": themes]
        let none = try run(["theme", "--list"], environment)
        #expect(none.status == 0 && none.stdout == "  box\n  circles\n  default\n  flat-blue\n  ring\n", "\(none)")

        // No file yet: one is made, naming the theme.
        let made = try run(["theme", "--set", "box"], environment)
        #expect(made.status == 0 && made.stdout.hasPrefix("theme box set in \(chosen)"), "\(made)")
        #expect(contents(chosen)?.split(separator: "\n").filter { !$0.hasPrefix("#") } == ["base = box"])
        let mode = try FileManager.default.attributesOfItem(atPath: chosen)[.posixPermissions] as? Int
        #expect(mode == 0o644)
        #expect(try run(["theme", "-l"], environment).stdout == "* box\n  circles\n  default\n  flat-blue\n  ring\n")

        // The package's file with an administrator's key: only the base line changes.
        let sample = try #require(contents(repositoryRoot.path + "/data/gauge.theme"))
        try (sample + "fill_color = #ff0000\n").write(toFile: chosen, atomically: false, encoding: .utf8)
        #expect(try run(["theme", "--set", "flat-blue"], environment).status == 0)
        #expect(contents(chosen) == sample.replacingOccurrences(of: "base = default\n", with: "base = flat-blue\n") + "fill_color = #ff0000\n")

        // A theme that is not there changes nothing, and says which are.
        let unknown = try run(["theme", "--set", "spinner"], environment)
        #expect(unknown.status == 1)
        #expect(unknown.stderr == "gaugectl: no theme 'spinner' in \(themes); the themes: box, circles, default, flat-blue, ring\n")
        #expect(contents(chosen)?.contains("base = flat-blue\n") == true)
        let nowhere = try run(["theme", "--set", "box"], ["GAUGE_THEME": directory.appending("absent/gauge.theme"), "GAUGE_THEMES": themes])
        #expect(nowhere.status == 1 && nowhere.stderr.hasPrefix("gaugectl: cannot write \(directory.appending("absent/gauge.theme")): "), "\(nowhere)")
        #expect(try run(["theme", "--set", "../box"], environment).status == 2)
        #expect(try run(["theme", "--list", "fill_color=#ff0000"], environment).status == 2)
    }

    /// The theme chosen, with local overrides, is what the daemon draws (its snapshot, pixel
    /// for pixel: the box theme's panel, on the override's background) and what the
    /// initramfs gets (gauge-files lists the theme, its base and the base's logo).
    @Test func theChosenThemeUnderLocalOverridesIsDrawnAndCarried() throws {
        let directory = TemporaryDirectory()
        let chosen = directory.appending("gauge.theme")
        try "# mine\nbackground = #102030\nbase = default\nanimate = false\ntransition_duration = 0\n".write(
            toFile: chosen, atomically: false, encoding: .utf8)
        let environment = ["GAUGE_THEME": chosen, "GAUGE_THEMES": themes]
        #expect(try run(["theme", "--set", "box"], environment).status == 0)
        var theme = Theme()
        #expect(try ThemeFile.load(chosen, into: &theme, themes: themes).isEmpty)
        #expect(theme.style == .box && theme.background == Color(parsing: "#102030") && !theme.animate)

        let daemon = try GaugedProcess(["--theme", chosen], display: "memory:800x480", environment: environment)
        #expect(try daemon.request("progress 30") == "ok")
        #expect(try daemon.request("wait") == "ok")
        let snapshot = directory.appending("shot.png")
        #expect(try daemon.request("snapshot \(snapshot)") == "ok")
        let expected = try renderedFrame(settledModel(30), theme: theme, width: 800, height: 480)
        #expect(differingPixels(try PNG.read(snapshot), expected) == 0)
        // Around the panel: the override's background under the box theme's cover (#00000099).
        let image = try PNG.read(snapshot)
        let corner = (470 * image.width + 5) * 4
        let dimmed = [0x10, 0x20, 0x30].map { Double($0) * 0.4 }
        #expect(zip(image.rgba[corner..<(corner + 3)], dimmed).allSatisfy { abs(Double($0) - $1) <= 1 }, "\(image.rgba[corner..<(corner + 3)])")
        #expect(!daemon.log.contains("theme:"), "\(daemon.log)")

        let listed = try runProgram("/bin/sh", [repositoryRoot.path + "/integration/gauge-files"], environment: environment)
        #expect(listed.status == 0, "\(listed)")
        let files = listed.stdout.split(separator: "\n").filter { $0.hasPrefix("file ") }
        #expect(Array(files.prefix(3)) == ["file \(chosen)", "file \(themes)/box.theme", "file \(themes)/../gauge-logo.png"], "\(files)")
    }

    /// `--rebuild-initramfs` runs update-initramfs -u, or dracut -f where there is no
    /// update-initramfs, and reports how it ended: exit 1 when it failed.
    @Test func rebuildingTheInitramfsReportsTheBuildersStatus() throws {
        let directory = TemporaryDirectory()
        let bin = directory.appending("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let calls = directory.appending("calls")
        func builder(_ name: String, status: Int) throws {
            let path = bin + "/" + name
            try "#!/bin/sh\necho \"\(name) $*\" >> \(calls)\nexit \(status)\n".write(toFile: path, atomically: false, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        }
        let environment = ["GAUGE_THEME": directory.appending("gauge.theme"), "GAUGE_THEMES": themes, "PATH": bin]
        try builder("dracut", status: 0)
        let dracut = try run(["theme", "--set", "ring", "-R"], environment)
        #expect(dracut.status == 0 && dracut.stdout.hasSuffix("dracut -f: the initramfs is rebuilt (exit status 0)\n"), "\(dracut)")
        try builder("update-initramfs", status: 3)
        let failed = try run(["theme", "--rebuild-initramfs"], environment)
        #expect(failed.status == 1)
        #expect(failed.stderr == "gaugectl: the initramfs is not rebuilt: update-initramfs -u failed (exit status 3)\n")
        #expect(contents(calls) == "dracut -f\nupdate-initramfs -u\n")
        let nothing = try run(["theme", "-R"], ["GAUGE_THEMES": themes, "PATH": directory.appending("empty")])
        #expect(nothing.status == 1 && nothing.stderr.contains("neither update-initramfs nor dracut is on PATH"), "\(nothing)")
    }
}
