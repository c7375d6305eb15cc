import Foundation
import GaugeDisplay
import GaugeProtocol
import GaugeRender
import Testing

private let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized.path
private let themes = repository + "/data/themes"

/// A directory of its own for a test's files.
private func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "gauge-themes-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

@Suite("Shipped themes and base = NAME")
struct ShippedThemesTests {
    /// `--set`'s edit: the first base line takes the name, later ones go, every other line
    /// stays; with none, the line goes after the comments the file starts with.
    @Test func choosingRewritesOnlyTheBaseLine() {
        let text = "# mine\n[bar]\nfill_color = #ff0000\nbase = default\n  bar.base = \"ring\"\nbar_height = 30\n"
        #expect(ThemeBase.choosing("box", in: text) == "# mine\n[bar]\nfill_color = #ff0000\nbase = box\nbar_height = 30\n")
        #expect(ThemeBase.choosing("box", in: "# a\n; b\n\nfill_color = #ff0000") == "# a\n; b\nbase = box\n\nfill_color = #ff0000")
        let fresh = ThemeBase.choosing("ring", in: nil)
        #expect(ThemeBase.named(in: fresh)?.name == "ring")
        #expect(ThemeBase.named(in: text)?.name == "ring" && ThemeBase.named(in: text)?.line == 5, "the last base line wins")
        #expect(ThemeBase.names(in: ["box.theme", "README", "a b.theme", "ring.theme", ".theme", "x.theme~"]) == ["box", "ring"])
        #expect(!ThemeBase.isName("../etc/x") && !ThemeBase.isName("a.b") && ThemeBase.isName("flat-blue"))
    }

    /// The base applies first wherever its line stands, the file's keys over it; its
    /// relative paths are from the themes' directory; its problems name its file and line.
    @Test func aBaseThemeUnderLocalOverrides() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/themes", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: repository + "/data/gauge-logo.png", toPath: directory + "/themes/logo.png")
        try "fill_color = #2f7fdf\nbar_height = 40\nlogo = logo.png\nbogus_key = 1\n".write(
            toFile: directory + "/themes/blue.theme", atomically: false, encoding: .utf8)
        var theme = Theme()
        let found = ThemeFile.apply(
            "bar_height = 30\n[screen]\nscreen.base = blue\n", to: &theme, path: directory + "/gauge.theme", themes: directory + "/themes")
        #expect(found.map(\.description) == ["\(directory)/themes/blue.theme:4: unknown theme key 'bogus_key'"])
        #expect(theme.fillColor == Color(parsing: "#2f7fdf") && theme.barHeight == 30 && theme.logo == directory + "/themes/logo.png")

        func problems(_ text: String, themes: String? = directory + "/themes") -> [String] {
            var theme = Theme()
            return ThemeFile.apply(text, to: &theme, path: "/etc/gauge/gauge.theme", themes: themes).map(\.description)
        }
        #expect(problems("\nbase = nope\n") == ["/etc/gauge/gauge.theme:2: base: no theme 'nope' in \(directory)/themes (gaugectl theme --list)"])
        #expect(problems("base = ../x") == ["/etc/gauge/gauge.theme:1: base: '../x' is not a theme's name (letters, digits, _ and - only)"])
        #expect(problems("base = blue", themes: nil) == ["/etc/gauge/gauge.theme:1: base: a base theme is named only in a theme file"])
        try "base = blue\n".write(toFile: directory + "/themes/nested.theme", atomically: false, encoding: .utf8)
        #expect(problems("base = nested") == ["\(directory)/themes/nested.theme:1: base: a base theme is built on none"])
    }

    /// Every shipped theme reads without a problem, and `data/gauge.theme`, the one
    /// installed as /etc/gauge/gauge.theme, is the default one.
    @Test func theShippedThemesReadCleanly() throws {
        let names = ThemeBase.names(in: try FileManager.default.contentsOfDirectory(atPath: themes))
        #expect(names == ["box", "circles", "default", "flat-blue", "ring"])
        for name in names {
            var theme = Theme()
            #expect(try ThemeFile.load(themes + "/\(name).theme", into: &theme, themes: themes).isEmpty, "\(name)")
            #expect(theme.logo == ThemeSetting.firmwareLogo && theme.logoFallback == themes + "/../gauge-logo.png", "\(name)")
        }
        var sample = Theme(), base = Theme()
        #expect(try ThemeFile.load(repository + "/data/gauge.theme", into: &sample, themes: themes).isEmpty)
        #expect(try ThemeFile.load(themes + "/default.theme", into: &base, themes: themes).isEmpty)
        #expect(sample == base)
    }

    /// Each gallery look is its shipped theme: rendered from the theme file, on a machine
    /// whose firmware published no logo (so the fallback shows), it is the gallery's picture.
    @Test(arguments: [
        ("default", 1920, 1080, 0.3),
        ("box", 800, 480, 0.3),
        ("flat-blue", 800, 480, 0.3),
        ("circles", 480, 272, 0.5),
        ("ring", 1920, 1080, 0.35),
    ])
    func theGalleryLooksAreTheShippedThemes(_ name: String, _ width: Int, _ height: Int, _ time: Double) throws {
        var theme = Theme()
        #expect(try ThemeFile.load(themes + "/\(name).theme", into: &theme, themes: themes).isEmpty)
        let display = try MemoryDisplay(width: width, height: height)
        let scene = Scene(theme: theme, width: width, height: height, assets: Assets(firmwareDirectory: "/nonexistent/bgrt"))
        var model = ScreenModel()
        switch name {
        case "box":
            model.setTarget(30)
            (model.message, model.title) = ("Copying files\u{2028}firmware.bin, 12 of 40 MB", "Updating firmware")
        case "flat-blue":
            model.setTarget(67)
            (model.message, model.title) = ("Configuring packages", "Installing Gauge OS")
        case "circles":
            (model.mode, model.message, model.title) = (.indeterminate, "Waiting for the network", "Starting Gauge OS")
        case "ring":
            (model.mode, model.message, model.title) = (.indeterminate, "Checking file systems", "Starting Gauge OS")
        default:
            model.setTarget(42)
            (model.message, model.title) = ("Unpacking base system", "Installing Gauge OS")
        }
        scene.render(model, at: time, into: display.framebuffer)
        let gallery = try PNG.read(repository + "/docs/gallery/\(name).png")
        let diff = difference(PNG.image(of: display.framebuffer), gallery, tolerance: 6)
        #expect(diff.count == 0, "\(name): \(diff.count) pixels differ from the gallery's, by up to \(diff.max), in \(diff.box)")
    }
}
