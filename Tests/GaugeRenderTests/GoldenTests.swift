import Glibc
import GaugeDisplay
import GaugeProtocol
import GaugeRender
import Testing

@Suite("Golden frames")
struct GoldenTests {
    @Test("1920x1080 XRGB8888 at 0, 1, 42, 99.5 and 100 percent", arguments: [0.0, 1, 42, 99.5, 100])
    func fullHD(value: Double) throws {
        let screen = try Screen(width: 1920, height: 1080)
        screen.render(model(value, message: "Installing packages", title: "Gauge"))
        let name = "1080p-" + (value == 99.5 ? "99.5" : String(Int(value)))
        try expectGolden(screen.image, name)
    }

    @Test("800x480 RGB565 at 42 percent")
    func smallPanel() throws {
        let screen = try Screen(width: 800, height: 480, format: .rgb565)
        screen.render(model(42, message: "Updating firmware"))
        try expectGolden(screen.image, "800x480-rgb565-42")
    }

    @Test("1280x800 XRGB8888 with a padded stride at 42 percent")
    func paddedStride() throws {
        let stride = 1280 * 4 + 256
        let screen = try Screen(width: 1280, height: 800, stride: stride)
        // Padding bytes are never written.
        let padding = screen.display.base + 1280 * 4
        padding.initializeMemory(as: UInt8.self, repeating: 0xA5, count: 256)
        screen.render(model(42, message: "Installing packages"))
        for row in 0..<800 {
            let p = (screen.display.base + row * stride + 1280 * 4).assumingMemoryBound(to: UInt8.self)
            if row == 0 { #expect((0..<256).allSatisfy { p[$0] == 0xA5 }) }
        }
        try expectGolden(screen.image, "1280x800-padded-42")
    }
}

@Suite("States")
struct StateTests {
    @Test("success and failure: their own fill colour, a mark, the message kept, stripes still", arguments: [RunState.success, .failure])
    func finished(state: RunState) throws {
        let screen = try Screen(width: 800, height: 480)
        var m = model(state == .success ? 100 : 63, message: state == .success ? "Installed" : "Disk full")
        screen.render(m, at: 0)
        m.state = state
        let damage = screen.render(m, at: 0.1)
        #expect(damage.contains(x: screen.scene.barRect.x, y: screen.scene.barRect.y))
        #expect(!screen.scene.isAnimating(m, at: 0.2))
        #expect(screen.render(m, at: 0.7).isEmpty, "stripes must stand still once finished")
        let mark = screen.scene.markRect
        #expect(!mark.isEmpty && mark.x > screen.scene.barRect.maxX)
        let expected = Theme().fillColor(for: state)
        var markPixels = 0
        let image = screen.image
        for y in mark.y..<mark.maxY {
            for x in mark.x..<mark.maxX {
                let p = image.pixel(x: x, y: y)
                if abs(Int(p.r) - Int(expected.red * 255)) < 3, abs(Int(p.g) - Int(expected.green * 255)) < 3 { markPixels += 1 }
            }
        }
        #expect(markPixels > mark.area / 8, "the mark is drawn in the state colour")
        try expectGolden(image, "800x480-\(state.rawValue)")
        // Back to running: the mark goes away.
        m.state = .running
        screen.render(m, at: 1)
        #expect(screen.scene.markRect.isEmpty)
    }

    @Test("the bar and its mark together take the bar's place, so the row stays centred",
          arguments: [ScreenStyle.plain, .box], [LabelPosition.inside, .right])
    func markKeepsTheRowBalanced(style: ScreenStyle, position: LabelPosition) throws {
        var theme = Theme()
        theme.style = style
        theme.labelPosition = position
        let screen = try Screen(width: 800, height: 480, theme: theme)
        var m = model(100, message: "Installed")
        screen.render(m, at: 0)
        let place = screen.scene.barRect
        #expect(abs(place.x + place.maxX - 800) <= 1, "the running bar \(place) is centred")
        m.state = .success
        screen.render(m, at: 0.1)
        let bar = screen.scene.barRect, mark = screen.scene.markRect
        #expect(!mark.isEmpty && !mark.intersects(bar), "bar \(bar), mark \(mark)")
        let group = bar.union(mark)
        #expect(group.x == place.x && group.maxX == place.maxX, "bar \(bar) and mark \(mark) in the bar's place \(place)")
        // Between the shortened bar and the mark: the surface, none of the bar left over.
        let gapX = mark.x > bar.x ? bar.maxX + 1 : mark.maxX + 1
        let under = screen.image.pixel(x: gapX, y: bar.y + bar.height / 2)
        let surface = style == .box ? theme.boxColor.over(theme.coverColor.over(theme.background)) : theme.background
        #expect(abs(Int(under.r) - Int(surface.red * 255)) < 3 && abs(Int(under.g) - Int(surface.green * 255)) < 3,
                "at \(gapX): \(under)")
        m.state = .running
        screen.render(m, at: 1)
        #expect(screen.scene.barRect == place, "running again: the whole bar")
    }
}

