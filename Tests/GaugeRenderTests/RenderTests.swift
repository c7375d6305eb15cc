import GaugeDisplay
import GaugeRender
import Testing

@Suite("Rendering")
struct RenderTests {
    @Test("the same state in all seven formats decodes to the same picture within each format's precision")
    func formats() throws {
        let reference = try Screen(width: 640, height: 360)
        reference.render(model(42, message: "Ünïcödé ok", title: "Formats"))
        for format in PixelFormat.allCases {
            let screen = try Screen(width: 640, height: 360, format: format)
            screen.render(model(42, message: "Ünïcödé ok", title: "Formats"))
            // One step of the coarsest channel, twice (the value and one blend on top of it).
            let step = 256 >> format.minimumChannelBits
            let tolerance = format.minimumChannelBits == 8 ? 1 : 2 * step + 1
            let diff = difference(screen.image, reference.image, tolerance: tolerance)
            #expect(diff.count == 0, "\(format): \(diff.count) pixels off by more than \(tolerance), max \(diff.max)")
        }
    }

    @Test("a buffer on screen gets the same bits as one off screen, frame after frame",
          arguments: [(PixelFormat.xrgb8888, false), (.rgb565, false), (.xrgb8888, true)])
    func onScreenBufferGetsTheSameBits(format: PixelFormat, boxed: Bool) throws {
        // On a display with one buffer the frame is composed off screen and copied once (a
        // buffer on screen must never show a layer half drawn): the bar by its layers, the
        // rest (the first whole frame, changed text) a band of rows at a time. It must
        // not look different.
        var theme = Theme()
        if boxed { theme.style = .box }
        let offScreen = try Screen(width: 800, height: 480, format: format, theme: theme)
        let onScreen = try Screen(width: 800, height: 480, format: format, theme: theme)
        let shown = onScreen.display.framebuffer
        let target = Framebuffer(
            base: shown.base, width: shown.width, height: shown.height, stride: shown.stride, format: shown.format,
            isOnScreen: true)
        var time = 0.0
        for (step, value) in [0.0, 3, 42, 42, 42, 77.5, 100].enumerated() {
            for _ in 0..<3 {
                time += 0.037
                let m = model(value, message: "Unpacking \(step % 3 == 0 ? "packages" : "files")", title: step < 4 ? "Installing" : "Finishing")
                let expected = offScreen.render(m, at: time)
                #expect(onScreen.scene.render(m, at: time, into: target) == expected)
                #expect(difference(onScreen.image, offScreen.image, tolerance: 0).count == 0, "\(value)% at \(time) s")
            }
        }
    }

    @Test("stripes at t and t + half a period differ inside the fill and nowhere else")
    func stripesMove() throws {
        let theme = Theme()
        let a = try Screen(width: 800, height: 480, theme: theme)
        let b = try Screen(width: 800, height: 480, theme: theme)
        let m = model(60, message: "Moving")
        a.render(m, at: 1.0)
        b.render(m, at: 1.0 + theme.stripeDuration / 2)
        let fill = a.scene.barRect
        let fillRect = Rect(x: fill.x, y: fill.y, width: fill.width * 60 / 100, height: fill.height)
        let diff = difference(a.image, b.image, tolerance: 0)
        #expect(diff.count > fillRect.area / 10, "stripes did not move: \(diff.count) pixels changed")
        #expect(fillRect.union(diff.box) == fillRect, "changes outside the fill: \(diff.box) vs \(fillRect)")
    }

    @Test("the fill at 0% draws nothing")
    func emptyFill() throws {
        var blue = Theme()
        blue.fillColor = Color(red: 0, green: 0, blue: 1)
        let orange = try Screen(width: 800, height: 480)
        let other = try Screen(width: 800, height: 480, theme: blue)
        orange.render(model(0), at: 0.3)
        other.render(model(0), at: 0.3)
        #expect(difference(orange.image, other.image, tolerance: 0).count == 0)
        // ...while at 5% the fill colour shows.
        orange.render(model(5), at: 0.3)
        other.render(model(5), at: 0.3)
        #expect(difference(orange.image, other.image, tolerance: 0).count > 50)
    }

