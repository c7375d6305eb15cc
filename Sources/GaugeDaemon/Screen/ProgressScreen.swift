import GaugeDisplay
import GaugeProtocol
import GaugeRender

/// The state half of the daemon: the screen model, the theme, and a scene for each view
/// of the display (each head of a DRM card, laid out for its own size, scale and
/// orientation). Requests change the model at once; `renderFrame(at:)` draws whatever
/// changed since the last frame on every view (so updates faster than the frame rate
/// coalesce: the last value wins).
package final class ProgressScreen {
    package private(set) var model = ScreenModel()
    package private(set) var theme: Theme
    package private(set) var visible = true
    /// The first view as its scene sees it: the panel, turned when the theme says so.
    /// `status`, `elementRects` and snapshots are of this view.
    package var display: (any Display)? { views.first?.display }
    private var panel: (any Display)?
    /// Frames presented since the start (`status` reports it as `frames`): one for each
    /// `renderFrame` that presented on some view.
    package private(set) var framesPresented = 0
    private var views: [View] = []
    /// The scale the first view is drawn at.
    package var scale: Double { views.first?.scale ?? 1 }
    /// The scale the first view's layout draws at: `scale`, or less on a screen too small for it.
    package var drawnScale: Double { views.first?.scene?.drawnScale ?? scale }
    /// Each view's scale and size (the daemon's log).
    package var viewSizes: [(width: Int, height: Int, scale: Double)] {
        views.map { ($0.size.width, $0.size.height, $0.scale) }
    }
    private let forcedScale: Double?
    /// Logos and font files, loaded once for every scene (the live one, snapshots').
    private let assets = Assets()
    /// The text renderer with its glyph caches, kept while the theme's fonts stay the same.
    private var text: (fonts: [String], renderer: TextRenderer)?
    private let log: (String) -> Void
    /// The layout's notes as last logged: a new layout logs only what is new.
    private var layoutNotes: [String] = []
    /// Whether a question has shown since the scenes were laid out (`Scene.questionNote`).
    private var questionNoted = false
    /// Why the failure screen has no QR code, as last logged (once each).
    private var codeProblemLogged: String?
    /// Why lines that need shaping are drawn unshaped, as last logged (once each).
    private var shapingProblemLogged: String?

    /// `display` may be nil: the daemon then keeps serving and snapshots still work. `scale`
    /// (`gauged --scale`) wins over the theme's and the head's.
    package init(theme: Theme, display: (any Display)?, scale: Double? = nil, log: @escaping (String) -> Void) {
        self.theme = theme
        forcedScale = scale
        self.log = log
        replaceDisplay(display)
    }

    /// One head's picture: where it goes, the scene laid out for it, and what a snapshot
    /// moved its scene past that no frame has presented yet. A class: each frame reads
    /// and changes it in place, never copying the displays it holds.
    private final class View {
        /// The head as the display gives it, and as the scene sees it (turned); nil for
        /// the one view kept while there is no display, 1280x720, for snapshots.
        let panel: (any Display)?
        let display: (any Display)?
        let scale: Double
        let scene: Scene?
        var owedDamage = Rect.zero

        init(panel: (any Display)? = nil, display: (any Display)? = nil, scale: Double = 1.0, scene: Scene? = nil) {
            self.panel = panel
            self.display = display
            self.scale = scale
            self.scene = scene
        }

        var size: (width: Int, height: Int) { display.map { ($0.width, $0.height) } ?? (1280, 720) }
    }

    private func textRenderer(for theme: Theme) -> TextRenderer {
        let fonts = [theme.font, theme.boldFont] + theme.fallbackFonts
        if let text, text.fonts == fonts { return text.renderer }
        let renderer = TextRenderer(theme: theme, assets: assets)
        text = (fonts, renderer)
        return renderer
    }

    /// `--scale`, else the theme's, else the head's own from its mode and size (`DeviceScale`).
    private func scale(of panel: (any Display)?, theme: Theme) -> Double {
        forcedScale ?? theme.scale ?? panel.map { DeviceScale.auto($0) } ?? 1
    }

    /// Lays the scene out again for every view (a theme or display change, never per frame).
    private func rebuildScenes() {
        questionNoted = false
        var notes: [String] = []
        for index in views.indices {
            let view = views[index]
            let scale = scale(of: view.panel, theme: theme)
            let scene = Scene(
                theme: theme, width: view.size.width, height: view.size.height, scale: scale,
                text: textRenderer(for: theme), assets: assets)
            if index == 0 {
                for font in scene.unavailableFonts where font == theme.font || font == theme.boldFont {
                    log("\(scene.fontProblem(font) ?? "font \(font) unavailable"); using fallbacks")
                }
                if let problem = scene.logoProblem { log(problem) }
            }
            let head = views.count > 1 ? "\(view.display?.name ?? ""): " : ""
            notes += scene.layoutNotes.map { head + $0 }
            views[index] = View(panel: view.panel, display: view.display, scale: scale, scene: scene)
        }
        for note in notes where !layoutNotes.contains(note) { log(note) }
        layoutNotes = notes
    }

    // MARK: - Requests

    package func setProgress(_ value: Double, message: String?, at time: Double) {
        model.setTarget(value, at: time, duration: theme.transitionDuration, easing: theme.easing)
        if let message { model.message = message }
    }

    package func setMessage(_ text: String) { model.message = text }
    package func setTitle(_ text: String) { model.title = text }
    /// The question on screen (nil: none). The first one a layout shows logs what it costs the logo.
    package func setEntry(_ entry: ScreenModel.Entry?) {
        if entry != nil, !questionNoted {
            questionNoted = true
            for view in views {
                guard let note = view.scene?.questionNote else { continue }
                log((views.count > 1 ? "\(view.display?.name ?? ""): " : "") + note)
            }
        }
        model.entry = entry
    }
    /// The details view's lines (nil: hidden).
    func setDetails(_ lines: [String]?) { model.details = lines }

    /// `failure [TITLE]`: a new failure screen, and the bar in the failure state; `bootID`
    /// is the boot's identifier (`BootID.read()`), which its QR code carries.
    package func showFailure(title: String, bootID: String = "") {
        model.failure = FailureReport(title: title)
        model.failure?.bootID = bootID
        model.state = .failure
    }

    /// `failure-summary TEXT`; `err state` without a failure screen.
    package func setFailureSummary(_ text: String) -> ProtocolError? {
        guard model.failure != nil else { return Self.noFailure }
        model.failure?.summary = text
        return nil
    }

    /// `failure-line TEXT`; `err state` without a failure screen.
    package func addFailureLine(_ text: String) -> ProtocolError? {
        guard model.failure != nil else { return Self.noFailure }
        model.failure?.append(text)
        return nil
    }

    /// `failure-clear`: back to the progress screen (the state stays).
    package func clearFailure() { model.failure = nil }

    private static let noFailure = ProtocolError(.state, "no failure screen is up; 'failure [TITLE]' puts one up")

    package func setMode(_ mode: DisplayMode) {
        model.mode = mode
    }

    /// Success fills the bar; failure keeps it where it stopped. Both keep the message.
    /// Running again after an end, a bar still easing down to the new operation's value
    /// (`progress 0` just before) jumps there: the old bar empties in its own colours
    /// until the next operation runs, and a running bar is never shown going back.
    package func setState(_ state: RunState, message: String?, at time: Double) {
        switch state {
        case .begin: model.state = .begin
        case .running:
            if model.state == .success || model.state == .failure, model.shown(at: time) > model.target {
                model.setTarget(model.target)
            }
            model.state = .running
        case .success:
            model.state = .success
            model.mode = .determinate
            model.setTarget(100, at: time, duration: theme.transitionDuration, easing: theme.easing)
        case .failure: model.state = .failure
        }
        if let message { model.message = message }
    }

    /// Applies every setting or none. A logo or font that cannot be loaded refuses the
    /// whole request with the reason (`err io`). Returns the settings as applied (a font
    /// family as the file found for it).
    @discardableResult
    package func applyTheme(_ settings: [ThemeSetting]) throws(ProtocolError) -> [ThemeSetting] {
        var next = theme
        var applied: [ThemeSetting] = []
        for setting in settings {
            var value = setting.value
            if setting.key == "font" || setting.key == "bold_font", ThemeSetting.isFontFamily(value) {
                do throws(AssetError) {
                    value = try FontFinder.find(value, bold: setting.key == "bold_font")
                } catch {
                    throw ProtocolError(.io, error.description)
                }
            }
            applied.append(ThemeSetting(key: setting.key, value: value))
            do {
                try next.set(setting.key, value)
            } catch .unknownKey(let key) {
                throw ProtocolError(.unknown, "unknown theme key '\(Abbreviated(key))'\(Nearest.hint(for: key, in: Theme.keys))")
            } catch {
                throw ProtocolError(.range, error.description)
            }
        }
        do throws(AssetError) {
            // The firmware's logo falls back to logo_fallback: that file must be usable.
            let logo = next.logo == ThemeSetting.firmwareLogo ? next.logoFallback : next.logo
            let shown = theme.logo == ThemeSetting.firmwareLogo ? theme.logoFallback : theme.logo
            for view in views {
                let nextScale = scale(of: view.panel, theme: next)
                if logo != shown || nextScale != view.scale, !logo.isEmpty {
                    _ = try assets.logo(logo, scale: nextScale)
                }
            }
            if next.fallbackFonts != theme.fallbackFonts {
                for path in next.fallbackFonts { try assets.checkFontFile(path) }
            }
        } catch {
            throw ProtocolError(.io, error.description)
        }
        if next.font != theme.font || next.boldFont != theme.boldFont {
            let renderer = textRenderer(for: next)
            for font in [next.font, next.boldFont] where renderer.unavailableFonts.contains(font) {
                throw ProtocolError(.io, renderer.fontProblems[font] ?? "font \(font) unavailable")
            }
        }
        replaceTheme(next)
        return applied
    }

    package func replaceTheme(_ next: Theme) {
        guard next != theme else { return }
        let turned = next.rotation != theme.rotation
        theme = next
        if turned { replaceDisplay(panel) } else { rebuildScenes() }
    }

    package func show() {
        guard !visible else { return }
        visible = true
        invalidate()
    }

    package func hide() { visible = false }

    /// A new display (or none): a scene is laid out for each of its views' size and scale,
    /// and the next frame draws them whole. With none, one scene of 1280x720 still serves
    /// snapshots.
    package func replaceDisplay(_ next: (any Display)?) {
        panel = next
        views = []
        for head in next?.views ?? [] {
            var display = head
            // The panel's own orientation, then the theme's (or --rotate's) turn on top.
            let rotation = head.panelOrientation.then(theme.rotation)
            if rotation != .none {
                do {
                    display = try RotatedDisplay(head, rotation: rotation)
                } catch {
                    log("cannot turn \(head.name) by \(rotation.rawValue)°: \(error)")
                }
            }
            views.append(View(panel: head, display: display))
        }
        if views.isEmpty { views = [View()] }
        rebuildScenes()
        if views.count > 1 {
            let heads = viewSizes.map { "\($0.width)x\($0.height) at scale \($0.scale.shortText)" }
            log("each head laid out for its own mode: \(heads.joined(separator: ", "))")
        }
    }

    /// Every view must be repainted whole (a mode set, a VT switch back).
    package func invalidate() {
        for view in views { view.scene?.invalidate() }
    }

    /// Where the first view's scene puts each element (empty ones are not drawn), in the
    /// display's pixels.
    package var elementRects: [(name: String, rect: Rect)] {
        guard let scene = views.first?.scene else { return [] }
        return [("bar", scene.barRect), ("label", scene.labelRect), ("title", scene.titleRect),
                ("message", scene.messageRect), ("mark", scene.markRect)]
    }

    // MARK: - Frames

    package func isAnimating(at time: Double) -> Bool {
        guard visible else { return false }
        return views.contains { $0.scene?.isAnimating(model, at: time) == true }
    }

    package func isSettled(at time: Double) -> Bool { model.isSettled(at: time) }

    /// While only the stripes or an indicator move: how often the picture changes and
    /// when next (see `Scene.frameSteps`), the most often of all views'; nil otherwise.
    package func frameSteps(at time: Double) -> (period: Double, next: Double)? {
        guard visible else { return nil }
        var steps: (period: Double, next: Double)?
        for view in views {
            guard let scene = view.scene, let own = scene.frameSteps(model, at: time) else { return nil }
            if steps == nil || own.period < steps!.period { steps = own }
        }
        return steps
    }

    /// A question is on the screen: its field is drawn and presented with every frame,
    /// changed or not (see `renderFrame`).
    var isQuestionShown: Bool { visible && model.entry != nil }

    /// Draws and presents what changed on every view. Returns false when some view could
    /// not take a frame now (its flip pending), so the caller tries again on the next tick;
    /// the views that could are drawn now.
    ///
    /// While a question is on the screen (`isQuestionShown`) its field is drawn and
    /// presented every time, whether a key came or not: the frames counted, and the work
    /// each frame does, are the same with and without a key, so nothing outside
    /// (`status`'s `frames`, how long replies take) follows the keys of a password.
    ///
    /// A frame is presented only when the scene's pixels change. The back buffer's stale
    /// region alone is no reason to draw and flip: the frame on screen already shows the
    /// current picture, and the stale part is redrawn with the next frame that changes
    /// something. (Whatever loses the picture on screen — a mode set, a VT switch back, a
    /// new display — invalidates the scene, so its damage is then the whole screen.)
    @discardableResult
    package func renderFrame(at time: Double) -> Bool {
        guard visible else { return true }
        var ready = true
        var presented = false
        for index in views.indices {
            guard let display = views[index].display, let scene = views[index].scene else { continue }
            guard let target = display.beginFrame() else {
                ready = false
                continue
            }
            var changed = scene.update(model, at: time).union(views[index].owedDamage)
            views[index].owedDamage = .zero
            if let problem = scene.failureCodeProblem, problem != codeProblemLogged {
                log("the failure screen shows no QR code: \(problem)")
                codeProblemLogged = problem
            }
            if isQuestionShown { changed = changed.union(scene.entryRect) }
            guard !changed.isEmpty else { continue }
            scene.draw(into: target.buffer, clip: changed.union(target.staleRegion))
            do {
                // What changed, not what was drawn: the stale part already shows on screen, and
                // counting it as changed would make the other buffer stale there too, so a
                // double-buffered display would redraw it every frame from then on.
                try display.present(damage: changed)
                presented = true
            } catch {
                // A display's errors name the device.
                log("frame not presented: \(error)")
            }
        }
        if let problem = text?.renderer.shapingProblem, problem != shapingProblemLogged {
            log("text that needs shaping or a right-to-left order is drawn a glyph per character: \(problem)")
            shapingProblemLogged = problem
        }
        if presented { framesPresented += 1 }
        return ready
    }

    /// The first view's frame for the current state, drawn whole, as the bytes of a PNG
    /// file: its live scene, moved to `time`, draws it a band of rows at a time in the
    /// display's format, and each band goes to libpng as it is drawn, so a snapshot holds
    /// no copy of the screen. What the scene's move changed is owed to that view's next
    /// frame.
    package func snapshotPNG(at time: Double) throws(ProtocolError) -> [UInt8] {
        guard !views.isEmpty, let scene = views[0].scene else { throw ProtocolError(.io, "no scene to snapshot") }
        views[0].owedDamage = views[0].owedDamage.union(scene.update(model, at: time))
        let format = display?.format ?? .xrgb8888
        let width = scene.width, bandRows = 32
        let stride = (width * format.bytesPerPixel + 3) & ~3
        let memory = UnsafeMutableRawPointer.allocate(byteCount: stride * bandRows, alignment: 64)
        defer { memory.deallocate() }
        do {
            return try PNG.encode(width: width, height: scene.height, bandRows: bandRows) { y, rows, rgba in
                let band = Framebuffer(base: memory, width: width, height: rows, stride: stride, format: format)
                scene.draw(rows: y..<(y + rows), into: band)
                PNG.convert(band, toRGBA: rgba)
            }
        } catch {
            throw ProtocolError(.io, error.description)
        }
    }

    package func status(at time: Double, fps: Int, clients: Int) -> Status {
        let displayInfo = display.map { Status.Display(name: $0.name, width: $0.width, height: $0.height, format: $0.format.rawValue) }
        // To two decimals, as the reply carries them.
        return Status(
            target: Status.twoDecimals(model.target), shown: Status.twoDecimals(model.shown(at: time)),
            message: model.message, title: model.title,
            mode: model.mode, state: model.state,
            visible: visible, display: displayInfo ?? .none, fps: fps,
            animating: isAnimating(at: time), clients: clients, frames: framesPresented, stallTime: theme.stallTime,
            waitNotice: theme.waitNotice,
            failure: model.failure.map {
                Status.Failure(title: $0.shownTitle, summary: $0.summary, lines: $0.lines.count, dropped: $0.dropped, boot: $0.bootID)
            })
    }
}
