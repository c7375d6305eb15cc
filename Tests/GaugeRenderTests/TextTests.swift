import GaugeDisplay
import GaugeRender
import Testing

@Suite("Text")
struct TextTests {
    let text = TextRenderer(theme: Theme())

    private func ink(_ image: TextImage) -> Int {
        guard image.width > 0 else { return 0 }
        // Render it white on black through a scene-independent path: count covered pixels.
        return image.inkPixels
    }

    @Test("accented Latin renders with the main font, nothing missing")
    func accented() {
        let image = text.render("Größe, façade, naïve, Ångström", size: 16)
        #expect(image.missingGlyphs == 0)
        #expect(image.width > 150)
        #expect(ink(image) > 200)
    }

    @Test("CJK falls back to a CJK font per glyph")
    func cjk() {
        let image = text.render("安装系统 インストール 설치", size: 16)
        #expect(image.missingGlyphs == 0, "a CJK font from tools/install-deps is expected")
        #expect(ink(image) > 200)
    }

    @Test("a character no font has becomes a replacement box, no crash")
    func missingGlyph() {
        let image = text.render("A\u{10FFFD}B", size: 16)
        #expect(image.missingGlyphs == 1)
        let plain = text.render("AB", size: 16)
        #expect(image.width > plain.width)
        #expect(ink(image) > ink(plain))
    }

    @Test("a message far too long is cut with an ellipsis and stays on screen")
    func ellipsis() throws {
        let screen = try Screen(width: 640, height: 360)
        let long = String(repeating: "Unpacking linux-firmware-nonfree ", count: 40)
        screen.render(model(10, message: long))
        let r = screen.scene.messageRect
        #expect(r.x >= 0 && r.maxX <= 640 && r.width > 300)
        let image = text.render(long, size: 16, maxWidth: 600)
        #expect(image.truncated)
        #expect(image.width <= 600)
        #expect(!text.render("short", size: 16, maxWidth: 600).truncated)
    }

    @Test("a golden frame with accented, CJK and missing characters")
    func golden() throws {
        let screen = try Screen(width: 800, height: 480)
        screen.render(model(64, message: "Größe façade · 正在安装 · \u{10FFFD}", title: "Ünïcode"))
        try expectGolden(screen.image, "800x480-text")
    }

    @Test("with no font file at all the built-in digits still draw the label")
    func builtin() throws {
        var theme = Theme()
        theme.font = "/nonexistent/font.ttf"
        theme.boldFont = "/nonexistent/bold.ttf"
        theme.fallbackFonts = []
        let renderer = TextRenderer(theme: theme)
        #expect(renderer.usesBuiltinFont)
        #expect(renderer.unavailableFonts.contains("/nonexistent/font.ttf"))
        let label = renderer.render("99.5%", size: 16)
        #expect(label.missingGlyphs == 0)
        #expect(label.inkPixels > 40)
        let screen = try Screen(width: 800, height: 480, theme: theme)
        screen.render(model(42))
        try expectGolden(screen.image, "800x480-builtin-font")
    }
}
