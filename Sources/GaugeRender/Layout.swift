/// Where everything goes on a screen of a given size and scale, in device pixels: one
/// place computes it, once per screen size or theme, and every element's slot is kept
/// apart from the others and inside the screen's margin (with the theme's overscan).
///
/// Each element gets room for the most it can show: the title one line, the message two,
/// the bar's row the tallest of the bar, the success/failure mark and the indicator, the
/// question its prompt, field and Caps Lock notice. When the screen is too small for
/// all of it the layout gives way in this order, and says so in `notes` (one line for the
/// scale and gaps): the box style's panel widens to the safe area before its text is cut
/// (`Scene`), the logo shrinks (and goes when its shorter side would be under 16 pixels;
/// the box's panel moves down to give it room), the gaps between
/// elements narrow, the whole look is drawn at a smaller scale (down to 0.5), and at
/// last the title, the message and the question's reserved room are dropped; the bar and
/// its label always stay.
struct Layout: Equatable {
    let width: Int
    let height: Int
    /// The scale the look is drawn at: the one asked for, or less when it did not fit.
    let scale: Double
    /// The screen less its margin: nothing is drawn outside it.
    let safe: Rect
    private(set) var bar: Rect
    /// The bar once the work is finished and its success or failure mark shows: shorter
    /// by the mark and its gap at its right end (its left, with the label on the right),
    /// so that the bar and the mark together take the bar's place, centred as it is; nil
    /// when the bar is too short to give the mark room (then no mark shows).
    let finishedBar: Rect?
    /// The bar's row: the bar (with the mark at its end once finished) and the indicator over it.
    let row: Rect
    let radius: Double
    /// One stripe period in pixels.
    let stripePeriod: Int
    let labelSize: Int
    let labelInset: Int
    let titleSize: Int
    let messageSize: Int
    let textGap: Int
    /// Widest a title or message line may be before it is cut with an ellipsis (in the box
    /// style, the panel's room inside its padding once widened to the safe area).
    let textMaxWidth: Int
    /// The box style's panel for a message of one line (empty in the plain style), the
    /// panel a message of two lines grows it to, and the room inside its edges.
    let panel: Rect
    let panelMax: Rect
    let padding: Int
    /// Blur of the track's inner shadow, in pixels.
    let shadowBlur: Double
    /// Width at each end of the fill where the shape varies; between them every column
    /// of the bar is the same but for the stripes.
    let capWidth: Int
    /// Side of the success or failure mark's square, and its distance from the bar.
    let markSize: Int
    let markGap: Int
    /// Where the circles or ring indicator is drawn (centred on the bar).
    let indicator: Rect
    /// Top of the title's line (nil: no room for a title) and of the message's first line
    /// (nil: no room for a message).
    let titleTop: Int?
    let messageTop: Int?
    /// Room for a message's second line.
    let messageLines: Int
    /// The slot a question (prompt, field, notice) is laid out in.
    let question: Rect
    /// Where the logo is drawn (empty: none, or no room), and whether it stays while a
    /// question shows (it goes when the question needs its room; `Scene.questionNote`).
    let logo: Rect
    let logoWhileAsking: Bool
    /// What was shrunk or dropped to make everything fit, one line each, for the log.
    let notes: [String]

    /// Line heights the layout needs, from the fonts the scene draws with.
    struct Metrics {
        /// Height of a line of text at a pixel size (`bold` for the title and label).
        var lineHeight: (_ size: Int, _ bold: Bool) -> Int
        /// Width of a line of text at a pixel size.
        var textWidth: (_ text: String, _ size: Int, _ bold: Bool) -> Int
    }

