import CPixman

/// The bar's cached images, built once per theme and layout: the track with its inner
/// shadow, the striped fill tile, the fill and outline masks (rebuilt when the fill's width
/// changes), and the interior tile that lets a frame of moving stripes be one composite.
final class BarLayers {
    let layout: Layout
    private let theme: Theme
    private let track: PixmanImage
    /// Gradient plus stripes at phase 0, one or more stripe periods wide, repeating.
    private let fillTile: PixmanImage
    /// Background, track, fill and outline of one interior column, with stripes; repeating.
    private let interiorTile: PixmanImage
    private let outlineColor: PixmanImage
    private var fillMask: PixmanImage?
    private var outlineMask: PixmanImage?
    private(set) var fillWidth = 0.0

    init(theme: Theme, layout: Layout) {
        self.theme = theme
        self.layout = layout
        let bar = layout.bar
        let tileWidth = layout.stripePeriod * max(1, (512 + layout.stripePeriod - 1) / layout.stripePeriod)
        track = Self.makeTrack(theme: theme, layout: layout)
        fillTile = Self.makeFillTile(theme: theme, layout: layout, width: tileWidth)
        pixman_image_set_repeat(fillTile.raw, PIXMAN_REPEAT_NORMAL)
        outlineColor = PixmanImage(solid: theme.fillColor.darker.darker)

        let (fullFill, fullOutline) = Self.makeFillMasks(layout: layout, width: Double(bar.width), outline: theme.outline)
        interiorTile = PixmanImage(format: PIXMAN_a8r8g8b8, width: tileWidth, height: bar.height)
        let tileRect = Rect(x: 0, y: 0, width: tileWidth, height: bar.height)
        interiorTile.fill(tileRect, color: theme.background)
        let column = bar.width / 2
        func repeatingColumn(_ image: PixmanImage, format: pixman_format_code_t) -> PixmanImage {
            let col = PixmanImage(format: format, width: 1, height: bar.height)
            col.composite(PIXMAN_OP_SRC, source: image, rect: Rect(x: 0, y: 0, width: 1, height: bar.height), sourceOrigin: (column, 0))
            pixman_image_set_repeat(col.raw, PIXMAN_REPEAT_NORMAL)
            return col
        }
        interiorTile.composite(PIXMAN_OP_OVER, source: repeatingColumn(track, format: PIXMAN_a8r8g8b8), rect: tileRect)
        interiorTile.composite(PIXMAN_OP_OVER, source: fillTile, mask: repeatingColumn(fullFill, format: PIXMAN_a8), rect: tileRect)
        if let fullOutline {
            interiorTile.composite(PIXMAN_OP_OVER, source: outlineColor, mask: repeatingColumn(fullOutline, format: PIXMAN_a8), rect: tileRect)
        }
        pixman_image_set_repeat(interiorTile.raw, PIXMAN_REPEAT_NORMAL)
    }

    /// The fill's screen rectangle (empty at 0).
    var fillRect: Rect {
        let bar = layout.bar
        return Rect(x: bar.x, y: bar.y, width: Int(fillWidth.rounded(.up)), height: bar.height)
    }

    /// Where every column looks the same but for the stripes: one composite per frame.
    var interiorRect: Rect {
        let bar = layout.bar
        let x0 = bar.x + layout.capWidth
        let x1 = bar.x + Int(fillWidth) - layout.capWidth
        return Rect(x: x0, y: bar.y, width: x1 - x0, height: bar.height)
    }

    func setFillWidth(_ width: Double) {
        let w = min(max(0, (width * 8).rounded() / 8), Double(layout.bar.width))
        guard w != fillWidth || (fillMask == nil && w > 0) else { return }
        fillWidth = w
        if w > 0 {
            (fillMask, outlineMask) = Self.makeFillMasks(layout: layout, width: w, outline: theme.outline)
        } else {
            fillMask = nil
            outlineMask = nil
        }
    }

    /// Draws the bar over `clip` (screen coordinates), background included, stripes at `phase`.
    func draw(into dst: PixmanImage, clip: Rect, phase: Int) {
        let bar = layout.bar
        let area = clip.intersection(bar)
        guard !area.isEmpty else { return }
        let interior = area.intersection(interiorRect)
        let sourceX = { (x: Int) in x - bar.x - phase }
        for part in area.subtracting(interior) {
            dst.fill(part, color: theme.background)
            dst.composite(PIXMAN_OP_OVER, source: track, rect: part, sourceOrigin: (part.x - bar.x, part.y - bar.y))
            let filled = part.intersection(fillRect)
            if let fillMask, !filled.isEmpty {
                let maskOrigin = (filled.x - bar.x, filled.y - bar.y)
                dst.composite(PIXMAN_OP_OVER, source: fillTile, mask: fillMask, rect: filled,
                              sourceOrigin: (sourceX(filled.x), filled.y - bar.y), maskOrigin: maskOrigin)
                if let outlineMask {
                    dst.composite(PIXMAN_OP_OVER, source: outlineColor, mask: outlineMask, rect: filled, maskOrigin: maskOrigin)
                }
            }
        }
        if !interior.isEmpty {
            dst.composite(PIXMAN_OP_SRC, source: interiorTile, rect: interior,
                          sourceOrigin: (sourceX(interior.x), interior.y - bar.y))
        }
    }

    // MARK: - Building the cached images