@Suite("Label")
struct LabelTests {
    @Test("the label above, below, left or right of the bar, clear of the title and message",
          arguments: [LabelPosition.above, .below, .left, .right])
    func positions(position: LabelPosition) throws {
        var theme = Theme()
        theme.labelPosition = position
        theme.labelFormat = "Step {value} of {max}"
        let screen = try Screen(width: 800, height: 480, theme: theme)
        screen.render(model(30, message: "Copying files", title: "Updating"))
        let bar = screen.scene.barRect, label = screen.scene.labelRect
        #expect(!label.isEmpty && !label.intersects(bar))
        #expect(!label.intersects(screen.scene.titleRect) && !label.intersects(screen.scene.messageRect))
        switch position {
        case .above: #expect(label.maxY <= bar.y && label.maxX == bar.maxX)
        case .below: #expect(label.y >= bar.maxY && label.maxX == bar.maxX)
        case .left: #expect(label.maxX <= bar.x)
        case .right: #expect(label.x >= bar.maxX)
        case .inside: break
        }
        try expectGolden(screen.image, "800x480-label-\(position.rawValue)")
    }
}

@Suite("Logo and scale")
struct LogoTests {
    /// A 40x30 logo: opaque blue with a half-transparent red band at the bottom.
    static func writeLogo() throws -> String {
        var rgba: [UInt8] = []
        for y in 0..<30 {
            for _ in 0..<40 { rgba += y < 20 ? [0, 0, 255, 255] : [255, 0, 0, 128] }
        }
        let path = "/tmp/gauge-test-logo-\(getpid()).png"
        try PNG.write(PNG.Image(width: 40, height: 30, rgba: rgba), to: path)
        return path
    }