    /// Mean luma change inside the label's rectangle caused by drawing the label.
    private func labelLumaShift(fill: Color) throws -> Double {
        var with = Theme()
        with.fillColor = fill
        var without = with
        without.showLabel = false
        let a = try Screen(width: 800, height: 480, theme: with)
        let b = try Screen(width: 800, height: 480, theme: without)
        a.render(model(50))
        b.render(model(50))
        let r = a.scene.labelRect
        #expect(!r.isEmpty)
        #expect(a.scene.barRect.union(r) == a.scene.barRect, "label outside the bar")
        let ia = a.image, ib = b.image
        var total = 0.0
        for y in r.y..<r.maxY {
            for x in r.x..<r.maxX {
                let p = ia.pixel(x: x, y: y), q = ib.pixel(x: x, y: y)
                total += 0.299 * (Double(p.r) - Double(q.r)) + 0.587 * (Double(p.g) - Double(q.g)) + 0.114 * (Double(p.b) - Double(q.b))
            }
        }
        return total / Double(r.area)
    }

    @Test("the label is black on a light fill colour and white on a dark one")
    func labelContrast() throws {
        #expect(try labelLumaShift(fill: Color(red: 0.87, green: 0.55, blue: 0.09)) < -5)
        #expect(try labelLumaShift(fill: Color(red: 0.1, green: 0.1, blue: 0.4)) > 5)
    }

    @Test("the label sits right-aligned inside the fill with a 6 px inset")
    func labelPlacement() throws {
        let screen = try Screen(width: 1920, height: 1080)
        screen.render(model(42))
        let bar = screen.scene.barRect
        let fillRight = bar.x + Int((Double(bar.width) * 0.42).rounded())
        #expect(screen.scene.labelRect.maxX == fillRight - 6)
        // 1%: too short to hold it, so it sits just past the head.
        screen.render(model(1))
        let head = bar.x + Int((Double(bar.width) * 0.01).rounded())
        #expect(screen.scene.labelRect.x == head + 6)
    }

    @Test("a damaged-region render gives the same pixels as a full render of the same state")
    func damageMatchesFull() throws {
        let incremental = try Screen(width: 640, height: 360)
        var m = model(0, message: "Starting", title: "Boot")
        var t = 0.0
        let steps: [(Double, String)] = [(5, "Starting"), (5, "Starting"), (37.5, "Loading drivers"), (37.5, "Loading drivers"),
                                          (36, "Loading drivers"), (80, "Mounting /usr"), (80, ""), (100, "Done"), (2, "Again")]
        for (value, message) in steps {
            for _ in 0..<4 {
                t += 0.037
                if m.target != value { m.setTarget(value, at: t, duration: 0.1, easing: .easeInOut) }
                m.message = message
                let damage = incremental.render(m, at: t)
                if damage.isEmpty { continue }
                let full = try Screen(width: 640, height: 360)
                full.render(m, at: t)
                let diff = difference(incremental.image, full.image, tolerance: 0)
                #expect(diff.count == 0, "at t=\(t) value \(m.shown(at: t)): \(diff.count) pixels differ in \(diff.box)")
            }
        }
    }

    @Test("a frame with nothing changed reports no damage; a moving frame only the fill")
    func damageRects() throws {
        var still = Theme()
        still.animate = false
        let screen = try Screen(width: 800, height: 480, theme: still)
        let m = model(50, message: "Hello")
        #expect(screen.render(m, at: 0) == Rect(x: 0, y: 0, width: 800, height: 480))
        #expect(screen.render(m, at: 0.5).isEmpty)
        #expect(!screen.scene.isAnimating(m, at: 0.5))

        let moving = try Screen(width: 800, height: 480)
        moving.render(m, at: 0)
        let damage = moving.render(m, at: 0.1)
        let bar = moving.scene.barRect
        #expect(damage == Rect(x: bar.x, y: bar.y, width: bar.width / 2, height: bar.height))
        #expect(moving.scene.isAnimating(m, at: 0.1))
    }
}

@Suite("Small screens")
struct SmallScreenTests {
    @Test("on a short screen the bar moves up so the message stays on screen", arguments: [(320, 200), (300, 192), (640, 360)])
    func messageFits(size: (Int, Int)) throws {
        let screen = try Screen(width: size.0, height: size.1)
        screen.render(model(50, message: "Installing packages", title: "Setup"))
        let message = screen.scene.messageRect
        #expect(!message.isEmpty && message.maxY <= size.1, "\(message) on \(size)")
        #expect(screen.scene.titleRect.y >= 0)
    }
}