    /// `logoSize` is the logo's size as decoded at `scale` (nil without a logo); `fixedLogo`
    /// a logo's place that is not the layout's to choose (the firmware's, where it drew it):
    /// it keeps its size and place, and the splash goes below it.
    init(theme: Theme, width: Int, height: Int, scale: Double, metrics: Metrics, logoSize: (width: Int, height: Int)? = nil,
         fixedLogo: Rect? = nil) {
        var notes: [String] = []
        var plan = Self.plan(theme: theme, width: width, height: height, scale: scale, metrics: metrics, below: fixedLogo, notes: &notes)
        if theme.style == .box, fixedLogo == nil, let logoSize, logoSize.width > 0, logoSize.height > 0 {
            // The logo's height as it would be drawn whole: at the plan's scale, narrowed to the safe area.
            let h = Double(logoSize.height) * plan.scale / scale
            let w = Double(logoSize.width) * plan.scale / scale
            plan.makeRoom(forLogo: Int((h * min(1, Double(plan.safe.width) / w)).rounded(.down)))
        }
        self.width = width
        self.height = height
        self.scale = plan.scale
        safe = plan.safe
        bar = plan.bar
        let markRoom = plan.markGap + plan.markSize
        if theme.showMark, plan.bar.width >= 2 * markRoom {
            let left = theme.style == .plain && theme.labelPosition == .right
            finishedBar = Rect(x: plan.bar.x + (left ? markRoom : 0), y: plan.bar.y, width: plan.bar.width - markRoom, height: plan.bar.height)
        } else {
            finishedBar = nil
        }
        row = plan.row
        radius = plan.radius
        stripePeriod = plan.stripePeriod
        labelSize = plan.labelSize
        labelInset = plan.inset
        titleSize = plan.titleSize
        messageSize = plan.messageSize
        textGap = plan.gap
        textMaxWidth = plan.textMaxWidth
        panel = plan.panel
        panelMax = plan.panelMax
        padding = plan.padding
        shadowBlur = 2.5 * plan.scale
        capWidth = Int((plan.radius + 4 * 2.5 * plan.scale).rounded(.up)) + 2
        markSize = plan.markSize
        markGap = plan.markGap
        indicator = plan.indicator
        titleTop = plan.titleTop
        messageTop = plan.messageTop
        messageLines = plan.messageLines

        var question = plan.question
        var logo = fixedLogo ?? .zero
        if fixedLogo == nil, let logoSize {
            logo = Self.logo(of: logoSize, plan: plan, theme: theme, width: width, height: height, scale: scale, notes: &notes)
        }
        if theme.style == .plain, !question.isEmpty, !logo.isEmpty {
            // The question below the logo when there is room between it and the title.
            question.y = max(question.y, min(logo.maxY + plan.gap, plan.splashTop - plan.gap - question.height))
        }
        self.logo = logo
        self.question = question
        logoWhileAsking = !question.isEmpty && !logo.intersects(question.insetBy(dx: 0, dy: -plan.gap))
        self.notes = notes
    }

    /// The first plan that fits: full gaps at the scale asked for, then narrower gaps,
    /// then smaller scales; at the least scale, the question, title and message dropped in
    /// turn until it fits. `notes` says what gave way.
    private static func plan(theme: Theme, width: Int, height: Int, scale: Double, metrics: Metrics, below: Rect?,
                             notes: inout [String]) -> Plan {
        var chosen: Plan?
        // Full gaps at the scale asked for, then narrower gaps, then smaller scales.
        var attempts: [(scale: Double, gaps: Double)] = [(scale, 1), (scale, 0.5)]
        var s = scale
        while s * 0.85 > leastScale + 1e-9 {
            s *= 0.85
            attempts.append((s, 0.5))
        }
        if scale > leastScale { attempts.append((leastScale, 0.5)) }
        for attempt in attempts {
            let plan = Plan(theme: theme, width: width, height: height, scale: attempt.scale, gapFactor: attempt.gaps, metrics: metrics,
                            drop: [], below: below)
            if plan.fits {
                chosen = plan
                if attempt.scale < scale {
                    notes.append("drawn at scale \(twoDecimals(attempt.scale)) instead of \(scale.shortText), gaps narrowed, to fit \(width)x\(height)")
                } else if attempt.gaps < 1 {
                    notes.append("gaps between elements narrowed to fit \(width)x\(height)")
                }
                break
            }
        }
        if chosen == nil {
            let least = attempts.last!
            var drop: Set<Plan.Element> = []
            for element in [Plan.Element.question, .title, .message] {
                drop.insert(element)
                let plan = Plan(theme: theme, width: width, height: height, scale: least.scale, gapFactor: least.gaps, metrics: metrics,
                                drop: drop, below: below)
                chosen = plan
                if plan.fits { break }
            }
            notes.append("drawn at scale \(twoDecimals(least.scale)) instead of \(scale.shortText), gaps narrowed, to fit \(width)x\(height)")
            for element in [Plan.Element.question, .title, .message] where drop.contains(element) {
                notes.append("\(element.rawValue) dropped: no room on \(width)x\(height)")
            }
        }
        return chosen!
    }

