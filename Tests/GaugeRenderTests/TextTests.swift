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

    @Test("the written-out White_Space list is the standard library's, every scalar")
    func whiteSpaceIsUnicodes() {
        let differing = (UInt32(0)...0x10FFFF).compactMap(Unicode.Scalar.init).filter {
            TextRenderer.isWhiteSpace($0) != $0.properties.isWhitespace
        }
        #expect(differing.isEmpty, "\(differing.prefix(8).map { String($0.value, radix: 16) })")
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

@Suite("Messages of two lines")
struct TwoLineMessageTests {
    /// dialog's `\n` reaches the scene as U+2028: two centred lines below the bar.
    @Test("a line break shows the message on two centred lines")
    func plain() throws {
        let screen = try Screen(width: 800, height: 480)
        screen.render(model(42, message: "Unpacking the base system\u{2028}debootstrap, stage 2", title: "Installing"))
        let one = try Screen(width: 800, height: 480)
        one.render(model(42, message: "Unpacking the base system", title: "Installing"))
        let first = one.scene.messageRect
        let both = screen.scene.messageRect
        #expect(both.y == first.y, "the first line stays where a one-line message is")
        #expect(both.height > 2 * first.height && both.maxY <= 480)
        // Ink on two separate bands of rows: the lines do not touch.
        let image = screen.image
        let inked = (both.y..<both.maxY).map { y in
            (both.x..<both.maxX).contains { x in image.pixel(x: x, y: y).r > 60 }
        }
        let bands = zip(inked, [false] + inked).filter { $0 && !$1 }.count
        #expect(bands == 2)
        try expectGolden(image, "800x480-two-lines")
    }

    @Test("a third line and empty lines join or vanish; no break is one line as it is")
    func lines() {
        #expect(Scene.messageLines("a\u{2028}b\u{2028}c") == ["a", "b c"])
        #expect(Scene.messageLines("\u{2028}a\u{2028}\u{2028}b\u{2029}") == ["a", "b"])
        #expect(Scene.messageLines("  spaced  ") == ["  spaced  "])
        #expect(Scene.messageLines("\u{2028}") == [])
    }

    /// The layout keeps room for two lines: a screen too short for them at the theme's
    /// sizes draws everything smaller, and says so.
    @Test("a screen too short for two lines at the theme's sizes keeps both, smaller")
    func short() throws {
        let screen = try Screen(width: 320, height: 200)
        screen.render(model(42, message: "one\u{2028}two"))
        let joined = try Screen(width: 320, height: 200)
        joined.render(model(42, message: "one two"))
        #expect(screen.scene.messageRect.height > joined.scene.messageRect.height * 2 - 2)
        #expect(screen.scene.messageRect.maxY <= screen.scene.safeRect.maxY)
        #expect(screen.scene.layoutNotes.contains { $0.hasPrefix("drawn at scale") }, "\(screen.scene.layoutNotes)")
    }

    /// The box style's panel grows downwards by the second line, and back.
    @Test("the box grows to hold the second line and shrinks back")
    func box() throws {
        var theme = Theme()
        theme.style = .box
        theme.coverColor = Color.black.withAlpha(0.6)
        theme.background = Color(red: 0.2, green: 0.3, blue: 0.5)
        let screen = try Screen(width: 800, height: 480, theme: theme)
        let reference = try Screen(width: 800, height: 480, theme: theme)
        var m = model(30, message: "Copying files", title: "Updating firmware")
        screen.render(m, at: 0)
        reference.render(m, at: 0)
        let bar = screen.scene.barRect
        m.message = "Copying files\u{2028}firmware.bin, 12 of 40 MB"
        screen.render(m, at: 0)
        #expect(screen.scene.barRect == bar, "the bar stays put")
        let message = screen.scene.messageRect
        // The panel keeps its padding below the second line: where the one-line panel
        // ended and the cover showed, the panel's colour shows now.
        let below = (x: bar.x + 2, y: message.maxY + 20)
        #expect(screen.image.pixel(x: below.x, y: below.y) == screen.image.pixel(x: bar.x + 2, y: bar.maxY + 4))
        #expect(reference.image.pixel(x: below.x, y: below.y) == reference.image.pixel(x: 5, y: 5))
        try expectGolden(screen.image, "800x480-box-two-lines")
        m.message = "Copying files"
        screen.render(m, at: 0)
        #expect(difference(screen.image, reference.image, tolerance: 0).count == 0, "back to the one-line panel")
    }
}