@Suite("Settled label")
struct SettledLabelTests {
    @Test("the frame drawn when a value settles shows exactly that value, even when the fill did not grow a pixel")
    func settledLabelMatchesValue() throws {
        let theme = Theme()
        let easing = try Screen(width: 1280, height: 800, theme: theme)
        var m = ScreenModel()
        m.setTarget(0)
        easing.render(m, at: 0)
        m.setTarget(40, at: 1, duration: theme.transitionDuration, easing: .easeInOut)
        // Just before the end the bar shows 39.99...: the same fill width as 40, label "39%".
        let end = 1 + theme.transitionDuration
        easing.render(m, at: end - 0.0005)
        #expect(m.shown(at: end - 0.0005) < 40)
        easing.render(m, at: end + 0.1)
        let fresh = try Screen(width: 1280, height: 800, theme: theme)
        fresh.render(model(40), at: end + 0.1)
        let diff = difference(easing.image, fresh.image, tolerance: 0)
        #expect(diff.count == 0, "\(diff.count) pixels differ from a fresh 40% frame in \(diff.box)")
    }
}

@Suite("Frame steps")
struct StripeStepTests {
    @Test("while only the stripes move, the picture changes just after each step the scene names, and not between")
    func picturesChangeAtTheStepsAlone() {
        let scene = Scene(theme: Theme(), width: 1280, height: 800)
        var m = ScreenModel()
        m.setTarget(40)
        // Between two steps (at a step itself, rounding decides which side a time is on).
        // A default theme's stripes step 35 times a second at scale 1.
        expectChangesAtTheStepsAlone(scene, m, from: 100.3, steps: 40, perSecond: 35)
    }

    /// From `start`, `steps` times: the scene names its next step within a period, the
    /// picture is the same just before it and changes just after; the time after the last.
    @discardableResult
    private func expectChangesAtTheStepsAlone(_ scene: Scene, _ m: ScreenModel, from start: Double, steps count: Int,
                                              perSecond: Double) -> Double {
        var time = start
        scene.update(m, at: time)
        for _ in 0..<count {
            guard let steps = scene.frameSteps(m, at: time) else {
                Issue.record("no frame steps at \(time)")
                return time
            }
            #expect(steps.next > time && steps.next - time <= steps.period + 1e-9)
            #expect(abs(1 / steps.period - perSecond) < 1)
            #expect(scene.update(m, at: steps.next - steps.period / 50).isEmpty, "a change before the step at \(steps.next)")
            time = steps.next + steps.period / 50
            #expect(!scene.update(m, at: time).isEmpty, "no change after the step at \(steps.next)")
        }
        return time
    }

    @Test("no frame steps while the value eases, while an indicator fades, or with the stripes still")
    func noStepsWhileAnythingElseMoves() {
        let theme = Theme()
        let scene = Scene(theme: theme, width: 1280, height: 800)
        var m = ScreenModel()
        m.setTarget(0)
        scene.update(m, at: 0)
        m.setTarget(40, at: 1, duration: theme.transitionDuration, easing: .easeInOut)
        #expect(scene.frameSteps(m, at: 1.01) == nil)
        #expect(scene.frameSteps(m, at: 1 + theme.transitionDuration + 1) != nil)
        var still = theme
        still.animate = false
        let stillScene = Scene(theme: still, width: 1280, height: 800)
        stillScene.update(m, at: 100)
        #expect(stillScene.frameSteps(m, at: 100) == nil)
        var ring = theme
        ring.indeterminateStyle = .ring
        let ringScene = Scene(theme: ring, width: 1280, height: 800)
        m.mode = .indeterminate
        ringScene.update(m, at: 100)
        // Fading out to the bar: the fade moves every frame.
        m.mode = .determinate
        ringScene.update(m, at: 101)
        #expect(ringScene.frameSteps(m, at: 101.01) == nil)
    }

    @Test("a circles or ring indicator alone: the picture changes just after each of its frames, and not between", arguments: [IndeterminateStyle.circles, .ring])
    func indicatorPicturesChangeAtTheStepsAlone(style: IndeterminateStyle) {
        var theme = Theme()
        theme.indeterminateStyle = style
        let scene = Scene(theme: theme, width: 1280, height: 800)
        var m = ScreenModel()
        m.mode = .indeterminate
        // Between two frames (they change every 20 ms: 50 frames a second, whatever the period).
        let time = expectChangesAtTheStepsAlone(scene, m, from: 100.31, steps: 80, perSecond: 50)
        m.state = .failure
        scene.update(m, at: time)
        #expect(scene.frameSteps(m, at: time + 1) == nil)
    }
}
