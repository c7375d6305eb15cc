/// Where everything goes on a screen of a given size and scale, in device pixels.
struct Layout: Equatable {
    let width: Int
    let height: Int
    let scale: Double
    let bar: Rect
    let radius: Double
    /// One stripe period in pixels.
    let stripePeriod: Int
    let labelSize: Int
    let labelInset: Int
    let titleSize: Int
    let messageSize: Int
    let textGap: Int
    /// Widest a title or message line may be before it is cut with an ellipsis.
    let textMaxWidth: Int
    /// The box style's panel (empty in the plain style) and the room inside its edges.
    let panel: Rect
    let padding: Int
    /// Blur of the track's inner shadow, in pixels.
    let shadowBlur: Double
    /// Width at each end of the fill where the shape varies; between them every column
    /// of the bar is the same but for the stripes.
    let capWidth: Int
    /// Side of the success or failure mark's square, and its distance from the bar.
    let markSize: Int
    let markGap: Int

    init(theme: Theme, width: Int, height: Int, scale: Double) {
        self.width = width
        self.height = height
        self.scale = scale
        func px(_ v: Double) -> Int { max(1, Int((v * scale).rounded())) }
        let box = theme.style == .box
        let padding = box ? px(theme.boxPadding) : 0
        self.padding = padding
        let barHeight = min(px(theme.barHeight), height)
        let inset = Int((theme.labelInset * scale).rounded())
        markSize = barHeight + 2 * inset
        markGap = 2 * inset
        // The bar is centred; the mark beside it needs the same room on both sides, so a
        // narrow screen (a terminal) shortens the bar rather than cutting the mark off.
        let markRoom = theme.showMark ? markGap + markSize : 0
        let barWidth = min(
            max(Double(width) * theme.barWidth, theme.barMinWidth * scale),
            theme.barMaxWidth * scale, Double(width - 2 * max(padding, markRoom)))
        let w = max(1, Int(barWidth.rounded()))
        let gap = Int((theme.textGap * scale).rounded())
        if box {
            // Title, badge, bar and message stacked in a panel centred on the screen.
            let titleHeight = Int((theme.titleSize * scale * 1.25).rounded(.up))
            let badgeHeight = Self.badgeHeight(labelSize: px(theme.labelSize), scale: scale)
            let messageHeight = Int((theme.messageSize * scale * 1.25).rounded(.up))
            let panelHeight = padding + titleHeight + gap + badgeHeight + gap / 2 + barHeight + gap + messageHeight + padding
            let panelWidth = w + 2 * padding
            panel = Rect(x: (width - panelWidth) / 2, y: max(0, (height - panelHeight) / 2), width: panelWidth, height: panelHeight)
            bar = Rect(x: panel.x + padding, y: panel.y + padding + titleHeight + gap + badgeHeight + gap / 2, width: w, height: barHeight)
        } else {
            let centerY = Int((Double(height) * theme.barCenter).rounded())
            // On a short screen the bar moves up so the message line below it stays on screen.
            let below = gap + Int((theme.messageSize * scale * 1.3).rounded(.up))
            let y = max(0, min(centerY - barHeight / 2, height - barHeight - below))
            bar = Rect(x: (width - w) / 2, y: y, width: w, height: barHeight)
            panel = .zero
        }
        radius = min(theme.cornerRadius * scale, Double(barHeight) / 2)
        stripePeriod = px(theme.stripeWidth)
        labelSize = px(theme.labelSize)
        labelInset = inset
        titleSize = px(theme.titleSize)
        messageSize = px(theme.messageSize)
        textGap = Int((theme.textGap * scale).rounded())
        textMaxWidth = box ? bar.width : max(1, width - 2 * px(16))
        shadowBlur = 2.5 * scale
        capWidth = Int((radius + 4 * shadowBlur).rounded(.up)) + 2
    }

    /// Height of the box style's value badge: the label with room around it.
    static func badgeHeight(labelSize: Int, scale: Double) -> Int {
        labelSize + 2 * Int((4 * scale).rounded()) + Int((Double(labelSize) * 0.25).rounded())
    }

    /// The fill's width in pixels for a value in 0...100.
    func fillWidth(for value: Double) -> Double {
        Double(bar.width) * min(max(value, 0), 100) / 100
    }
}
