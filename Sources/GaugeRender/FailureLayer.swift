import CPixman
import GaugeProtocol

/// The failure screen's box (`failure`, docs/protocol.md): a rounded panel in the box
/// colour with a band of the failure colour along its top, the title in bold in the
/// failure colour, the summary in the title colour, and the producer's detail lines in
/// the message colour, smaller. It takes the room above the splash's own text (the
/// logo's and the details view's, which do not show meanwhile), centred there, no
/// wider than it needs; where that room cannot hold its title and summary (a small
/// panel, the box style's centred panel) it takes the splash's title's room too, down to
/// the bar's row (the scene's part). The bar, its label and the message stay. What does
/// not fit gives way: the oldest detail lines first (a line says how many are not shown,
/// counting those the daemon dropped), then the summary; with no room for the title there
/// is no box. Each line is cut with an ellipsis at the box's inner width.
///
/// Beside the box, once it has detail lines and where the room holds one at three pixels a
/// module (times the layout's scale), a QR code carries the same words as plain text (`QRCode.failureReport`:
/// the title, the summary, the newest lines that fit in version 20), dark on a light
/// square, for a phone's camera; the box and the code are centred together. Without
/// libqrencode (`codeProblem` says why) or room, the box shows alone.
final class FailureLayer {
    private(set) var report: FailureReport?
    /// The box (empty while hidden or without room).
    private(set) var rect = Rect.zero
    /// Every text placed, for the layout tests: no two overlap, all inside `rect`.
    private(set) var textRects: [Rect] = []
    private var placed: [(image: TextImage, rect: Rect, color: Color)] = []
    private var mask: PixmanImage?
    private var accent = Rect.zero
    private var bottom = 0
    /// The QR code's square, quiet zone included (empty without one).
    private(set) var codeRect = Rect.zero
    private(set) var code: QRCode?
    /// Why no QR code can be made (libqrencode missing or failing); nil otherwise.
    private(set) var codeProblem: String?
    private var codeMask: PixmanImage?

    private let theme: Theme
    private let layout: Layout
    private let text: TextRenderer
    private let boxColor: Color

    init(theme: Theme, layout: Layout, text: TextRenderer, screenColor: Color) {
        self.theme = theme
        self.layout = layout
        self.text = text
        boxColor = theme.boxColor.over(screenColor)
    }

    /// Pixels at the layout's scale, at least 1.
    private func px(_ v: Double) -> Int { max(1, Int((v * layout.scale).rounded())) }

    /// Lays out `next` between the safe area's top and `bottom`; returns the rectangle
    /// that changed.
    func update(_ next: FailureReport?, bottom: Int) -> Rect {
        guard next != report || (next != nil && bottom != self.bottom) else { return .zero }
        let old = rect.union(codeRect)
        report = next
        self.bottom = bottom
        placed = []
        textRects = []
        rect = .zero
        mask = nil
        codeRect = .zero
        code = nil
        codeMask = nil
        guard let next else { return old }
        let room = Rect(x: layout.safe.x, y: layout.safe.y, width: layout.safe.width, height: bottom - layout.safe.y)
        let band = px(4)
        let headHeight = head(of: next)
        // The padding narrows, down to a pixel, before the title and summary give way.
        let padding = max(1, min(px(16), room.width / 16, (room.height - band - headHeight) / 2))
        let widest = min(room.width, max(layout.bar.width, px(640)))
        let codeSide = placeCode(for: next, room: room, besideWidth: widest)
        let codeGap = codeSide > 0 ? px(24) : 0
        let innerWidth = min(room.width - codeSide - codeGap, widest) - 2 * padding
        guard innerWidth > 0 else { return old }
        let lines = content(of: next, innerWidth: innerWidth, innerHeight: room.height - 2 * padding - band)
        guard !lines.isEmpty else { return old }
        let gap = max(1, layout.textGap / 2)
        let width = min(room.width, (lines.map { $0.image.width }.max() ?? 0) + 2 * padding)
        let height = band + 2 * padding + lines.reduce(0) { $0 + $1.image.height + ($1.gapBefore ? gap : 0) }
        let left = room.x + (room.width - width - codeGap - codeSide) / 2
        rect = Rect(x: left, y: room.y + (room.height - height) / 2, width: width, height: height)
        if codeSide > 0 {
            codeRect = Rect(x: rect.maxX + codeGap, y: room.y + (room.height - codeSide) / 2, width: codeSide, height: codeSide)
        }
        accent = Rect(x: rect.x, y: rect.y, width: rect.width, height: band)
        mask = Shape.roundedRectMask(width: width, height: height, rect: (0, 0, Double(width), Double(height)),
                                     radius: min(theme.boxRadius * layout.scale, Double(min(width, height)) / 4))
        var y = rect.y + band + padding
        for line in lines {
            if line.gapBefore { y += gap }
            let at = Rect(x: rect.x + padding, y: y, width: line.image.width, height: line.image.height)
            placed.append((line.image, at, line.color))
            textRects.append(at)
            y = at.maxY
        }
        return old.union(rect).union(codeRect)
    }