    /// The logo's place: centred at `logoCenter` within the room above the splash, shrunk
    /// (keeping its shape) to fit there, and gone (empty) when that leaves under 16 pixels.
    private static func logo(of logoSize: (width: Int, height: Int), plan: Plan, theme: Theme, width: Int, height: Int,
                             scale: Double, notes: inout [String]) -> Rect {
        guard logoSize.width > 0, logoSize.height > 0 else { return .zero }
        let question = plan.question
        let scaledBy = plan.scale / scale
        let natural = (w: max(1, Int((Double(logoSize.width) * scaledBy).rounded())),
                       h: max(1, Int((Double(logoSize.height) * scaledBy).rounded())))
        // In the plain style the question's slot is above the title: the logo leaves
        // room for it when it keeps at least half its size doing so; else it takes the
        // room and gives way while a question shows.
        let minimum = min(16 * plan.scale, Double(min(natural.w, natural.h)))
        let besideQuestionMinimum = max(minimum, Double(min(natural.w, natural.h)) / 2)
        func fitIn(_ bottom: Int) -> (room: Rect, fit: Double) {
            let room = Rect(x: plan.safe.x, y: plan.safe.y, width: plan.safe.width, height: bottom - plan.safe.y)
            let fit = min(1, Double(room.width) / Double(natural.w), Double(max(0, room.height)) / Double(natural.h))
            return (room, fit)
        }
        var (room, fit) = fitIn(plan.splashTop - plan.gap)
        if theme.style == .plain, !question.isEmpty {
            let besideQuestion = fitIn(plan.splashTop - 2 * plan.gap - question.height)
            if Double(min(natural.w, natural.h)) * besideQuestion.fit >= besideQuestionMinimum { (room, fit) = besideQuestion }
        }
        if Double(min(natural.w, natural.h)) * fit < minimum || room.height <= 0 {
            notes.append("logo dropped: \(logoSize.width)x\(logoSize.height) has no room above the splash on \(width)x\(height)")
            return .zero
        }
        let w = max(1, Int((Double(natural.w) * fit).rounded(.down)))
        let h = max(1, Int((Double(natural.h) * fit).rounded(.down)))
        if w != logoSize.width || h != logoSize.height, fit < 1 {
            notes.append("logo shrunk from \(logoSize.width)x\(logoSize.height) to \(w)x\(h) to fit \(width)x\(height)")
        }
        let cy = Int((Double(height) * theme.logoCenter).rounded())
        let y = min(max(room.y, cy - h / 2), room.maxY - h)
        return Rect(x: (width - w) / 2, y: y, width: w, height: h)
    }

    /// The smallest scale the layout draws at to make room (text of 8 pixels at the
    /// default sizes).
    static let leastScale = 0.5

    private static func twoDecimals(_ v: Double) -> String { ((v * 100).rounded() / 100).shortText }

    /// Height of the box style's value badge: the label with room around it.
    static func badgeHeight(labelSize: Int, scale: Double) -> Int {
        labelSize + 2 * Int((4 * scale).rounded()) + Int((Double(labelSize) * 0.25).rounded())
    }

    /// Height of a question's slot: the prompt, the field and the Caps Lock notice.
    static func questionHeight(messageSize: Int, gap: Int, metrics: Metrics) -> Int {
        let g = max(1, gap / 2)
        return metrics.lineHeight(messageSize, false) + g + fieldHeight(messageSize: messageSize) + g
            + metrics.lineHeight(max(1, messageSize * 4 / 5), false)
    }

    static func fieldHeight(messageSize: Int) -> Int { Int((Double(messageSize) * 1.9).rounded()) }

    /// This layout with the bar as it is once finished (`finishedBar`).
    var whenFinished: Layout {
        var finished = self
        finished.bar = finishedBar ?? bar
        return finished
    }

    /// The fill's width in pixels for a value in 0...100.
    func fillWidth(for value: Double) -> Double {
        Double(bar.width) * min(max(value, 0), 100) / 100
    }

    /// Every element's slot at one scale and gap width, and whether they all fit.
    private struct Plan {
        enum Element: String { case question, title, message }

        var scale: Double
        var safe = Rect.zero
        var bar = Rect.zero
        var row = Rect.zero
        var radius = 0.0
        var stripePeriod = 1
        var labelSize = 1
        var inset = 0
        var titleSize = 1
        var messageSize = 1
        var gap = 0
        var textMaxWidth = 1
        var panel = Rect.zero
        var panelMax = Rect.zero
        var padding = 0
        var markSize = 1
        var markGap = 0
        var indicator = Rect.zero
        var titleTop: Int?
        var messageTop: Int?
        var messageLines = 2
        var question = Rect.zero
        /// Top of the splash (title, or the box's panel): the logo stays above it.
        var splashTop = 0
        var fits = true

