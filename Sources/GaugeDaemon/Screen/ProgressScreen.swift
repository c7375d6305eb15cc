import GaugeDisplay
import GaugeProtocol
import GaugeRender

/// The state half of the daemon: the screen model, the theme and the scene, and the
/// display frames go to. Requests change the model at once; `renderFrame(at:)` draws
/// whatever changed since the last frame (so updates faster than the frame rate
/// coalesce: the last value wins).
package final class ProgressScreen {
    package private(set) var model = ScreenModel()
    package private(set) var theme: Theme
    package private(set) var visible = true
    /// The display as the scene sees it: the panel, turned when the theme says so.
    package private(set) var display: (any Display)?
    private var panel: (any Display)?
    /// Frames presented since the start (`status` reports it as `frames`).
    package private(set) var framesPresented = 0
    private var scene: Scene?
    /// What a snapshot moved the scene past that no frame has presented yet.
    private var owedDamage = Rect.zero
    /// The scale the scene is drawn at: `forcedScale`, else the theme's, else the head's own
    /// (`DeviceScale`).
    package private(set) var scale = 1.0
    private let forcedScale: Double?
    /// Logos and font files, loaded once for every scene (the live one, snapshots').
    private let assets = Assets()
    /// The text renderer with its glyph caches, kept while the theme's fonts stay the same.
    private var text: (fonts: [String], renderer: TextRenderer)?
    private let log: (String) -> Void

    /// `display` may be nil: the daemon then keeps serving and snapshots still work. `scale`
    /// (`gauged --scale`) wins over the theme's and the head's.
    package init(theme: Theme, display: (any Display)?, scale: Double? = nil, log: @escaping (String) -> Void) {
        self.theme = theme
        forcedScale = scale
        self.log = log
        replaceDisplay(display)
    }

    private var size: (width: Int, height: Int) {
        if let display { return (display.width, display.height) }
        return (1280, 720)
    }

    private func textRenderer(for theme: Theme) -> TextRenderer {
        let fonts = [theme.font, theme.boldFont] + theme.fallbackFonts
        if let text, text.fonts == fonts { return text.renderer }
        let renderer = TextRenderer(theme: theme, assets: assets)
        text = (fonts, renderer)
        return renderer
    }

    private func makeScene(_ theme: Theme) -> Scene {
        Scene(theme: theme, width: size.width, height: size.height, scale: scale, text: textRenderer(for: theme), assets: assets)
    }

    private func rebuildScene() {
        scale = forcedScale ?? theme.scale ?? panel.map { DeviceScale.auto($0) } ?? 1
        let scene = makeScene(theme)
        for font in scene.unavailableFonts where font == theme.font || font == theme.boldFont {
            log("\(scene.fontProblem(font) ?? "font \(font) unavailable"); using fallbacks")
        }
        if let problem = scene.logoProblem { log(problem) }
        for note in scene.layoutNotes { log(note) }
        self.scene = scene
        owedDamage = .zero
    }

    // MARK: - Requests

    package func setProgress(_ value: Double, message: String?, at time: Double) {
        model.setTarget(value, at: time, duration: theme.transitionDuration, easing: theme.easing)
        if let message { model.message = message }
    }

    package func setMessage(_ text: String) { model.message = text }
    package func setTitle(_ text: String) { model.title = text }
    /// The question on screen (nil: none).
    package func setEntry(_ entry: ScreenModel.Entry?) { model.entry = entry }
    /// The details view's lines (nil: hidden).
    package func setDetails(_ lines: [String]?) { model.details = lines }

    package func setMode(_ mode: GaugeProtocol.DisplayMode) {
        model.mode = mode == .determinate ? .determinate : .indeterminate
    }

    /// Success fills the bar; failure keeps it where it stopped. Both keep the message.
    /// Running again after an end, a bar still easing down to the new operation's value
    /// (`progress 0` just before) jumps there: the old bar empties in its own colours
    /// until the next operation runs, and a running bar is never shown going back.
    package func setState(_ state: GaugeProtocol.RunState, message: String?, at time: Double) {
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
            let nextScale = forcedScale ?? next.scale ?? panel.map { DeviceScale.auto($0) } ?? 1
            // The firmware's logo falls back to logo_fallback: that file must be usable.
            let logo = next.logo == ThemeSetting.firmwareLogo ? next.logoFallback : next.logo
            let shown = theme.logo == ThemeSetting.firmwareLogo ? theme.logoFallback : theme.logo
            if logo != shown || nextScale != scale, !logo.isEmpty { _ = try assets.logo(logo, scale: nextScale) }
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
        if turned { replaceDisplay(panel) } else { rebuildScene() }
    }

    package func show() {
        guard !visible else { return }
        visible = true
        scene?.invalidate()
    }

    package func hide() { visible = false }

    /// A new display (or none): the scene is laid out for its size and scale, and the next
    /// frame draws it whole.
    package func replaceDisplay(_ next: (any Display)?) {
        panel = next
        display = next
        // The panel's own orientation, then the theme's (or --rotate's) turn on top.
        let rotation = next.map { $0.panelOrientation.then(theme.rotation) } ?? .none
        if let next, rotation != .none {
            do {
                display = try RotatedDisplay(next, rotation: rotation)
            } catch {
                log("cannot turn \(next.name) by \(rotation.rawValue)°: \(error)")
            }
        }
        rebuildScene()
    }

    /// The display must be repainted whole (a mode set, a VT switch back).
    package func invalidate() { scene?.invalidate() }

    /// Where the current scene puts each element (empty ones are not drawn), in the
    /// display's pixels.
    package var elementRects: [(name: String, rect: Rect)] {
        guard let scene else { return [] }
        return [("bar", scene.barRect), ("label", scene.labelRect), ("title", scene.titleRect),
                ("message", scene.messageRect), ("mark", scene.markRect)]
    }

    // MARK: - Frames

    package func isAnimating(at time: Double) -> Bool {
        guard visible, let scene else { return false }
        return scene.isAnimating(model, at: time)
    }

    package func isSettled(at time: Double) -> Bool { model.isSettled(at: time) }

    /// While only the stripes or an indicator move: how often the picture changes and
    /// when next (see `Scene.frameSteps`); nil otherwise.
    package func frameSteps(at time: Double) -> (period: Double, next: Double)? {
        guard visible, let scene else { return nil }
        return scene.frameSteps(model, at: time)
    }

    /// A question is on the screen: its field is drawn and presented with every frame,
    /// changed or not (see `renderFrame`).
    package var isQuestionShown: Bool { visible && model.entry != nil }

    /// Draws and presents what changed. Returns false when the display could not take a
    /// frame now (a flip pending), so the caller tries again on the next tick.
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
        guard visible, let display, let scene else { return true }
        guard let target = display.beginFrame() else { return false }
        var changed = scene.update(model, at: time).union(owedDamage)
        owedDamage = .zero
        if isQuestionShown { changed = changed.union(scene.entryRect) }
        guard !changed.isEmpty else { return true }
        scene.draw(into: target.buffer, clip: changed.union(target.staleRegion))
        do {
            // What changed, not what was drawn: the stale part already shows on screen, and
            // counting it as changed would make the other buffer stale there too, so a
            // double-buffered display would redraw it every frame from then on.
            try display.present(damage: changed)
            framesPresented += 1
        } catch {
            // A display's errors name the device.
            log("frame not presented: \(error)")
        }
        return true
    }

    /// The frame for the current state, drawn whole, as the bytes of a PNG file: the live
    /// scene, moved to `time`, draws it a band of rows at a time in the display's format,
    /// and each band goes to libpng as it is drawn, so a snapshot holds no copy of the
    /// screen. What the scene's move changed is owed to the display's next frame.
    package func snapshotPNG(at time: Double) throws(ProtocolError) -> [UInt8] {
        guard let scene else { throw ProtocolError(.io, "no scene to snapshot") }
        owedDamage = owedDamage.union(scene.update(model, at: time))
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
            mode: model.mode == .determinate ? .determinate : .indeterminate,
            state: GaugeProtocol.RunState(rawValue: model.state.rawValue) ?? .running,
            visible: visible, display: displayInfo ?? .none, fps: fps,
            animating: isAnimating(at: time), clients: clients, frames: framesPresented, stallTime: theme.stallTime)
    }
}