    /// Makes the QR code for `report` as large as the room beside a box `besideWidth` wide
    /// holds at three pixels a module (scaled: a phone's photo of the screen resolves it);
    /// returns its side in pixels, 0 without one.
    private func placeCode(for report: FailureReport, room: Rect, besideWidth: Int) -> Int {
        // Only with detail lines: a code of the title and summary alone, which the box says,
        // helps nobody, and the first frame of a failure comes sooner without libqrencode's
        // load and encoding (a failed boot's script sends the lines a moment later).
        guard !report.lines.isEmpty else { return 0 }
        let side = min(room.height, room.width - besideWidth - px(24))
        let modules = side / px(3) - 2 * QRCode.quietZone
        // Version 5 (37 modules) at least.
        guard modules >= 37 else { return 0 }
        switch QRCode.failureReport(report, maxVersion: min(QRCode.maxVersion, (modules - 17) / 4)) {
        case .code(let made):
            codeProblem = nil
            code = made
            codeMask = made.mask(module: px(3))
            return (made.width + 2 * QRCode.quietZone) * px(3)
        case .tooLong:
            return 0
        case .failed(let why):
            codeProblem = why
            return 0
        }
    }

    /// Height of the title and the summary with the gap between them.
    private func head(of report: FailureReport) -> Int {
        report.summary.isEmpty ? lineHeights.title : lineHeights.title + max(1, layout.textGap / 2) + lineHeights.summary
    }

    private lazy var lineHeights = (title: text.render("", size: layout.titleSize, bold: true).height,
                                    summary: text.render("", size: layout.messageSize).height)

    /// Whether the room above `bottom` holds the box's title and summary.
    func holdsHead(of report: FailureReport, bottom: Int) -> Bool {
        bottom - layout.safe.y >= px(4) + 2 + head(of: report)
    }

    private struct Line {
        var image: TextImage
        var color: Color
        /// A gap above it (between the title, the summary and the details).
        var gapBefore: Bool
    }

    /// The lines that fit in `innerHeight`: the title, the summary, then the note of lines
    /// left out and the newest detail lines; empty when not even the title fits.
    private func content(of report: FailureReport, innerWidth: Int, innerHeight: Int) -> [Line] {
        let gap = max(1, layout.textGap / 2)
        let title = text.render(report.shownTitle, size: layout.titleSize, bold: true, maxWidth: innerWidth)
        guard title.height <= innerHeight else { return [] }
        var lines = [Line(image: title, color: theme.failureColor, gapBefore: false)]
        var left = innerHeight - title.height
        if !report.summary.isEmpty {
            let summary = text.render(report.summary, size: layout.messageSize, maxWidth: innerWidth)
            guard summary.height + gap <= left else { return lines }
            lines.append(Line(image: summary, color: theme.titleColor, gapBefore: true))
            left -= summary.height + gap
        }
        let size = max(1, layout.messageSize * 7 / 8)
        let lineHeight = text.render("", size: size).height
        let details = report.lines
        guard !details.isEmpty, lineHeight > 0, left >= gap + lineHeight else { return lines }
        var shown = min(details.count, (left - gap) / lineHeight)
        if shown < details.count || report.dropped > 0 {
            // The note takes a line of its own.
            shown = min(shown, (left - gap) / lineHeight - 1)
            let omitted = report.dropped + details.count - max(0, shown)
            let noun = omitted == 1 ? "line" : "lines"
            let note = text.render("\u{2026} \(omitted) earlier \(noun) not shown", size: size, maxWidth: innerWidth)
            lines.append(Line(image: note, color: theme.messageColor.withAlpha(0.7), gapBefore: true))
        }
        var first = lines.count == (report.summary.isEmpty ? 1 : 2)
        for line in details.suffix(max(0, shown)) {
            lines.append(Line(image: text.render(line, size: size, maxWidth: innerWidth), color: theme.messageColor, gapBefore: first))
            first = false
        }
        return lines
    }

    /// Draws the box over what is under it, within `clip`.
    func draw(into dst: PixmanImage, clip: Rect) {
        guard let mask, clip.intersects(rect.union(codeRect)) else { return }
        let area = clip.intersection(rect)
        dst.composite(PIXMAN_OP_OVER, source: PixmanImage(solid: boxColor), mask: mask, rect: area,
                      maskOrigin: (area.x - rect.x, area.y - rect.y))
        let band = clip.intersection(accent)
        dst.composite(PIXMAN_OP_OVER, source: PixmanImage(solid: theme.failureColor), mask: mask, rect: band,
                      maskOrigin: (band.x - rect.x, band.y - rect.y))
        for (image, at, color) in placed {
            guard let glyphs = image.mask else { continue }
            let part = clip.intersection(at)
            guard !part.isEmpty else { continue }
            dst.composite(PIXMAN_OP_OVER, source: PixmanImage(solid: color), mask: glyphs, rect: part,
                          maskOrigin: (part.x - at.x, part.y - at.y))
        }
        if let codeMask, clip.intersects(codeRect) {
            let area = clip.intersection(codeRect)
            dst.fill(area, color: .white)
            dst.composite(PIXMAN_OP_OVER, source: PixmanImage(solid: .black), mask: codeMask, rect: area,
                          maskOrigin: (area.x - codeRect.x, area.y - codeRect.y))
        }
    }
}