        /// `fixed`: a rectangle the splash stays below (the firmware's logo).
        init(theme: Theme, width: Int, height: Int, scale: Double, gapFactor: Double, metrics: Metrics, drop: Set<Element>, below fixed: Rect?) {
            self.scale = scale
            let box = theme.style == .box
            let marginX = max(px(8), Int((Double(width) * theme.overscan).rounded()))
            let marginY = max(px(8), Int((Double(height) * theme.overscan).rounded()))
            safe = Rect(x: marginX, y: marginY, width: width - 2 * marginX, height: height - 2 * marginY)
            guard !safe.isEmpty else {
                safe = Rect(x: 0, y: 0, width: width, height: height)
                fits = false
                bar = Rect(x: 0, y: 0, width: width, height: min(height, px(theme.barHeight)))
                row = bar
                return
            }
            padding = box ? px(theme.boxPadding) : 0
            let top = fixed.map { max(safe.y, $0.maxY + Int((theme.textGap * scale * gapFactor).rounded())) } ?? safe.y
            let barHeight = min(px(theme.barHeight), safe.height)
            inset = Int((theme.labelInset * scale).rounded())
            markSize = barHeight + 2 * inset
            markGap = 2 * inset
            labelSize = px(theme.labelSize)
            titleSize = px(theme.titleSize)
            messageSize = px(theme.messageSize)
            stripePeriod = px(theme.stripeWidth)
            gap = Int((theme.textGap * scale * gapFactor).rounded())
            let labelLine = metrics.lineHeight(labelSize, true)
            let showLabel = theme.showLabel
            let labelSide = !box && showLabel && (theme.labelPosition == .left || theme.labelPosition == .right)
            let labelWidth = labelSide
                ? 2 * inset + metrics.textWidth(LabelFormat.text(theme.labelFormat, value: 100, max: 100), labelSize, true) : 0
            // The mark takes the bar's own room once finished (`finishedBar`): none beside it.
            let side = max(padding, labelWidth)
            let barWidth = min(
                max(Double(width) * theme.barWidth, theme.barMinWidth * scale),
                theme.barMaxWidth * scale, Double(safe.width - 2 * side))
            let w = Int(barWidth.rounded())
            if w < px(16) { fits = false }
            let w1 = max(1, w)
            var indicatorSide = theme.indeterminateStyle == .barberPole ? 0 : max(8, px(theme.indicatorSize))
            indicatorSide = min(indicatorSide, safe.width)
            let rowHeight = max(barHeight, theme.showMark ? markSize : 0, indicatorSide, labelSide ? labelLine : 0)
            let titleLine = drop.contains(.title) ? 0 : metrics.lineHeight(titleSize, true)
            let messageLine = metrics.lineHeight(messageSize, false)
            messageLines = drop.contains(.message) ? 0 : 2
            let messageHeight = messageLines == 0 ? 0 : 2 * messageLine + Int((Double(messageSize) * 0.2).rounded())
            let questionHeight = drop.contains(.question) ? 0 : Layout.questionHeight(messageSize: messageSize, gap: gap, metrics: metrics)
            radius = min(theme.cornerRadius * scale, Double(barHeight) / 2)

            let heights = Heights(
                top: top, row: rowHeight, title: titleLine, messageLine: messageLine, message: messageHeight,
                question: questionHeight, label: showLabel ? labelLine : nil)
            if box {
                placeInPanel(heights, barWidth: w1, width: width, height: height)
            } else {
                placeOnScreen(heights, barWidth: w1, theme: theme, width: width, height: height)
            }
            bar = Rect(x: (width - w1) / 2, y: row.y + (row.height - barHeight) / 2, width: w1, height: barHeight)
            indicator = Rect(x: bar.x + bar.width / 2 - indicatorSide / 2, y: bar.y + bar.height / 2 - indicatorSide / 2,
                             width: indicatorSide, height: indicatorSide)
        }

        /// `v` pixels at this plan's scale, at least 1.
        private func px(_ v: Double) -> Int { max(1, Int((v * scale).rounded())) }

        /// The heights of the splash's rows at this plan's scale (0: dropped), and `top`,
        /// where the splash may start.
        struct Heights {
            var top: Int
            var row: Int
            var title: Int
            var messageLine: Int
            /// The message's two lines (0 when dropped).
            var message: Int
            var question: Int
            /// A line of the label; nil without one.
            var label: Int?
        }

