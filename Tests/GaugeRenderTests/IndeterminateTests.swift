import GaugeDisplay
import GaugeRender
import Testing

@Suite("Indeterminate mode")
struct IndeterminateTests {
    private func indeterminate(_ message: String = "Waiting") -> ScreenModel {
        var m = model(30, message: message)
        m.mode = .indeterminate
        return m
    }

    @Test("barber pole: entering eases the fill to the full bar, leaving eases it back, no jump")
    func barberPole() throws {
        let screen = try Screen(width: 800, height: 480)
        var m = model(30)
        screen.render(m, at: 0)
        let bar = screen.scene.barRect
        func fillPixels() -> Int {
            // Orange-ish pixels along the bar's middle row.
            let image = screen.image
            return (bar.x..<bar.maxX).filter { x in
                let p = image.pixel(x: x, y: bar.y + bar.height / 2 + 3)
                return p.r > p.b + 60
            }.count
        }
        let start = fillPixels()
        m.mode = .indeterminate
        var previous = start
        for t in stride(from: 1.0, through: 1.5, by: 0.05) {
            screen.render(m, at: t)
            let now = fillPixels()
            #expect(now >= previous && now - previous < bar.width / 3, "at \(t): \(previous) → \(now)")
            previous = now
        }
        #expect(previous > bar.width * 95 / 100)
        #expect(screen.scene.labelRect.isEmpty)
        #expect(screen.scene.isAnimating(m, at: 2))
        m.mode = .determinate
        screen.render(m, at: 3)
        screen.render(m, at: 3.2)
        let midway = fillPixels()
        #expect(midway > start && midway < previous)
        screen.render(m, at: 4)
        #expect(abs(fillPixels() - start) <= 2)
    }

    @Test("circles and ring: two moments of each animation, and a fade in", arguments: [IndeterminateStyle.circles, .ring])
    func indicators(style: IndeterminateStyle) throws {
        var theme = Theme()
        theme.indeterminateStyle = style
        let screen = try Screen(width: 640, height: 360, theme: theme)
        var m = model(30, message: "Waiting for the network")
        screen.render(m, at: 0)
        m.mode = .indeterminate
        screen.render(m, at: 1.0 + theme.transitionDuration / 2)
        let halfway = screen.image
        #expect(screen.scene.isAnimating(m, at: 5))
        screen.render(m, at: 5.0)
        let first = screen.image
        try expectGolden(first, "640x360-\(style.rawValue)-a")
        screen.render(m, at: 5.0 + theme.indicatorPeriod / 3)
        let second = screen.image
        try expectGolden(second, "640x360-\(style.rawValue)-b")
        let moved = difference(first, second, tolerance: 8)
        #expect(moved.count > 20, "the indicator must move")
        let bar = screen.scene.barRect
        let box = Rect(x: bar.x + bar.width / 2 - 24, y: bar.y + bar.height / 2 - 24, width: 48, height: 48)
        #expect(box.union(moved.box) == box, "only the indicator changes: \(moved.box)")
        // Half-way through the fade both the bar and the indicator show, each partly.
        let fading = difference(halfway, first, tolerance: 8)
        #expect(fading.count > 50)
        // The track is gone once the indicator is in.
        let p = first.pixel(x: bar.x + 2, y: bar.y + bar.height / 2)
        #expect(p.r < 10 && p.g < 10 && p.b < 10)
    }

    @Test("indicator frames are cached: the same moment renders the same pixels")
    func cached() throws {
        var theme = Theme()
        theme.indeterminateStyle = .ring
        let a = try Screen(width: 640, height: 360, theme: theme)
        let b = try Screen(width: 640, height: 360, theme: theme)
        let m = indeterminate()
        for t in [0.0, 0.3, 0.61, 1.5, 1.81] { a.render(m, at: t) }
        b.render(m, at: 1.81)
        #expect(difference(a.image, b.image, tolerance: 0).count == 0)
    }
}
