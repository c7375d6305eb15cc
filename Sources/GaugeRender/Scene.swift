import CPixman
import GaugeProtocol

/// The picture for a screen model at a moment: it keeps its layers cached, tells which
/// rectangle changed from one frame to the next, and draws any rectangle of the current
/// frame into a framebuffer of any pixel format.
package final class Scene {
    package let width: Int
    package let height: Int
    package let scale: Double
    package let theme: Theme
    let layout: Layout
    let text: TextRenderer
    /// The bar's layers in the current state's fill colour; a new state builds its own
    /// (states change a few times a run: keeping each state's layers would hold a third
    /// of a megabyte per state at 1080p for nothing).
    var bar: BarLayers
    /// The track and the fill's masks, which every state's bar shares.
    private let barShapes: BarShapes
    /// The layout the bar is drawn in: the scene's, or once a mark shows `whenFinished`
    /// (the bar shortened to make room for it), with that bar's shapes.
    var barLayout: Layout
    private lazy var finishedShapes = BarShapes(theme: surfaceTheme, layout: layout.whenFinished)
    var state = RunState.begin
    private var mark = TextLine()
    private var logo: (image: PixmanImage, rect: Rect)?
    private var mode = DisplayMode.determinate
    /// When the mode last changed and the value the bar showed then: entering and leaving
    /// indeterminate mode eases over `transitionDuration` instead of jumping.
    private var modeSwitch: (time: Double, from: Double)?
    private var lastShown = 0.0
    private var hasFrame = false
    private var barOpacity = 1.0
    private var indicatorOpacity = 0.0
    private var indicatorFrame = -1
    private lazy var indicator: IndicatorLayers = {
        indicatorIsBuilt = true
        return IndicatorLayers(theme: surfaceTheme, layout: layout)
    }()
    /// The colour around everything (the background, dimmed by the cover in the box style)
    /// and the colour under the bar (that, or the box's panel over it).
    private let screenColor: Color
    private let surfaceColor: Color
    /// The theme as the bar sees it: its background is the surface under it.
    private let surfaceTheme: Theme
    /// The box style's panel: the layout's, taller by what a message of two lines needs and
    /// wider by what a title or message wider than the bar needs (`fitPanel`).
    private var panel = Rect.zero
    private var panelMask: PixmanImage?
    var badge: (mask: PixmanImage, rect: Rect)?
    /// Why the logo the theme asks for is not shown (the firmware's not published, a PNG
    /// that cannot be read), for the log; nil when shown or none asked for.
    package private(set) var logoProblem: String?

    private var title = TextLine()
    private var message = TextLine()
    var label = TextLine()
    private lazy var entry = EntryLayer(theme: theme, layout: layout, text: text)
    private lazy var details = DetailsLayer(theme: theme, layout: layout, text: text)
    private lazy var failure = FailureLayer(theme: theme, layout: layout, text: text, screenColor: screenColor)
    /// The failure screen takes the splash's title's room too (`FailureLayer`).
    private var failureCoversTitle = false
    var labelColor = Color.black
    private var phase = 0
    var labelValue = -1.0
    private var needsFullRedraw = true
    /// The height of the percentage label's line (`labelClearance`).
    lazy var labelLineHeight: Int = text.render("0", size: layout.labelSize, bold: true).height
    /// The pixman images wrapping the buffers drawn into.
    private var targets = TargetImages()

    /// `text` and `assets` may be shared between scenes (their caches then serve all).
    package init(theme: Theme, width: Int, height: Int, scale: Double = 1, text: TextRenderer? = nil, assets: Assets? = nil) {
        precondition(width > 0 && height > 0, "scene needs a positive size")
        self.theme = theme
        self.width = width
        self.height = height
        self.scale = scale
        let assets = assets ?? Assets()
        let text = text ?? TextRenderer(theme: theme, assets: assets)
        self.text = text
        let chosen = assets.logo(for: theme, width: width, height: height, scale: scale)
        let logoImage = chosen.image
        let metrics = Layout.Metrics(
            lineHeight: { text.render("", size: $0, bold: $1).height },
            textWidth: { text.render($0, size: $1, bold: $2).width })
        let layout = Layout(theme: theme, width: width, height: height, scale: scale, metrics: metrics,
                            logoSize: logoImage.map { ($0.width, $0.height) }, fixedLogo: chosen.fixed)
        self.layout = layout
        barLayout = layout
        self.logoProblem = chosen.problem
        logoNote = chosen.note
        if let logoImage, !layout.logo.isEmpty {
            let rect = layout.logo
            logo = (rect.width == logoImage.width && rect.height == logoImage.height
                ? logoImage : logoImage.scaled(toWidth: rect.width, height: rect.height), rect)
        }
        let box = theme.style == .box
        screenColor = box ? theme.coverColor.over(theme.background) : theme.background
        surfaceColor = box ? theme.boxColor.over(screenColor) : screenColor
        var surfaceTheme = theme
        surfaceTheme.background = surfaceColor
        self.surfaceTheme = surfaceTheme
        if box {
            panel = layout.panel
            panelMask = Self.roundedMask(panel, radius: theme.boxRadius * layout.scale)
        }
        barShapes = BarShapes(theme: surfaceTheme, layout: layout)
        bar = BarLayers(theme: Self.barTheme(surfaceTheme, fill: theme.beginColor, pole: false), layout: layout, shapes: barShapes)
    }

    /// What the layout shrank or dropped to fit the screen, and a firmware's logo moved
    /// from where the firmware drew it, one line each, for the log.
    package var layoutNotes: [String] { (logoNote.map { [$0] } ?? []) + layout.notes }
    /// The scale the layout draws at: `scale`, or less when the screen is too small for it.
    package var drawnScale: Double { layout.scale }
    /// What a question showing costs the logo, for the log when one shows (nil: nothing).
    package var questionNote: String? {
        logo == nil || layout.logoWhileAsking ? nil : "logo hidden while a question shows: no room for both on \(width)x\(height)"
    }
    private let logoNote: String?

    /// Bytes the frame caches (the bar's phases, indicator frames) hold.
    package var frameCacheBytes: Int {
        bar.cachedBytes + (indicatorIsBuilt ? indicator.cachedBytes : 0)
    }
    private var indicatorIsBuilt = false

    /// Fonts the theme names that could not be opened.
    package var unavailableFonts: [String] { text.unavailableFonts }

    /// Why `font` could not be opened.
    package func fontProblem(_ font: String) -> String? { text.fontProblems[font] }

    /// The bar's rectangle on screen.
    package var barRect: Rect { barLayout.bar }

    /// Where the label is drawn (empty when hidden).
    package var labelRect: Rect { label.rect }
    package var titleRect: Rect { failureCoversTitle ? .zero : title.rect }
    package var messageRect: Rect { message.rect }
    /// Whether the title or the message was cut with an ellipsis to fit (the tests' check).
    var titleCut: Bool { title.image?.truncated ?? false }
    var messageCut: Bool { message.image?.truncated ?? false }
    /// Where the success or failure mark is drawn (empty while running).
    package var markRect: Rect { mark.rect }
    /// Where the logo is drawn (empty when none, dropped, or hidden for now).
    package var logoRect: Rect {
        guard let logo, logoShown else { return .zero }
        return logo.rect
    }
    /// The logo gives its room to the details view and the failure screen, and to a
    /// question that needs it.
    private var logoShown: Bool {
        details.lines == nil && failure.report == nil && (entry.entry == nil || layout.logoWhileAsking)
    }
    /// The failure screen's box (empty while hidden) and each of its lines of text.
    package var failureRect: Rect { failure.rect }
    package var failureTextRects: [Rect] { failure.textRects }
    /// The failure screen's QR code beside its box (`FailureLayer`): its square (empty
    /// without one), the code, and why none can be made (nil when one can).
    package var failureCodeRect: Rect { failure.codeRect }
    package var failureCode: QRCode? { failure.code }
    package var failureCodeProblem: String? { failure.codeProblem }
    /// Where the circles or ring indicator is drawn (empty while it is not shown).
    package var indicatorRect: Rect { indicatorOpacity > 0 ? indicator.rect : .zero }
    /// The box style's value badge (empty in the plain style or without a label).
    package var badgeRect: Rect { badge.map { label.rect.isEmpty ? .zero : $0.rect } ?? .zero }
    /// The box style's panel as drawn (empty in the plain style).
    package var panelRect: Rect { panel }
    /// The screen less its margin and overscan: the layout keeps everything inside.
    package var safeRect: Rect { layout.safe }

    /// The next frame must redraw the whole screen (a new buffer, a mode set).
    package func invalidate() { needsFullRedraw = true }

    /// The stripe offset at `time`: whole pixels, one period per `stripeDuration`.
    func stripePhase(at time: Double) -> Int {
        guard theme.animate, theme.stripeDuration > 0 else { return 0 }
        let periods = time / theme.stripeDuration
        let frac = periods - periods.rounded(.down)
        return Int(frac * Double(layout.stripePeriod)) % layout.stripePeriod
    }

    /// While the picture moves on its own at a steady pace (the stripes, or a circles or
    /// ring indicator), with nothing else moving: how often its pixels change and the
    /// first change after `time`. The stripes change at every step of a whole pixel
    /// (`stripePhase`); an indicator at each of its frames (`IndicatorLayers.frame(at:)`).
    /// Frames drawn at these times alone show every change and no frame twice. Nil while
    /// anything else moves (an easing value, a mode switch with its fade) or nothing does.
    package func frameSteps(_ model: ScreenModel, at time: Double) -> (period: Double, next: Double)? {
        guard model.mode == mode, modeSwitch.map({ time >= $0.time + theme.transitionDuration }) ?? true,
            model.isSettled(at: time), isAnimating(model, at: time)
        else { return nil }
        let period: Double
        if model.mode == .indeterminate, theme.indeterminateStyle != .barberPole {
            guard indicatorOpacity >= 1 else { return nil }
            period = indicator.stepPeriod
        } else {
            guard theme.animate, theme.stripeDuration > 0, layout.stripePeriod > 0 else { return nil }
            period = theme.stripeDuration / Double(layout.stripePeriod)
        }
        return (period, ((time / period).rounded(.down) + 1) * period)
    }

    /// True while the picture changes with time for this model (stripes moving, a value
    /// easing). Once the work has succeeded or failed the stripes stand still.
    package func isAnimating(_ model: ScreenModel, at time: Double) -> Bool {
        if !model.isSettled(at: time) { return true }
        if model.mode != mode { return true }
        if let s = modeSwitch, time < s.time + theme.transitionDuration { return true }
        if model.state == .success || model.state == .failure { return false }
        if model.mode == .indeterminate && theme.indeterminateStyle != .barberPole { return true }
        return theme.animate && (model.mode == .indeterminate || model.shown(at: time) > 0)
    }

    /// Moves the scene to `model` at `time` and returns the rectangle that changed
    /// (empty when the frame is the same as the last one).
    @discardableResult
    package func update(_ model: ScreenModel, at time: Double) -> Rect {
        var damage = Rect.zero
        let screen = Rect(x: 0, y: 0, width: width, height: height)
        if needsFullRedraw {
            damage = screen
            needsFullRedraw = false
        }

        if model.state != state {
            damage = damage.union(switchState(to: model.state))
        }

        let indeterminate = model.mode == .indeterminate
        let shown = updateMode(model, at: time, damage: &damage)
        let oldFill = bar.fillRect
        let oldFillWidth = bar.fillWidth
        bar.setFillWidth(barLayout.fillWidth(for: shown))
        if bar.fillWidth != oldFillWidth {
            damage = damage.union(oldFill.union(bar.fillRect))
        }
        let newPhase = bar.fillWidth > 0 && (state == .begin || state == .running) && barOpacity > 0 ? stripePhase(at: time) : phase
        if newPhase != phase {
            phase = newPhase
            damage = damage.union(bar.fillRect)
        }

        // Checked before the inout call: the common frame changes no text, and an inout
        // access to a class property costs a dynamic exclusivity check.
        if model.title != title.text || (title.image == nil && !model.title.isEmpty && layout.titleTop != nil) {
            damage = damage.union(updateTitle(model.title))
        }
        if model.message != message.text || (message.image == nil && !model.message.isEmpty && layout.messageTop != nil) {
            damage = damage.union(updateMessage(model.message))
        }
        damage = damage.union(updateLabel(shown: shown, hidden: indeterminate))
        if model.entry != entry.entry {
            // The logo goes while a question needs its room, and comes back after.
            if (model.entry == nil) != (entry.entry == nil), !layout.logoWhileAsking, let logo { damage = damage.union(logo.rect) }
            damage = damage.union(entry.update(model.entry))
        }
        return damage.union(updateAboveTheSplash(model)).intersection(screen)
    }

    /// The details view or the failure screen, which takes the details view's place (and
    /// the title's when it needs it); the logo goes while either shows, and comes back after.
    private func updateAboveTheSplash(_ model: ScreenModel) -> Rect {
        let shownDetails = model.failure == nil ? model.details : nil
        guard shownDetails != details.lines || model.failure != failure.report || model.failure != nil else { return .zero }
        let hadLogo = logoShown
        var damage = details.update(shownDetails, bottom: detailsBottom)
        var bottom = detailsBottom
        let covered = failureCoversTitle
        failureCoversTitle = false
        if let report = model.failure, !failure.holdsHead(of: report, bottom: bottom) {
            // Above a question laid out over the title (the plain style's place for it).
            let question = entry.rect.isEmpty || entry.rect.y > rowTop ? Int.max : entry.rect.y
            bottom = min(question, rowTop) - layout.textGap
            failureCoversTitle = true
        }
        if covered != failureCoversTitle { damage = damage.union(title.rect) }
        damage = damage.union(failure.update(model.failure, bottom: bottom))
        if hadLogo != logoShown, let logo { damage = damage.union(logo.rect) }
        return damage
    }

    private func updateTitle(_ value: String) -> Rect {
        guard let top = layout.titleTop else { return .zero }
        let damage = updateText(&title, value) {
            self.text.render($0, size: self.layout.titleSize, bold: true, maxWidth: self.layout.textMaxWidth)
        } place: {
            Rect(x: (self.width - $0.width) / 2, y: top, width: $0.width, height: $0.height)
        }
        return damage.union(fitPanel())
    }

    /// The message below the bar: two lines when it holds a line break (`Request.lineBreak`),
    /// in the room the layout keeps for two (the box style's panel grows to hold it).
    private func updateMessage(_ value: String) -> Rect {
        guard let top = layout.messageTop else { return .zero }
        let damage = updateText(&message, value) {
            self.text.render(lines: Self.messageLines($0), size: self.layout.messageSize, maxWidth: self.layout.textMaxWidth)
        } place: {
            Rect(x: (self.width - $0.width) / 2, y: top, width: $0.width, height: $0.height)
        }
        return damage.union(fitPanel())
    }

    /// The box style's panel for the text it holds: downwards for a message's second line,
    /// and wider (up to the safe area, never narrower again) for a title or message wider
    /// than the bar. Returns what changed.
    private func fitPanel() -> Rect {
        guard theme.style == .box else { return .zero }
        var grown = layout.panel
        if let top = layout.messageTop {
            let room = layout.panel.maxY - layout.padding - top
            grown.height = min(layout.panelMax.height, grown.height + max(0, (message.image?.height ?? 0) - room))
        }
        let text = max(title.image?.width ?? 0, message.image?.width ?? 0) + 2 * layout.padding
        grown.width = min(layout.safe.width, max(panel.width, text))
        grown.x = (width - grown.width) / 2
        guard grown != panel else { return .zero }
        let old = panel
        setPanel(grown)
        return old.union(grown)
    }

    /// Where the question on screen is (empty without one).
    package var entryRect: Rect { entry.rect }

    /// Where the details view ends: above the title (or the bar, or the box's panel), and
    /// above a question laid out there.
    private var detailsBottom: Int {
        let splashTop = theme.style == .box ? panel.y : (title.rect.isEmpty ? layout.row.y - labelClearance(.above) : title.rect.y)
        let top = entry.rect.isEmpty ? splashTop : min(splashTop, entry.rect.y)
        return top - layout.textGap
    }

    /// The top of the bar's row and what belongs to it: the label above it, the box
    /// style's value badge.
    private var rowTop: Int {
        guard theme.style == .box else { return layout.row.y - labelClearance(.above) }
        let badge = theme.showLabel ? Layout.badgeHeight(labelSize: layout.labelSize, scale: layout.scale) : 0
        return layout.row.y - layout.textGap / 2 - badge
    }

    /// Where the details view is drawn (empty while hidden).
    package var detailsRect: Rect { details.rect }

    private func setPanel(_ rect: Rect) {
        panel = rect
        panelMask = Self.roundedMask(rect, radius: theme.boxRadius * layout.scale)
    }

    private static func roundedMask(_ rect: Rect, radius: Double) -> PixmanImage {
        Shape.roundedRectMask(
            width: rect.width, height: rect.height, rect: (0, 0, Double(rect.width), Double(rect.height)), radius: radius)
    }

    /// Work of unknown length: the barber pole fills the bar and sweeps its stripes; the
    /// circles and ring fade in where the bar was. Both ways ease over `transitionDuration`.
    /// Returns the value the bar shows.
    private func updateMode(_ model: ScreenModel, at time: Double, damage: inout Rect) -> Double {
        if model.mode != mode {
            // The first frame shows the mode as it is; later changes ease.
            if hasFrame { modeSwitch = (time, lastShown) }
            mode = model.mode
            if theme.indeterminateStyle == .barberPole {
                bar = makeBar()
                damage = damage.union(layout.bar)
            }
        }
        hasFrame = true
        var blend = 1.0
        if let s = modeSwitch {
            let d = theme.transitionDuration
            if d > 0, time < s.time + d {
                blend = Easing.easeInOut((time - s.time) / d)
            } else {
                modeSwitch = nil
            }
        }
        let indeterminate = mode == .indeterminate
        var shown = model.shown(at: time)
        var newIndicatorOpacity = 0.0
        if theme.indeterminateStyle == .barberPole {
            let settled = indeterminate ? 100 : shown
            shown = modeSwitch.map { $0.from + (settled - $0.from) * blend } ?? settled
        } else {
            newIndicatorOpacity = indeterminate ? blend : 1 - blend
            if modeSwitch == nil { newIndicatorOpacity = indeterminate ? 1 : 0 }
        }
        lastShown = shown
        if newIndicatorOpacity != indicatorOpacity {
            indicatorOpacity = newIndicatorOpacity
            barOpacity = 1 - newIndicatorOpacity
            damage = damage.union(layout.bar).union(indicator.rect).union(label.rect)
        }
        if indicatorOpacity > 0 {
            let frame = indicator.frame(at: time)
            if frame != indicatorFrame {
                indicatorFrame = frame
                damage = damage.union(indicator.rect)
            }
        }
        return shown
    }

    /// Draws the current frame over `clip` into `buffer`.
    ///
    /// Onto a buffer on screen (`Framebuffer.isOnScreen`) every pixel is written once, with
    /// its final value: the layers are composed off screen, a band of rows at a time, and
    /// each band copied (drawn in place, a changed line of text would show its bare
    /// background for a moment, and blending would read the display's memory back). The
    /// two kinds of frame that already write each pixel once are drawn straight: the
    /// moving stripes, and an opaque indicator alone.
    package func draw(into buffer: Framebuffer, clip: Rect) {
        let area = clip.intersection(Rect(x: 0, y: 0, width: min(width, buffer.width), height: min(height, buffer.height)))
        guard !area.isEmpty else { return }
        let target = targets.image(for: buffer)
        if buffer.isOnScreen, !writesEachPixelOnce(area) {
            drawInBands(area, onto: target, format: buffer.format)
        } else {
            draw(into: target, area: area, onScreen: buffer.isOnScreen)
        }
    }

    /// Rows composed at a time for a buffer on screen: a band of a 1920-pixel-wide
    /// XRGB8888 screen is 120 KiB, which the allocator keeps in its heap.
    private static let bandRows = 16

    private func drawInBands(_ area: Rect, onto target: PixmanImage, format: PixelFormat) {
        let rows = min(area.height, Self.bandRows)
        let band = PixmanImage(format: format.pixman, width: width, height: rows)
        guard let data = pixman_image_get_data(band.raw) else { return }
        let stride = Int(pixman_image_get_stride(band.raw))
        var y = area.y
        while y < area.maxY {
            let part = Rect(x: area.x, y: y, width: area.width, height: min(rows, area.maxY - y))
            draw(part, intoBand: UnsafeMutableRawPointer(data), top: y, stride: stride, width: width, format: format)
            target.copy(from: band, rect: part, sourceOrigin: (part.x, 0))
            y = part.maxY
        }
    }

    /// Whether `draw(into:area:)` draws `area` in one of the ways that write each pixel once.
    private func writesEachPixelOnce(_ area: Rect) -> Bool {
        opaqueIndicatorCovers(area) || barAloneCovers(area)
    }

    /// Frames of moving stripes touch the bar alone, and nothing else overlaps it.
    private func barAloneCovers(_ area: Rect) -> Bool {
        barOpacity >= 1 && indicatorOpacity <= 0 && barLayout.bar.union(area) == barLayout.bar
    }

    /// An opaque indicator frame covering the whole area hides everything under it.
    private func opaqueIndicatorCovers(_ area: Rect) -> Bool {
        indicatorOpacity >= 1 && indicator.rect.union(area) == indicator.rect
            && !area.intersects(title.rect) && !area.intersects(message.rect) && !area.intersects(mark.rect)
            && !area.intersects(entry.rect) && !area.intersects(details.rect) && !area.intersects(failure.rect)
            && !area.intersects(failure.codeRect)
    }

    /// Draws rows `rows` of the current frame into `band`, which holds just those rows
    /// (`band.height == rows.count`, at least the scene's width): a picture made a strip
    /// at a time, such as a snapshot, never needs a copy of the whole screen.
    package func draw(rows: Range<Int>, into band: Framebuffer) {
        precondition(band.height == rows.count && band.width >= width, "band of \(band.width)x\(band.height) for rows \(rows)")
        let area = Rect(x: 0, y: rows.lowerBound, width: width, height: rows.count)
            .intersection(Rect(x: 0, y: 0, width: width, height: height))
        guard !area.isEmpty else { return }
        draw(area, intoBand: band.base, top: rows.lowerBound, stride: band.stride, width: band.width, format: band.format)
    }

    /// `area`, within the rows of a band that starts at row `top`, drawn into the band: the
    /// band as the top of a screen-sized image that starts `top` rows above it, since pixman
    /// touches only the pixels of the area it composes into, which are the band's. Not
    /// cached: the band's memory is short-lived.
    private func draw(
        _ area: Rect, intoBand base: UnsafeMutableRawPointer, top: Int, stride: Int, width: Int, format: PixelFormat
    ) {
        let screen = Framebuffer(base: base - top * stride, width: width, height: area.maxY, stride: stride, format: format)
        draw(into: PixmanImage(wrapping: screen), area: area)
    }

    private func draw(into dst: PixmanImage, area: Rect, onScreen: Bool = false) {
        if opaqueIndicatorCovers(area) {
            indicator.draw(into: dst, clip: area, frame: indicatorFrame, opacity: 1)
            return
        }
        if barAloneCovers(area) {
            bar.draw(into: dst, clip: area, phase: phase, onScreen: onScreen)
            return
        }
        for part in area.subtracting(barLayout.bar) {
            dst.fill(part, color: screenColor)
            if let panelMask {
                let p = part.intersection(panel)
                dst.composite(PIXMAN_OP_OVER, source: PixmanImage(solid: surfaceColor), mask: panelMask, rect: p,
                              maskOrigin: (p.x - panel.x, p.y - panel.y))
            }
        }
        if let logo, logoShown {
            let l = area.intersection(logo.rect)
            dst.composite(PIXMAN_OP_OVER, source: logo.image, rect: l, sourceOrigin: (l.x - logo.rect.x, l.y - logo.rect.y))
        }
        if barOpacity > 0 {
            bar.draw(into: dst, clip: area, phase: phase, onScreen: onScreen)
            if barOpacity < 1 {
                dst.fill(area.intersection(barLayout.bar), color: surfaceColor.withAlpha(1 - barOpacity), op: PIXMAN_OP_OVER)
            }
        } else {
            dst.fill(area.intersection(barLayout.bar), color: surfaceColor)
        }
        if indicatorOpacity > 0 {
            indicator.draw(into: dst, clip: area, frame: indicatorFrame, opacity: indicatorOpacity)
        }
        if !failureCoversTitle { draw(title, color: theme.titleColor, into: dst, clip: area) }
        draw(message, color: theme.messageColor, into: dst, clip: area)
        entry.draw(into: dst, clip: area)
        details.draw(into: dst, clip: area)
        failure.draw(into: dst, clip: area)
        draw(mark, color: theme.fillColor(for: state), into: dst, clip: area)
        if let badge {
            let b = area.intersection(badge.rect)
            dst.composite(PIXMAN_OP_OVER, source: PixmanImage(solid: theme.fillColor(for: state)), mask: badge.mask, rect: b,
                          maskOrigin: (b.x - badge.rect.x, b.y - badge.rect.y))
        }
        if theme.labelPosition != .inside || theme.style == .box { draw(label, color: labelColor, into: dst, clip: area) }
    }

    /// The bar's look for the theme's colours: the state's fill with light stripes, or,
    /// for work of unknown length in the barber-pole style, the state's colour in stripes
    /// over the track's, so that no single frame reads as a full bar.
    private static func barTheme(_ surface: Theme, fill: Color, pole: Bool) -> Theme {
        var t = surface
        if pole {
            t.fillColor = surface.trackColor
            t.stripeColor = fill
        } else {
            t.fillColor = fill
        }
        return t
    }

    private func makeBar() -> BarLayers {
        let pole = mode == .indeterminate && theme.indeterminateStyle == .barberPole
        return BarLayers(theme: Self.barTheme(surfaceTheme, fill: theme.fillColor(for: state), pole: pole), layout: barLayout,
                         shapes: mark.rect.isEmpty ? barShapes : finishedShapes)
    }

    /// The bar in the state's colours, and the state's mark at the end of the bar's place
    /// (the bar shortened for it, `Layout.finishedBar`).
    private func switchState(to next: RunState) -> Rect {
        state = next
        let old = bar.fillRect.union(label.rect).union(mark.rect)
        labelValue = -1
        label.rect = .zero
        mark = TextLine()
        if theme.showMark, let short = layout.finishedBar, let mask = Mark.mask(for: next, size: layout.markSize) {
            let b = layout.bar
            let x = short.x > b.x ? b.x : b.maxX - mask.width
            let rect = Rect(x: x, y: b.y + (b.height - mask.height) / 2, width: mask.width, height: mask.height)
            mark = TextLine(text: next.rawValue, image: TextImage(mask: mask, width: mask.width, height: mask.height, ascent: 0, truncated: false, missingGlyphs: 0), rect: rect.intersection(Rect(x: 0, y: 0, width: width, height: height)))
        }
        barLayout = mark.rect.isEmpty ? layout : layout.whenFinished
        bar = makeBar()
        return old.union(layout.bar).union(mark.rect)
    }

    /// Updates to `model` at `time` and draws what changed; returns that rectangle.
    @discardableResult
    package func render(_ model: ScreenModel, at time: Double, into buffer: Framebuffer) -> Rect {
        let damage = update(model, at: time)
        draw(into: buffer, clip: damage)
        return damage
    }
}