        /// The box style: title, value badge, bar row and message inside a panel
        /// centred on the screen, the question below it.
        private mutating func placeInPanel(_ h: Heights, barWidth: Int, width: Int, height: Int) {
            // The panel widens for a title or message wider than the bar (`Scene`), up to the safe area.
            textMaxWidth = max(barWidth, safe.width - 2 * padding)
            let badgeHeight = h.label != nil ? Layout.badgeHeight(labelSize: labelSize, scale: scale) : 0
            let titleBlock = h.title == 0 ? 0 : h.title + gap
            let oneLine = messageLines == 0 ? 0 : gap + h.messageLine
            let twoLines = messageLines == 0 ? 0 : gap + h.message
            let inner = titleBlock + badgeHeight + gap / 2 + h.row
            let panelHeight = padding + inner + oneLine + padding
            let panelMaxHeight = padding + inner + twoLines + padding
            let panelWidth = barWidth + 2 * padding
            let below = h.question == 0 ? 0 : gap + h.question
            if panelMaxHeight + below > safe.maxY - h.top || panelWidth > safe.width { fits = false }
            let centred = (height - panelHeight) / 2
            let y = max(h.top, min(centred, safe.maxY - below - panelMaxHeight))
            panel = Rect(x: (width - panelWidth) / 2, y: y, width: panelWidth, height: panelHeight)
            panelMax = Rect(x: panel.x, y: y, width: panelWidth, height: panelMaxHeight)
            let rowTop = y + padding + titleBlock + badgeHeight + gap / 2
            row = Rect(x: panel.x, y: rowTop, width: panelWidth, height: h.row)
            titleTop = h.title == 0 ? nil : y + padding
            messageTop = messageLines == 0 ? nil : row.maxY + gap
            if h.question > 0 {
                question = Rect(x: (width - barWidth) / 2, y: panelMax.maxY + gap, width: barWidth, height: h.question)
        }
            splashTop = panel.y
        }

        /// The box style: the panel lowered (staying in the safe area) to give a logo of
        /// `logoHeight` its room above it, keeping the question's room below; when that
        /// leaves the logo under half its height, the question goes above the panel, in
        /// the logo's place (the logo gives way while a question shows).
        mutating func makeRoom(forLogo logoHeight: Int) {
            let wanted = safe.y + logoHeight + gap
            let questionRoom = question.isEmpty ? 0 : gap + question.height
            var y = min(max(panel.y, wanted), safe.maxY - questionRoom - panelMax.height)
            let above = min(max(panel.y, wanted), safe.maxY - panelMax.height)
            let questionAbove = questionRoom > 0 && y - gap - safe.y < logoHeight / 2 && above - gap - safe.y >= question.height
            if questionAbove { y = above }
            guard y > panel.y else { return }
            let dy = y - panel.y
            panel.y += dy
            panelMax.y += dy
            row.y += dy
            bar.y += dy
            indicator.y += dy
            titleTop = titleTop.map { $0 + dy }
            messageTop = messageTop.map { $0 + dy }
            splashTop += dy
            question.y = questionAbove ? panel.y - gap - question.height : question.y + dy
        }

        /// The plain style: the bar row at `barCenter`, the title above it, the message
        /// below, the question above the title.
        private mutating func placeOnScreen(_ h: Heights, barWidth: Int, theme: Theme, width: Int, height: Int) {
            textMaxWidth = max(1, safe.width - 2 * px(8))
            let labelAbove = theme.labelPosition == .above ? h.label.map { $0 + inset } ?? 0 : 0
            let labelBelow = theme.labelPosition == .below ? h.label.map { $0 + inset } ?? 0 : 0
            let above = (h.title == 0 ? 0 : h.title + gap) + labelAbove
            let below = labelBelow + (h.message == 0 ? 0 : gap + h.message)
            let asking = h.question == 0 ? 0 : h.question + gap
            // A question above the title needs no room when a fixed logo is above the
            // splash: it goes between the two when there is room, else the logo gives way.
            let asked = h.top > safe.y ? 0 : asking
            if asked + above + h.row + below > safe.maxY - h.top { fits = false }
            let centreY = Int((Double(height) * theme.barCenter).rounded())
            let rowTop = max(h.top + asked + above, min(centreY - h.row / 2, safe.maxY - below - h.row))
            row = Rect(x: safe.x, y: rowTop, width: safe.width, height: h.row)
            titleTop = h.title == 0 ? nil : rowTop - labelAbove - gap - h.title
            messageTop = h.message == 0 ? nil : row.maxY + labelBelow + gap
            splashTop = rowTop - above
            if h.question > 0 {
                // Where the eye is: about the middle of the screen, above the title.
                let top = max(safe.y, min(height / 2 - h.question / 2, splashTop - gap - h.question))
                question = Rect(x: (width - barWidth) / 2, y: top, width: barWidth, height: h.question)
        }
        }
    }
}