    private static func makeTrack(theme: Theme, layout: Layout) -> PixmanImage {
        let bar = layout.bar
        let shape = Shape.roundedRectMask(
            width: bar.width, height: bar.height,
            rect: (0, 0, Double(bar.width), Double(bar.height)), radius: layout.radius)
        let track = PixmanImage(format: PIXMAN_a8r8g8b8, width: bar.width, height: bar.height)
        let whole = Rect(x: 0, y: 0, width: bar.width, height: bar.height)
        track.composite(PIXMAN_OP_SRC, source: PixmanImage(solid: theme.trackColor), mask: shape, rect: whole)
        guard theme.trackShadow else { return track }

        // Inner shadow: the area outside the track, moved down by a pixel, blurred, and
        // kept only inside the track (a shadow cast by the top edge).
        let margin = Int((layout.shadowBlur * 4).rounded(.up)) + 2
        let outside = PixmanImage(format: PIXMAN_a8, width: bar.width + 2 * margin, height: bar.height + 2 * margin)
        outside.fill(Rect(x: 0, y: 0, width: outside.width, height: outside.height), color: .white)
        let offsetY = max(1, Int(layout.scale.rounded()))
        outside.composite(PIXMAN_OP_OUT_REVERSE, source: shape,
                          rect: Rect(x: margin, y: margin + offsetY, width: bar.width, height: bar.height))
        Blur.apply(to: outside, radius: layout.shadowBlur)
        let shadow = PixmanImage(format: PIXMAN_a8, width: bar.width, height: bar.height)
        shadow.composite(PIXMAN_OP_SRC, source: outside, rect: whole, sourceOrigin: (margin, margin))
        shadow.composite(PIXMAN_OP_IN, source: shape, rect: whole)
        track.composite(PIXMAN_OP_OVER, source: PixmanImage(solid: Color.black.withAlpha(0.7)), mask: shadow, rect: whole)
        return track
    }

    private static func makeFillTile(theme: Theme, layout: Layout, width: Int) -> PixmanImage {
        let h = layout.bar.height
        let tile = PixmanImage(format: PIXMAN_a8r8g8b8, width: width, height: h)
        let whole = Rect(x: 0, y: 0, width: width, height: h)
        if theme.flat {
            tile.fill(whole, color: theme.fillColor)
        } else {
            var p1 = pixman_point_fixed_t(x: 0, y: pixman_fixed_t(32768))
            var p2 = pixman_point_fixed_t(x: 0, y: pixman_fixed_t((Double(h) - 0.5) * 65536))
            var stops = [
                pixman_gradient_stop_t(x: 0, color: theme.fillColor.lighter.pixman),
                pixman_gradient_stop_t(x: 65536, color: theme.fillColor.darker.pixman),
            ]
            let gradient = PixmanImage(pixman_image_create_linear_gradient(&p1, &p2, &stops, 2)!)
            pixman_image_set_repeat(gradient.raw, PIXMAN_REPEAT_PAD)
            tile.composite(PIXMAN_OP_SRC, source: gradient, rect: whole)
        }
        // Parallelograms leaning right, half a period wide: a quarter period at each side blank.
        let stripes = PixmanImage(format: PIXMAN_a8, width: width, height: h)
        let p = Double(layout.stripePeriod), hh = Double(h)
        var x = -p
        while x < Double(width) + p {
            Shape.fillConvex([(x, hh), (x + p * 0.25, 0), (x + p * 0.75, 0), (x + p * 0.5, hh)], into: stripes)
            x += p
        }
        tile.composite(PIXMAN_OP_OVER, source: PixmanImage(solid: theme.stripeColor), mask: stripes, rect: whole)
        return tile
    }

    /// The fill's shape (inset half a pixel, as a stroke's centre line) and its outline ring.
    private static func makeFillMasks(layout: Layout, width: Double, outline: Bool) -> (PixmanImage, PixmanImage?) {
        let bar = layout.bar
        let h = Double(bar.height)
        let fill = Shape.roundedRectMask(
            width: bar.width, height: bar.height, rect: (0.5, 0.5, width - 1, h - 1), radius: layout.radius)
        guard outline else { return (fill, nil) }
        let line = max(1, layout.scale.rounded())
        let ring = Shape.roundedRectMask(
            width: bar.width, height: bar.height, rect: (0, 0, width, h), radius: layout.radius + line / 2)
        if width > 2 * line {
            let inner = Shape.roundedRectMask(
                width: bar.width, height: bar.height, rect: (line, line, width - 2 * line, h - 2 * line),
                radius: max(0, layout.radius - line / 2))
            ring.composite(PIXMAN_OP_OUT_REVERSE, source: inner, rect: Rect(x: 0, y: 0, width: bar.width, height: bar.height))
        }
        return (fill, ring)
    }
}

extension Rect {
    /// This rectangle less `hole`: at most four pieces, none overlapping.
    func subtracting(_ hole: Rect) -> [Rect] {
        let h = intersection(hole)
        guard !h.isEmpty else { return isEmpty ? [] : [self] }
        var parts: [Rect] = []
        if h.y > y { parts.append(Rect(x: x, y: y, width: width, height: h.y - y)) }
        if h.maxY < maxY { parts.append(Rect(x: x, y: h.maxY, width: width, height: maxY - h.maxY)) }
        if h.x > x { parts.append(Rect(x: x, y: h.y, width: h.x - x, height: h.height)) }
        if h.maxX < maxX { parts.append(Rect(x: h.maxX, y: h.y, width: maxX - h.maxX, height: h.height)) }
        return parts
    }
}
