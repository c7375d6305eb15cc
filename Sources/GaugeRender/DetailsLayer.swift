import CPixman

/// The details view (Escape, as Plymouth's): the boot's messages so far, one line each
/// in the message colour, left-aligned from the top of the screen down to where the
/// splash's own text begins, the newest last; the oldest that do not fit are left out,
/// and each line is cut to the screen's width. The logo is not drawn while it shows.
final class DetailsLayer {
    private(set) var lines: [String]?
    /// Everything the layer covers (empty while hidden or with no line).
    private(set) var rect = Rect.zero
    private var placed: [(image: TextImage, rect: Rect)] = []

    private let theme: Theme
    private let layout: Layout
    private let text: TextRenderer

    init(theme: Theme, layout: Layout, text: TextRenderer) {
        self.theme = theme
        self.layout = layout
        self.text = text
    }

    /// Lays out `next` above `bottom`; returns the rectangle that changed.
    func update(_ next: [String]?, bottom: Int) -> Rect {
        guard next != lines else { return .zero }
        let old = rect
        lines = next
        placed = []
        rect = .zero
        guard let next, !next.isEmpty else { return old }
        let size = layout.messageSize
        let margin = max(layout.textGap, 1)
        let gap = max(1, Int((Double(size) * 0.2).rounded()))
        let lineHeight = text.render("", size: size).height + gap
        let room = max(0, (bottom - margin + gap) / max(lineHeight, 1))
        var y = margin
        for line in next.suffix(room) {
            let image = text.render(line, size: size, maxWidth: max(1, layout.width - 2 * margin))
            let at = Rect(x: margin, y: y, width: image.width, height: image.height)
            placed.append((image, at))
            rect = rect.union(at)
            y += image.height + gap
        }
        return old.union(rect)
    }

    /// Draws the lines over what is under them, within `clip`.
    func draw(into dst: PixmanImage, clip: Rect) {
        guard clip.intersects(rect) else { return }
        for (image, at) in placed {
            guard let mask = image.mask else { continue }
            let area = clip.intersection(at)
            guard !area.isEmpty else { continue }
            dst.composite(PIXMAN_OP_OVER, source: PixmanImage(solid: theme.messageColor), mask: mask, rect: area,
                          maskOrigin: (area.x - at.x, area.y - at.y))
        }
    }
}
