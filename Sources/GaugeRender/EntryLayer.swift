import CPixman

extension ScreenModel {
    /// A question on screen: its prompt, and the field its answer is typed into.
    package struct Entry: Equatable, Sendable {
        package enum Field: Equatable, Sendable {
            /// A password: one bullet per character typed, never the characters.
            case hidden(count: Int)
            /// An answer shown as it is typed.
            case shown(String)
        }

        package var prompt: String
        package var field: Field
        /// Caps Lock is on while a password is typed: a notice under the field says so.
        package var capsLock: Bool

        package init(prompt: String, field: Field, capsLock: Bool = false) {
            self.prompt = prompt
            self.field = field
            self.capsLock = capsLock
        }
    }
}

/// A question's prompt and answer field, drawn below the message (the bar and message
/// stay where they are): the prompt in the title's colour, then a rounded field in the
/// track's colour holding one bullet per character of a password, or the answer typed,
/// and under it, while Caps Lock is on during a password, a notice in the fill's colour.
final class EntryLayer {
    private(set) var entry: ScreenModel.Entry?
    /// Everything the layer covers (empty without a question).
    private(set) var rect = Rect.zero
    private var prompt: (image: TextImage, rect: Rect)?
    private var field: (mask: PixmanImage, rect: Rect)?
    private var echo: (image: TextImage, rect: Rect)?
    private var dots: [Rect] = []
    private var dotMask: PixmanImage?
    private var capsNotice: (image: TextImage, rect: Rect)?
    /// Rendered once, the first time Caps Lock is on.
    private var capsImage: TextImage?

    static let capsLockText = "Caps Lock is on"

    private let theme: Theme
    private let layout: Layout
    private let text: TextRenderer
    private let screen: Rect

    init(theme: Theme, layout: Layout, text: TextRenderer) {
        self.theme = theme
        self.layout = layout
        self.text = text
        screen = Rect(x: 0, y: 0, width: layout.width, height: layout.height)
    }

    /// Lays out `next` in the layout's question slot (from the top of the screen's safe
    /// area when the layout had no room to keep one); returns the rectangle that changed.
    func update(_ next: ScreenModel.Entry?) -> Rect {
        guard next != entry else { return .zero }
        let old = rect
        let promptChanged = next?.prompt != entry?.prompt
        entry = next
        guard let next else {
            prompt = nil
            field = nil
            echo = nil
            dots = []
            capsNotice = nil
            rect = .zero
            return old
        }
        let size = layout.messageSize
        let gap = max(1, layout.textGap / 2)
        let fieldHeight = Layout.fieldHeight(messageSize: size)
        var promptImage = promptChanged ? nil : prompt?.image
        if promptImage == nil, !next.prompt.isEmpty {
            promptImage = text.render(next.prompt, size: size, maxWidth: layout.textMaxWidth)
        }
        var notice: TextImage?
        if next.capsLock, case .hidden = next.field {
            if capsImage == nil { capsImage = text.render(Self.capsLockText, size: max(1, size * 4 / 5), maxWidth: layout.textMaxWidth) }
            notice = capsImage
        }
        let top = layout.question.isEmpty ? layout.safe.y : layout.question.y
        prompt = promptImage.map { image in
            (image, Rect(x: (layout.width - image.width) / 2, y: top, width: image.width, height: image.height))
        }
        let fieldTop = prompt.map { $0.rect.maxY + gap } ?? top
        let fieldWidth = layout.question.isEmpty ? min(layout.bar.width, layout.textMaxWidth) : layout.question.width
        let fieldRect = Rect(x: (layout.width - fieldWidth) / 2, y: fieldTop, width: fieldWidth, height: fieldHeight)
        if field?.rect != fieldRect {
            let mask = Shape.roundedRectMask(
                width: fieldRect.width, height: fieldRect.height,
                rect: (0, 0, Double(fieldRect.width), Double(fieldRect.height)),
                radius: min(Double(fieldHeight) / 2, max(layout.radius, 2 * layout.scale)))
            field = (mask, fieldRect)
        }
        layOutAnswer(next.field, in: fieldRect)
        capsNotice = notice.map { image in
            (image, Rect(x: (layout.width - image.width) / 2, y: fieldRect.maxY + gap, width: image.width, height: image.height))
        }
        rect = fieldRect.union(prompt?.rect ?? .zero).union(capsNotice?.rect ?? .zero).intersection(screen)
        return old.union(rect)
    }

    /// The answer inside the field: a dot per character typed for a password (as many as
    /// fit), the text itself otherwise.
    private func layOutAnswer(_ answer: ScreenModel.Entry.Field, in fieldRect: Rect) {
        let size = layout.messageSize
        let padding = fieldRect.height / 2
        echo = nil
        dots = []
        switch answer {
        case .hidden(let count):
            let diameter = max(2, Int((Double(size) * 0.55).rounded()))
            let step = diameter + max(2, diameter * 2 / 3)
            if dotMask?.width != diameter {
                dotMask = Shape.roundedRectMask(
                    width: diameter, height: diameter, rect: (0, 0, Double(diameter), Double(diameter)), radius: Double(diameter) / 2)
            }
            let fits = max(0, (fieldRect.width - 2 * padding + step - diameter) / step)
            let shown = min(count, fits)
            let total = shown * step - (shown > 0 ? step - diameter : 0)
            let x0 = fieldRect.x + (fieldRect.width - total) / 2
            let y = fieldRect.y + (fieldRect.height - diameter) / 2
            dots = (0..<shown).map { Rect(x: x0 + $0 * step, y: y, width: diameter, height: diameter) }
        case .shown(let answer):
            if !answer.isEmpty {
                let image = text.render(answer, size: size, maxWidth: max(1, fieldRect.width - 2 * padding))
                echo = (image, Rect(x: fieldRect.x + (fieldRect.width - image.width) / 2,
                                    y: fieldRect.y + (fieldRect.height - image.height) / 2,
                                    width: image.width, height: image.height))
            }
        }
    }

    /// Draws the layer over what is under it, within `clip`.
    func draw(into dst: PixmanImage, clip: Rect) {
        guard entry != nil, clip.intersects(rect) else { return }
        if let prompt { composite(prompt.image.mask, at: prompt.rect, color: theme.titleColor, into: dst, clip: clip) }
        if let field { composite(field.mask, at: field.rect, color: theme.trackColor.withAlpha(0.35), into: dst, clip: clip) }
        for dot in dots { composite(dotMask, at: dot, color: theme.fillColor, into: dst, clip: clip) }
        if let echo { composite(echo.image.mask, at: echo.rect, color: theme.titleColor, into: dst, clip: clip) }
        if let capsNotice { composite(capsNotice.image.mask, at: capsNotice.rect, color: theme.fillColor, into: dst, clip: clip) }
    }

    private func composite(_ mask: PixmanImage?, at rect: Rect, color: Color, into dst: PixmanImage, clip: Rect) {
        guard let mask else { return }
        let area = clip.intersection(rect).intersection(screen)
        guard !area.isEmpty else { return }
        dst.composite(PIXMAN_OP_OVER, source: PixmanImage(solid: color), mask: mask, rect: area,
                      maskOrigin: (area.x - rect.x, area.y - rect.y))
    }
}
