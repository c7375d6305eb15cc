import GaugeDisplay
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
