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
            // How far orange-ish pixels reach along the bar's middle row (the pole's
            // stripes alternate with the track's colour).
            let image = screen.image
            let last = (bar.x..<bar.maxX).last { x in
                let p = image.pixel(x: x, y: bar.y + bar.height / 2 + 3)
                return p.r > p.b + 60
            }
            return last.map { $0 - bar.x + 1 } ?? 0
        }
        let start = fillPixels()
        m.mode = .indeterminate
        var previous = start
        for t in stride(from: 1.0, through: 1.5, by: 0.05) {
            screen.render(m, at: t)
            let now = fillPixels()
            // The last stripe's edge moves with the stripes: within one stripe period.
            #expect(now >= previous - 28 && now - previous < bar.width / 3, "at \(t): \(previous) → \(now)")
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

@Suite("Unknown length")
struct UnknownLengthTests {
    /// Pixels of the bar's middle row near the track's colour and near the fill's.
    static func shares(_ screen: Screen, theme: Theme) -> (track: Double, fill: Double) {
        let bar = screen.scene.barRect
        let image = screen.image
        var track = 0, fill = 0
        let y = bar.y + bar.height / 2
        let columns = (bar.x + bar.height)..<(bar.maxX - bar.height)
        func near(_ p: (r: UInt8, g: UInt8, b: UInt8, a: UInt8), _ c: Color, _ tolerance: Int) -> Bool {
            abs(Int(p.r) - Int(c.red * 255)) <= tolerance && abs(Int(p.g) - Int(c.green * 255)) <= tolerance
                && abs(Int(p.b) - Int(c.blue * 255)) <= tolerance
        }
        for x in columns {
            let p = image.pixel(x: x, y: y)
            if near(p, theme.trackColor, 40) { track += 1 }
            if near(p, theme.fillColor, 60) { fill += 1 }
        }
        return (Double(track) / Double(columns.count), Double(fill) / Double(columns.count))
    }

    @Test("the barber pole never reads as a full bar: a third of it or more shows the track, in any frame",
          arguments: [ScreenStyle.plain, .box])
    func unfinished(style: ScreenStyle) throws {
        var theme = Theme()
        theme.style = style
        let screen = try Screen(width: 800, height: 480, theme: theme)
        var m = model(30, message: "Waiting for the network")
        m.mode = .indeterminate
        for t in stride(from: 10.0, to: 11.0, by: 0.13) {
            screen.render(m, at: t)
            let share = Self.shares(screen, theme: theme)
            #expect(share.track > 0.33 && share.fill > 0.2, "frame at \(t): \(share)")
            #expect(screen.scene.labelRect.isEmpty, "no label on work of unknown length")
        }
        // A finished bar shows no track at all.
        m.mode = .determinate
        m.setTarget(100)
        m.state = .success
        var finished = theme
        finished.fillColor = theme.successColor
        screen.render(m, at: 20)
        #expect(Self.shares(screen, theme: finished).track < 0.05)
        try expectGolden(screen.image, "800x480-\(style.rawValue)-finished")
        m.mode = .indeterminate
        m.state = .running
        screen.render(m, at: 30)
        // Nothing of the finished frame's label or badge is left above the bar.
        let bar = screen.scene.barRect
        let above = Rect(x: bar.x, y: bar.y - 40, width: bar.width, height: 36)
        let image = screen.image
        let empty = image.pixel(x: bar.x + 1, y: bar.y - 30)
        for y in above.y..<above.maxY {
            for x in above.x..<above.maxX where image.pixel(x: x, y: y) != empty {
                Issue.record("pixel (\(x), \(y)) above the bar is \(image.pixel(x: x, y: y)), not \(empty)")
                return
            }
        }
        try expectGolden(screen.image, "800x480-\(style.rawValue)-unknown-length")
    }
}