    @Test("a PNG logo is drawn centred above the bar, blended, and scaled with the screen", arguments: [1.0, 2.0])
    func logo(scale: Double) throws {
        var theme = Theme()
        theme.logo = try Self.writeLogo()
        let display = try MemoryDisplay(width: 1280, height: 800)
        let scene = Scene(theme: theme, width: 1280, height: 800, scale: scale)
        #expect(scene.logoProblem == nil)
        scene.render(model(50), at: 0, into: display.framebuffer)
        let s = Int(scale)
        let logo = scene.logoRect
        #expect(logo.width == 40 * s && logo.height == 30 * s)
        // At its place (0.4 of the height), or higher where the question's room needs it.
        let cy = logo.y + logo.height / 2
        #expect(scale == 2 ? cy <= 320 : cy == 320)
        let top = display.pixel(x: 640, y: cy - 15 * s + 2)
        #expect(top.b == 255 && top.r == 0)
        let band = display.pixel(x: 640, y: cy + 15 * s - 2)
        #expect(band.r > 120 && band.r < 136 && band.b == 0, "half-transparent red over black: \(band)")
        #expect(display.pixel(x: 640 - 20 * s - 2, y: cy) == (0, 0, 0))
        #expect(display.pixel(x: 640 - 20 * s + 2, y: cy).b == 255)
        if scale == 2 { #expect(scene.barRect.height == 48) }
    }

    @Test("a missing logo is reported, not fatal")
    func missing() throws {
        var theme = Theme()
        theme.logo = "/nonexistent/logo.png"
        let scene = Scene(theme: theme, width: 640, height: 360)
        #expect(scene.logoProblem?.contains("/nonexistent/logo.png") == true)
    }

    @Test("scale 2 doubles every measure of the look")
    func scale2() throws {
        let display = try MemoryDisplay(width: 2560, height: 1600)
        let scene = Scene(theme: Theme(), width: 2560, height: 1600, scale: 2)
        scene.render(model(42, message: "HiDPI panel", title: "Scale 2"), at: 0, into: display.framebuffer)
        #expect(scene.barRect.height == 48)
        #expect(scene.barRect.width == 1280)
        try expectGolden(PNG.image(of: display.framebuffer), "2560x1600-scale2-42")
    }
}

@Suite("Box style")
struct BoxTests {
    @Test("a centred panel with the title, the bar, a badge riding the head, and a dimming cover")
    func box() throws {
        var theme = Theme()
        theme.style = .box
        theme.coverColor = Color.black.withAlpha(0.6)
        theme.background = Color(red: 0.2, green: 0.3, blue: 0.5)
        let screen = try Screen(width: 800, height: 480, theme: theme)
        var m = model(30, message: "Copying files", title: "Updating firmware")
        screen.render(m, at: 0)
        let bar = screen.scene.barRect
        // Centred on screen, the title above and the message below inside the panel.
        #expect(abs((bar.y + bar.height / 2) - 240) < 40)
        #expect(screen.scene.titleRect.maxY < bar.y && screen.scene.messageRect.y > bar.maxY)
        // The badge sits above the bar, centred on the fill's head.
        let head = bar.x + bar.width * 30 / 100
        let badge1 = screen.scene.labelRect
        #expect(badge1.maxY < bar.y && abs(badge1.x + badge1.width / 2 - head) <= 2)
        try expectGolden(screen.image, "800x480-box-30")
        // The cover dims the background: 0.4 of (51, 76, 128).
        let corner = screen.image.pixel(x: 5, y: 5)
        #expect(abs(Int(corner.b) - 51) <= 2 && abs(Int(corner.r) - 20) <= 2)
        // The badge rides along with the head.
        m.setTarget(80)
        screen.render(m, at: 1)
        let badge2 = screen.scene.labelRect
        #expect(badge2.x > badge1.x + bar.width / 3)
    }
}

@Suite("Motion")
struct MotionTests {
    @Test("a new value eases in and the label counts through the values between")
    func easing() throws {
        var theme = Theme()
        theme.animate = false
        let screen = try Screen(width: 640, height: 360, theme: theme)
        var m = model(10, message: "Easing")
        screen.render(m, at: 0)
        m.setTarget(80, at: 1, duration: 0.4, easing: .easeInOut)
        var labels: [Rect] = []
        for (i, t) in [1.1, 1.3].enumerated() {
            screen.render(m, at: t)
            labels.append(screen.scene.labelRect)
            try expectGolden(screen.image, "640x360-easing-\(i)")
        }
        // Ease-in-out: slow start, so at a quarter of the time less than a quarter of the way.
        let quarter = m.shown(at: 1.1)
        #expect(quarter > 10 && quarter < 10 + 70 * 0.25)
        #expect(labels[1].x > labels[0].x)
        screen.render(m, at: 2)
        #expect(m.isSettled(at: 2) && m.shown(at: 2) == 80)
    }
}

@Suite("Begin state")
struct BeginTests {
    @Test("before anything is reported the bar has the begin colour; the first value makes it running")
    func begin() throws {
        var theme = Theme()
        theme.flat = true
        theme.animate = false
        let screen = try Screen(width: 640, height: 360, theme: theme)
        var m = ScreenModel()
        #expect(m.state == .begin)
        m.mode = .indeterminate
        screen.render(m, at: 0)
        let bar = screen.scene.barRect
        // Work of unknown length: stripes of the begin colour over the track's.
        let image = screen.image
        let begin = theme.beginColor
        let row = (bar.x..<bar.maxX).map { image.pixel(x: $0, y: bar.y + bar.height / 2) }
        let mid = try #require(row.first { abs(Int($0.r) - Int(begin.red * 255)) < 20 && abs(Int($0.b) - Int(begin.blue * 255)) < 20 })
        m.mode = .determinate
        m.setTarget(100)
        #expect(m.state == .running)
        screen.render(m, at: 5)
        let running = screen.image.pixel(x: bar.x + bar.width / 2, y: bar.y + bar.height / 2)
        #expect(abs(Int(running.b) - Int(theme.fillColor.blue * 255)) < 60 && running != mid)
    }
}
