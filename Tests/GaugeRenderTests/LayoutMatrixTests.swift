import Glibc
import GaugeDisplay
@testable import GaugeRender
import Testing

/// Every screen a splash meets, every state, every element at once: nothing overlaps,
/// nothing is cut by the screen's edge, and the pixels agree with the rectangles the
/// scene reports.
@Suite("Layout matrix")
struct LayoutMatrixTests {
    static let sizes = [(240, 320), (320, 240), (480, 272), (480, 320), (640, 480), (800, 480), (1024, 600), (1280, 800), (1920, 1080), (3840, 2160), (1080, 1920)]

    /// A 160x100 logo (opaque, so every pixel of its rectangle shows it).
    static let logoPath: String = {
        var rgba: [UInt8] = []
        for y in 0..<100 {
            for x in 0..<160 { rgba += [UInt8(60 + x), UInt8(40 + y), 200, 255] }
        }
        let path = "/tmp/gauge-matrix-logo-\(getpid()).png"
        try! PNG.write(PNG.Image(width: 160, height: 100, rgba: rgba), to: path)
        return path
    }()

    struct Case: CustomTestStringConvertible, Sendable {
        var width: Int, height: Int, scale: Double, style: ScreenStyle, logo: Bool
        var testDescription: String { "\(width)x\(height)@\(scale.shortText) \(style.rawValue)\(logo ? " logo" : "")" }
    }

    static let cases: [Case] = sizes.flatMap { size in
        [1.0, 2.0].flatMap { scale in
            [ScreenStyle.plain, .box].flatMap { style in
                [false, true].map { Case(width: size.0, height: size.1, scale: scale, style: style, logo: $0) }
            }
        }
    }

    /// The model with everything on screen: a title, a message of two lines, a question
    /// with Caps Lock on.
    static func fullModel(_ value: Double) -> ScreenModel {
        var m = ScreenModel()
        m.setTarget(value)
        m.title = "Installing Gauge OS"
        m.message = "Unpacking base system\u{2028}Configuring packages"
        m.entry = ScreenModel.Entry(prompt: "Passphrase for /dev/sda2:", field: .hidden(count: 12), capsLock: true)
        return m
    }

    @Test("nothing overlaps or is cut off, in every state and with each indicator", arguments: cases)
    func matrix(_ c: Case) throws {
        for indicator in IndeterminateStyle.allCases {
            var theme = Theme()
            theme.style = c.style
            theme.indeterminateStyle = indicator
            if c.logo { theme.logo = Self.logoPath }
            let display = try MemoryDisplay(width: c.width, height: c.height)
            let scene = Scene(theme: theme, width: c.width, height: c.height, scale: c.scale)
            #expect(scene.logoProblem == nil)
            var frames: [(String, ScreenModel)] = []
            var begin = ScreenModel()
            begin.title = "Starting"
            begin.message = "Waiting for devices\u{2028}Please wait"
            frames.append(("begin", begin))
            frames.append(("running", Self.fullModel(42)))
            var unknown = Self.fullModel(42)
            unknown.mode = .indeterminate
            frames.append(("indeterminate", unknown))
            var done = Self.fullModel(100)
            done.state = .success
            frames.append(("success", done))
            var failed = Self.fullModel(63)
            failed.state = .failure
            frames.append(("failure", failed))
            // Shaped text, right to left and in Indic and Thai scripts, a long line of it cut.
            var scripts = Self.fullModel(42)
            scripts.title = "جارٍ تثبيت النظام"
            scripts.message = "מתקין linux-image 6.12 (3 מתוך 12) \u{5D5}\u{5E2}\u{5D5}\u{5D3} \u{5D7}\u{5D1}\u{5D9}\u{5DC}\u{5D5}\u{5EA} \u{5E8}\u{5D1}\u{5D5}\u{5EA}\u{2028}सिस्टम इंस्टॉल हो रहा है · กำลังติดตั้งระบบ"
            frames.append(("scripts", scripts))
            // The failure screen, with the question (both fit or the box gives way) and
            // without (the box shows).
            var failureScreen = failed
            failureScreen.failure = FailureScreenTests.report(lines: 300, longLine: true)
            frames.append(("failure screen asking", failureScreen))
            failureScreen.entry = nil
            frames.append(("failure screen", failureScreen))
            var time = 0.0
            // The other indicators differ from the barber pole in the indeterminate frame alone.
            for (name, m) in frames where indicator == .barberPole || name == "indeterminate" {
                // Past every transition: the frame as it stays.
                time += 10
                scene.render(m, at: time, into: display.framebuffer)
                try check(scene, display, theme: theme, model: m, "\(c.testDescription) \(indicator.rawValue) \(name)")
            }
        }
    }

