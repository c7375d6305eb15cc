import CPixman
import GaugeProtocol

/// The scene's lines of text: title, message and the percentage label (inside the fill,
/// past its head, or the box style's badge), each drawn once into a mask and placed; a
/// message split into its lines.
extension Scene {
    /// The lines of a message: split at line breaks, each without the blanks at its ends,
    /// empty lines left out, the third and further lines joined to the second with spaces.
    /// A message without a break is one line as it is.
    package static func messageLines(_ value: String) -> [String] {
        let isBreak: (Unicode.Scalar) -> Bool = { $0 == Request.lineBreak || $0 == "\u{2029}" }
        guard value.unicodeScalars.contains(where: isBreak) else { return [value] }
        var lines: [String] = []
        var line = String.UnicodeScalarView()
        for scalar in value.unicodeScalars {
            if isBreak(scalar) {
                if let kept = trimmedLine(line) { lines.append(kept) }
                line = String.UnicodeScalarView()
            } else {
                line.append(scalar)
            }
        }
        if let kept = trimmedLine(line) { lines.append(kept) }
        guard lines.count > 2 else { return lines }
        return [lines[0], lines[1...].joined(separator: " ")]
    }

    /// `line` without blanks at its ends; nil when nothing else is left.
    private static func trimmedLine(_ line: String.UnicodeScalarView) -> String? {
        let blank: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = line.firstIndex(where: { !blank($0) }), let last = line.lastIndex(where: { !blank($0) }) else { return nil }
        return String(String.UnicodeScalarView(line[first...last]))
    }

    struct TextLine {
        var text = ""
        var image: TextImage?
        var rect = Rect.zero
    }

    func updateText(
        _ line: inout TextLine, _ value: String, render: (String) -> TextImage, place: (TextImage) -> Rect
    ) -> Rect {
        guard value != line.text || (line.image == nil && !value.isEmpty) else { return .zero }
        let old = line.rect
        line.text = value
        if value.isEmpty {
            line.image = nil
            line.rect = .zero
        } else {
            let image = render(value)
            line.image = image
            line.rect = place(image).intersection(Rect(x: 0, y: 0, width: width, height: height))
        }
        return old.union(line.rect)
    }

    /// The box style's value badge: the label on a pill of the fill colour, above the
    /// bar and centred on the fill's head (kept within the bar's span).
    func updateBadge(image: TextImage, old: Rect) -> Rect {
        let b = barLayout.bar
        let padX = Int((8 * layout.scale).rounded())
        let badgeHeight = Layout.badgeHeight(labelSize: layout.labelSize, scale: layout.scale)
        let badgeWidth = image.width + 2 * padX
        let head = b.x + bar.fillWidth
        let x = min(max(b.x, head - badgeWidth / 2), b.maxX - badgeWidth)
        let rect = Rect(x: x, y: b.y - layout.textGap / 2 - badgeHeight, width: badgeWidth, height: badgeHeight)
        if badge?.rect.width != badgeWidth || badge?.rect.height != badgeHeight {
            let mask = Shape.roundedRectMask(width: badgeWidth, height: badgeHeight,
                                             rect: (0, 0, Double(badgeWidth), Double(badgeHeight)), radius: Double(badgeHeight) / 2)
            badge = (mask, rect)
        } else if let mask = badge?.mask {
            badge = (mask, rect)
        }
        let fill = theme.fillColor(for: state)
        labelColor = fill.textColor(alpha: max(theme.labelAlpha, 0.8))
        label.rect = Rect(x: rect.x + padX, y: rect.y + (badgeHeight - image.height) / 2, width: image.width, height: image.height)
        bar.setLabel(mask: nil, color: labelColor, rect: .zero)
        return old.union(rect)
    }

    /// Room the label takes between the bar and the title (above) or message (below).
    func labelClearance(_ side: LabelPosition) -> Int {
        guard theme.style == .plain, theme.showLabel, theme.labelPosition == side else { return 0 }
        return labelLineHeight + layout.labelInset
    }

    /// The percentage label: right-aligned inside the fill, or just past its head when the
    /// fill is too short to hold it; black or white, whichever contrasts with what is under it.
    func updateLabel(shown: Double, hidden: Bool) -> Rect {
        if !theme.showLabel || hidden { return removeLabel() }
        guard shown != labelValue else { return .zero }
        labelValue = shown
        let newText = LabelFormat.text(theme.labelFormat, value: shown, max: 100)
        let old = label.rect
        // New text in the same place and colour (39% → 40% with a fill that did not grow
        // a pixel) must still reach the bar and the screen.
        let textChanged = newText != label.text || label.image == nil
        if textChanged {
            label.text = newText
            label.image = text.render(newText, size: layout.labelSize, bold: true, maxWidth: barLayout.bar.width)
        }
        guard let image = label.image, image.width > 0 else {
            label.rect = .zero
            bar.setLabel(mask: nil, color: labelColor, rect: .zero)
            return old
        }
        if theme.style == .box {
            return updateBadge(image: image, old: old.union(badge?.rect ?? .zero))
        }
        let (rect, color) = labelPlacement(width: image.width, height: image.height)
        guard textChanged || rect != label.rect || color != labelColor else { return .zero }
        label.rect = rect
        labelColor = color
        if theme.labelPosition == .inside {
            bar.setLabel(mask: image.mask, color: color, rect: rect)
        }
        return old.union(rect)
    }

    /// The label gone (hidden, or `label=off`); the area it and the badge covered.
    func removeLabel() -> Rect {
        guard label.image != nil || !label.rect.isEmpty || badge != nil else { return .zero }
        let old = label.rect.union(badge?.rect ?? .zero)
        badge = nil
        label = TextLine()
        labelValue = -1
        bar.setLabel(mask: nil, color: labelColor, rect: .zero)
        return old
    }

    /// Where a label of `w` by `h` pixels goes for the theme's label position, and its
    /// colour.
    func labelPlacement(width w: Int, height h: Int) -> (rect: Rect, color: Color) {
        let b = barLayout.bar
        let inset = layout.labelInset
        let centredY = b.y + (b.height - h) / 2
        let color: Color
        let rect: Rect
        switch theme.labelPosition {
        case .inside:
            let fillRight = b.x + bar.fillWidth
            var x = fillRight - inset - w
            let onFill = x >= b.x + inset
            if !onFill { x = fillRight + inset }
            let under = onFill ? theme.fillColor(for: state) : theme.trackColor
            color = under.textColor(alpha: theme.labelAlpha)
            rect = Rect(x: x, y: centredY, width: w, height: h)
        case .above, .below, .left, .right:
            color = (theme.background.isLight ? Color.black : Color.white).withAlpha(theme.labelAlpha)
            switch theme.labelPosition {
            case .above: rect = Rect(x: b.maxX - w, y: b.y - inset - h, width: w, height: h)
            case .below: rect = Rect(x: b.maxX - w, y: b.maxY + inset, width: w, height: h)
            case .left: rect = Rect(x: b.x - 2 * inset - w, y: centredY, width: w, height: h)
            default: rect = Rect(x: b.maxX + 2 * inset, y: centredY, width: w, height: h)
            }
        }
        return (rect, color)
    }

    func draw(_ line: TextLine, color: Color, into dst: PixmanImage, clip: Rect) {
        guard let mask = line.image?.mask else { return }
        let area = clip.intersection(line.rect)
        guard !area.isEmpty else { return }
        dst.composite(PIXMAN_OP_OVER, source: PixmanImage(solid: color), mask: mask, rect: area,
                      maskOrigin: (area.x - line.rect.x, area.y - line.rect.y))
    }
}