    func check(_ scene: Scene, _ display: MemoryDisplay, theme: Theme, model: ScreenModel, _ what: String) throws {
        let screen = Rect(x: 0, y: 0, width: scene.width, height: scene.height)
        let safe = scene.safeRect
        let indicatorShown = !scene.indicatorRect.isEmpty
        var elements: [(String, Rect)] = [
            ("title", scene.titleRect), ("message", scene.messageRect), ("question", scene.entryRect),
            ("mark", scene.markRect), ("logo", scene.logoRect),
            (indicatorShown ? "indicator" : "bar", indicatorShown ? scene.indicatorRect : scene.barRect),
            ("failure screen", scene.failureRect), ("failure screen's QR code", scene.failureCodeRect),
        ]
        if theme.style == .box {
            elements.append(("badge", scene.badgeRect))
        } else if theme.labelPosition != .inside {
            elements.append(("label", scene.labelRect))
        }
        // Everything the model holds is on screen.
        // The failure screen may take the title's room (`FailureLayer`).
        #expect(!scene.titleRect.isEmpty || model.failure != nil, "\(what): title shown")
        #expect(!scene.messageRect.isEmpty, "\(what): message shown")
        if !scene.titleRect.isEmpty { #expect(scene.messageRect.height > scene.titleRect.height, "\(what): two message lines") }
        if model.entry != nil { #expect(!scene.entryRect.isEmpty, "\(what): question shown") }
        if model.failure != nil, model.entry == nil { #expect(!scene.failureRect.isEmpty, "\(what): failure screen shown") }
        if model.state == .success || model.state == .failure { #expect(!scene.markRect.isEmpty, "\(what): mark shown") }
        if model.mode == .determinate, model.state != .begin { #expect(!scene.labelRect.isEmpty, "\(what): label shown") }
        if !theme.logo.isEmpty, model.failure == nil, model.entry == nil || scene.width * scene.height >= 800 * 480 {
            // Dropped, said once at layout; hidden for a question, said when one shows (and only then).
            let dropped = scene.layoutNotes.contains { $0.hasPrefix("logo dropped") }
            let hidden = model.entry != nil && scene.questionNote != nil
            #expect(scene.logoRect.isEmpty == (dropped || hidden), "\(what): logo shown or its absence logged")
        }
        // Inside the screen's margin, and apart from each other.
        for (name, rect) in elements where !rect.isEmpty {
            #expect(rect.intersection(safe) == rect, "\(what): \(name) \(rect) leaves the safe area \(safe)")
        }
        for i in elements.indices {
            for j in elements.indices where j > i {
                let (a, ra) = elements[i], (b, rb) = elements[j]
                #expect(!ra.intersects(rb), "\(what): \(a) \(ra) overlaps \(b) \(rb)")
            }
        }
        if theme.style == .box {
            let panel = scene.panelRect
            for (name, rect) in [("title", scene.titleRect), ("message", scene.messageRect), ("bar", scene.barRect), ("badge", scene.badgeRect)]
            where !rect.isEmpty {
                #expect(rect.intersection(panel) == rect, "\(what): \(name) \(rect) outside the panel \(panel)")
            }
            for (name, rect) in [("logo", scene.logoRect), ("question", scene.entryRect)] where !rect.isEmpty {
                #expect(!rect.intersects(panel), "\(what): \(name) \(rect) over the panel \(panel)")
            }
        }
        // The pixels: outside the elements (and the panel) only the background; inside
        // each element, something drawn.
        let base = display.framebuffer.base
        let stride = display.framebuffer.stride
        let background = pixel(theme.background)
        var allowed = elements.map { $0.1 }.filter { !$0.isEmpty }
        if theme.style == .box { allowed.append(scene.panelRect) }
        if theme.labelPosition == .inside || theme.style == .box { allowed.append(scene.labelRect) }
        var stray = 0
        var strayBox = Rect.zero
        for y in 0..<screen.height {
            let row = (base + y * stride).assumingMemoryBound(to: UInt32.self)
            // The row's gaps between the elements' spans, each scanned whole.
            let spans = allowed.filter { y >= $0.y && y < $0.maxY }.sorted { $0.x < $1.x }
            var x = 0
            for span in spans + [Rect(x: screen.width, y: y, width: 0, height: 1)] {
                for px in x..<max(x, min(span.x, screen.width)) where row[px] & 0xFFFFFF != background {
                    stray += 1
                    strayBox = strayBox.union(Rect(x: px, y: y, width: 1, height: 1))
                }
                x = max(x, span.maxX)
            }
        }
        #expect(stray == 0, "\(what): \(stray) pixels drawn outside every element, within \(strayBox)")
        for (name, rect) in elements where !rect.isEmpty {
            var inked = false
            for y in rect.y..<rect.maxY where !inked {
                let row = (base + y * stride).assumingMemoryBound(to: UInt32.self)
                for x in rect.x..<rect.maxX where row[x] & 0xFFFFFF != background {
                    inked = true
                    break
                }
            }
            #expect(inked, "\(what): \(name) \(rect) reported but not drawn")
        }
    }

    func pixel(_ c: Color) -> UInt32 {
        func byte(_ v: Double) -> UInt32 { UInt32((min(max(v, 0), 1) * 255).rounded()) }
        return byte(c.red) << 16 | byte(c.green) << 8 | byte(c.blue)
    }

    @Test("the small panels, everything on screen", arguments: [(240, 320), (320, 240), (480, 272), (800, 480)], [ScreenStyle.plain, .box])
    func smallPanelGoldens(size: (Int, Int), style: ScreenStyle) throws {
        var theme = Theme()
        theme.style = style
        theme.logo = Self.logoPath
        let display = try MemoryDisplay(width: size.0, height: size.1)
        let scene = Scene(theme: theme, width: size.0, height: size.1)
        var m = Self.fullModel(42)
        m.entry = nil
        scene.render(m, at: 10, into: display.framebuffer)
        try expectGolden(PNG.image(of: display.framebuffer), "layout-\(size.0)x\(size.1)-\(style.rawValue)")
        m.entry = Self.fullModel(42).entry
        scene.render(m, at: 11, into: display.framebuffer)
        try expectGolden(PNG.image(of: display.framebuffer), "layout-\(size.0)x\(size.1)-\(style.rawValue)-question")
    }

    /// Panels from 2.4" to 7", both ways up.
    static let panelSizes = [(240, 320), (320, 240), (400, 240), (480, 272), (272, 480), (480, 320), (640, 480), (800, 480)]

    @Test("small panels, a logo, a long title and message: nothing cut or dropped while over 15% of the width is unused",
          arguments: panelSizes, [ScreenStyle.plain, .box])
    func noRoomLeftUnused(size: (Int, Int), style: ScreenStyle) throws {
        var theme = Theme()
        theme.style = style
        theme.logo = Self.logoPath
        let display = try MemoryDisplay(width: size.0, height: size.1)
        let scene = Scene(theme: theme, width: size.0, height: size.1)
        var m = ScreenModel()
        m.setTarget(42)
        m.title = "Installing system updates"
        m.message = "Unpacking the base system\u{2028}Configuring packages and services"
        scene.render(m, at: 10, into: display.framebuffer)
        let what = "\(size.0)x\(size.1) \(style.rawValue)"
        try check(scene, display, theme: theme, model: m, what)
        // The logo shrinks rather than goes.
        #expect(!scene.logoRect.isEmpty, "\(what): logo shown \(scene.layoutNotes)")
        // The widest thing on screen: the box's panel, or the text (the plain style's text room is the safe area's).
        let used = style == .box ? scene.panelRect.width : max(scene.titleRect.width, scene.messageRect.width, scene.barRect.width)
        let unused = Double(size.0 - used) / Double(size.0)
        for (name, cut) in [("title", scene.titleCut), ("message", scene.messageCut)] where cut {
            #expect(unused <= 0.15, "\(what): \(name) cut with \(Int(unused * 100))% of the width unused")
        }
        #expect(!scene.layoutNotes.contains { $0.contains("dropped") }, "\(what): \(scene.layoutNotes)")
        if style == .box {
            // The box holds its text whole, and is no wider than it needs to be for it.
            let text = max(scene.titleRect.width, scene.messageRect.width)
            #expect(scene.panelRect.width >= text || scene.panelRect.width == scene.safeRect.width, "\(what): \(scene.panelRect)")
        }
        // The pixels: the logo is the picture made small (its middle in the middle), and a
        // title not cut is inked (white, the title's colour) from its first column to its last.
        let logo = scene.logoRect
        let p = display.pixel(x: logo.x + logo.width / 2, y: logo.y + logo.height / 2)
        #expect(abs(Int(p.r) - 140) <= 3 && abs(Int(p.g) - 90) <= 3 && p.b == 200, "\(what): \(p) in the middle of the logo \(logo)")
        if !scene.titleCut {
            let title = scene.titleRect
            let inked = (title.x..<title.maxX).filter { x in
                (title.y..<title.maxY).contains { y in
                    let q = display.pixel(x: x, y: y)
                    return q.r > 200 && q.g > 200 && q.b > 200
                }
            }
            #expect(inked.first.map { $0 - title.x <= 3 } == true && inked.last.map { title.maxX - $0 <= 4 } == true,
                    "\(what): the title's ink spans \(inked.first ?? -1)...\(inked.last ?? -1) of \(title)")
        }
    }

    @Test("a 4000-pixel logo on 320x240: the bar and its label still fit, and the log says what gave way")
    func hugeLogo() throws {
        var rgba = [UInt8](repeating: 255, count: 4000 * 500 * 4)
        for i in stride(from: 0, to: rgba.count, by: 4) { rgba[i] = 30 }
        let path = "/tmp/gauge-matrix-huge-logo-\(getpid()).png"
        try PNG.write(PNG.Image(width: 4000, height: 500, rgba: rgba), to: path)
        defer { unlink(path) }
        var theme = Theme()
        theme.logo = path
        let display = try MemoryDisplay(width: 320, height: 240)
        let scene = Scene(theme: theme, width: 320, height: 240)
        var m = Self.fullModel(42)
        m.entry = nil
        scene.render(m, at: 10, into: display.framebuffer)
        let logo = scene.logoRect
        #expect(!logo.isEmpty && logo.width <= scene.safeRect.width)
        #expect(scene.layoutNotes.contains { $0.hasPrefix("logo shrunk from 4000x500 to \(logo.width)x\(logo.height)") }, "\(scene.layoutNotes)")
        try check(scene, display, theme: theme, model: m, "huge logo")
        // The shrunken logo is the picture made small, not a corner of it.
        let p = display.pixel(x: logo.x + logo.width / 2, y: logo.y + logo.height / 2)
        #expect(abs(Int(p.r) - 30) <= 2 && p.g >= 252 && p.b >= 252, "\(p) at \(logo)")
    }

    @Test("a theme too large for the screen keeps the bar and label, and logs what it dropped")
    func tooLarge() throws {
        var theme = Theme()
        theme.titleSize = 200
        theme.messageSize = 120
        let display = try MemoryDisplay(width: 320, height: 240)
        let scene = Scene(theme: theme, width: 320, height: 240)
        scene.render(Self.fullModel(42), at: 10, into: display.framebuffer)
        #expect(!scene.barRect.isEmpty && !scene.labelRect.isEmpty)
        #expect(scene.barRect.intersection(scene.safeRect) == scene.barRect)
        #expect(scene.layoutNotes.contains { $0.contains("dropped") }, "\(scene.layoutNotes)")
        #expect(scene.layoutNotes.contains { $0.hasPrefix("drawn at scale") }, "\(scene.layoutNotes)")
    }

    @Test("overscan: the layout keeps the theme's margin free at every edge", arguments: [ScreenStyle.plain, .box])
    func overscan(style: ScreenStyle) throws {
        var theme = Theme()
        theme.style = style
        theme.logo = Self.logoPath
        try theme.set("overscan", "0.06")
        let display = try MemoryDisplay(width: 1280, height: 720)
        let scene = Scene(theme: theme, width: 1280, height: 720)
        scene.render(Self.fullModel(42), at: 10, into: display.framebuffer)
        let keep = Rect(x: 77, y: 43, width: 1280 - 154, height: 720 - 86)
        #expect(scene.safeRect == keep)
        try check(scene, display, theme: theme, model: Self.fullModel(42), "overscan")
        #expect(throws: ThemeError.self) { try theme.set("overscan", "0.5") }
    }
}

