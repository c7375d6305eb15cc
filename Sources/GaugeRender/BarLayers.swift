import CPixman

/// What the bar looks like in every state: the track with its inner shadow (blurred,
/// the costliest image of a scene) and the masks of the fill and its outline at the bar's
/// full width. Built once per theme and layout, shared by the bars of every run state, so
/// a state change (running, success, failure) rebuilds only the colours. The masks are
/// made the first time a fill is drawn (a start's first frame, at 0%, has none).
final class BarShapes {
    let track: PixmanImage
    private let layout: Layout
    private let withOutline: Bool
    private lazy var masks: (fill: PixmanImage, outline: PixmanImage?) = {
        let masks = BarLayers.makeFillMasks(layout: layout, width: Self.narrowWidth(layout), outline: withOutline)
        let (width, cap) = (layout.bar.width, layout.capWidth)
        return (BarLayers.stretch(masks.fill, to: width, cap: cap), masks.outline.map { BarLayers.stretch($0, to: width, cap: cap) })
    }()
    var fill: PixmanImage { masks.fill }
    var outline: PixmanImage? { masks.outline }

    /// The ends are drawn on a narrow bar and the middle column stretched between them:
    /// the blur and the rasteriser only ever see 2 caps + 1 column.
    private static func narrowWidth(_ layout: Layout) -> Int { min(layout.bar.width, 2 * layout.capWidth + 1) }

    init(theme: Theme, layout: Layout) {
        self.layout = layout
        withOutline = theme.outline
        track = BarLayers.stretch(
            BarLayers.makeTrack(theme: theme, layout: layout, width: Self.narrowWidth(layout)),
            to: layout.bar.width, cap: layout.capWidth)
    }
}

/// The bar's cached images and how a frame of it is put together.
///
/// Built once per theme and layout: the track with its inner shadow, the striped fill
/// tile, the fill and outline masks. Between the rounded ends every column of the bar is
/// the same but for the stripes, so that interior is pre-composed into one repeating tile.
/// While the width holds still, the two ends (the left cap, and the head with its label)
/// are kept composed per stripe phase, so a frame of moving stripes is three SRC
/// composites whatever the display's pixel format.
final class BarLayers {
    let layout: Layout
    private let theme: Theme
    private let track: PixmanImage
    /// Gradient plus stripes at phase 0, a whole number of stripe periods wide, repeating;
    /// made the first time a fill is drawn (a bar at 0%, a start's first frame, has none).
    private lazy var fillTile = Self.makeFillTile(
        theme: theme, layout: layout,
        width: layout.stripePeriod * max(1, (512 + layout.stripePeriod - 1) / layout.stripePeriod))
    private let outlineColor: PixmanImage
    private let background: PixmanImage
    private let shapes: BarShapes
    /// Masks of the fill at the bar's full width; narrower fills use their ends shifted.
    private var fullFill: PixmanImage { shapes.fill }
    private var fullOutline: PixmanImage? { shapes.outline }
    /// Masks for a fill too short to have an interior (rebuilt with the width).
    private var shortFill: PixmanImage?
    private var shortOutline: PixmanImage?

    /// Filled width in whole pixels.
    private(set) var fillWidth = 0
    private var steady = false
    private var label: (mask: PixmanImage, color: PixmanImage, rect: Rect)?
    /// Where bar pixels are composed before their one conversion to a display format
    /// other than 32-bit RGB, or their one copy onto a buffer on screen (made the first
    /// time one is drawn to).
    private lazy var scratch = PixmanImage(format: PIXMAN_a8r8g8b8, width: layout.bar.width, height: layout.bar.height)
    /// Composed regions in the display's format, by stripe phase; see `Cache`.
    private lazy var cache = Cache(phases: layout.stripePeriod)

    /// Which composed region of the fill: the left cap, the head (with the label), or the
    /// whole fill when it fits the budget.
    private enum Region: Int, CaseIterable {
        case left, head, whole
    }

    /// Per region, one slot per stripe phase (an array: no hashing on the frame path),
    /// holding at most `phaseCacheBudget` bytes in all.
    private struct Cache {
        var format = PIXMAN_a8r8g8b8
        var interior: PixmanImage?
        var slots: [[PixmanImage?]]
        var bytes = 0

        init(phases: Int) {
            slots = Array(repeating: Array(repeating: nil, count: phases), count: Region.allCases.count)
        }

        mutating func drop(_ region: Region) {
            for i in slots[region.rawValue].indices {
                if let image = slots[region.rawValue][i] { bytes -= BarLayers.byteCount(of: image) }
                slots[region.rawValue][i] = nil
            }
        }

        /// Forgets what depends on the fill's width or label.
        mutating func dropFill() {
            drop(.head)
            drop(.whole)
        }
    }

    /// Most bytes the whole-fill cache may hold across all phases; past it the fill is
    /// put together from the left cap, the interior tile and the head. Three copies cost
    /// what one does once the fill is a few hundred pixels wide (GaugeBench, 1080p), so
    /// only a short fill is worth a copy per phase: at 1080p the cache held a megabyte.
    static let wholeFillCacheBudget = 1 << 18

    /// Most bytes the per-phase caches hold; regions past it are composed each frame (a
    /// theme with a tall bar and wide stripes costs time, not memory).
    static let phaseCacheBudget = 8 << 20

    /// Bytes the per-phase caches hold now.
    var cachedBytes: Int { cache.bytes }

    /// Forgets the per-phase images (a bar no longer shown).
    func dropCaches() {
        for region in Region.allCases { cache.drop(region) }
    }

    /// The bar in `theme`'s colours over `shapes`, which must come from the same layout and
    /// a theme with the same track and outline.
    init(theme: Theme, layout: Layout, shapes: BarShapes) {
        self.theme = theme
        self.layout = layout
        background = PixmanImage(solid: theme.background)
        outlineColor = PixmanImage(solid: theme.fillColor.darker.darker)
        track = shapes.track
        self.shapes = shapes
    }

    /// The fill's screen rectangle (empty at 0).
    var fillRect: Rect {
        let bar = layout.bar
        return Rect(x: bar.x, y: bar.y, width: fillWidth, height: bar.height)
    }

    private var hasInterior: Bool { fillWidth >= 2 * layout.capWidth + 1 }

    /// Sets the fill's width for the next frame; a frame whose width did not change may
    /// use (and fill) the per-phase caches.
    func setFillWidth(_ width: Double) {
        let w = min(max(0, Int(width.rounded())), layout.bar.width)
        steady = w == fillWidth
        guard !steady else { return }
        fillWidth = w
        cache.dropFill()
        if w > 0 && !hasInterior {
            let masks = Self.makeFillMasks(layout: layout, width: w, outline: theme.outline)
            shortFill = masks.fill
            shortOutline = masks.outline
        } else {
            shortFill = nil
            shortOutline = nil
        }
    }

    /// The label drawn over the bar (nil for none).
    func setLabel(mask: PixmanImage?, color: Color, rect: Rect) {
        cache.dropFill()
        cache.drop(.left)
        if let mask, !rect.isEmpty {
            label = (mask, PixmanImage(solid: color), rect)
        } else {
            label = nil
        }
    }

    /// Draws the bar over `clip` (screen coordinates), background and label included.
    ///
    /// Every bar pixel is composed the same way (`compose`), so a cached region and a
    /// freshly drawn one are the same to the bit. When `dst` is on screen every pixel of
    /// it is written once, with its final value.
    func draw(into dst: PixmanImage, clip: Rect, phase: Int, onScreen: Bool = false) {
        let bar = layout.bar
        let area = clip.intersection(bar)
        guard !area.isEmpty else { return }
        useFormat(pixman_image_get_format(dst.raw))
        guard steady, hasInterior else {
            compose(area, into: dst, phase: phase, onScreen: onScreen)
            return
        }
        for part in area.subtracting(fillRect) {
            compose(part, into: dst, phase: phase, onScreen: onScreen)
        }
        let fill = fillRect
        let bytesPerPixel = PixmanImage.bytesPerPixel(cache.format)
        if fill.area * bytesPerPixel * layout.stripePeriod <= Self.wholeFillCacheBudget {
            blit(area.intersection(fill), region: fill, kind: .whole, phase: phase, into: dst, onScreen: onScreen)
            return
        }
        let cap = layout.capWidth
        let fillRight = bar.x + fillWidth
        var headStart = fillRight - cap
        if let label, label.rect.intersects(fill) { headStart = min(headStart, label.rect.x) }
        headStart = max(headStart, bar.x + cap)
        let left = Rect(x: bar.x, y: bar.y, width: cap, height: bar.height)
        let interior = Rect(x: bar.x + cap, y: bar.y, width: headStart - bar.x - cap, height: bar.height)
        let head = Rect(x: headStart, y: bar.y, width: fillRight - headStart, height: bar.height)
        let i = area.intersection(interior)
        if !i.isEmpty {
            dst.copy(fromRepeating: interiorTile(), rect: i, sourceOrigin: (i.x - bar.x - phase, i.y - bar.y))
        }
        if area.intersects(left) {
            blit(area.intersection(left), region: left, kind: .left, phase: phase, into: dst, onScreen: onScreen)
        }
        if area.intersects(head) {
            blit(area.intersection(head), region: head, kind: .head, phase: phase, into: dst, onScreen: onScreen)
        }
    }

    /// Starts the caches over when the display's format changes.
    private func useFormat(_ format: pixman_format_code_t) {
        guard cache.format != format else { return }
        cache = Cache(phases: layout.stripePeriod)
        cache.format = format
    }

    /// The interior tile in the caches' format, made the first time a fill with an
    /// interior is drawn.
    private func interiorTile() -> PixmanImage {
        if let tile = cache.interior { return tile }
        let tile = makeInteriorTile(format: cache.format)
        cache.interior = tile
        return tile
    }

    /// Background, track, fill and outline of one interior column, with stripes at phase
    /// 0, as wide as the fill tile and repeating, in `format` (composed as `compose` does).
    private func makeInteriorTile(format: pixman_format_code_t) -> PixmanImage {
        let rect = Rect(x: 0, y: 0, width: fillTile.width, height: layout.bar.height)
        let inPlace = composesInPlace(format)
        let tile = PixmanImage(format: inPlace ? format : PIXMAN_a8r8g8b8, width: rect.width, height: rect.height)
        tile.fill(rect, color: theme.background)
        let middle = layout.bar.width / 2
        tile.composite(PIXMAN_OP_OVER, source: Self.column(track, at: middle), rect: rect)
        tile.composite(PIXMAN_OP_OVER, source: fillTile, mask: Self.column(fullFill, at: middle), rect: rect)
        if let fullOutline {
            tile.composite(PIXMAN_OP_OVER, source: outlineColor, mask: Self.column(fullOutline, at: middle), rect: rect)
        }
        let result = inPlace ? tile : PixmanImage(format: format, width: rect.width, height: rect.height)
        if !inPlace { result.composite(PIXMAN_OP_SRC, source: tile, rect: rect) }
        pixman_image_set_repeat(result.raw, PIXMAN_REPEAT_NORMAL)
        return result
    }

    /// `part` composed into `dst`, whose pixel (0, 0) is the screen point `origin`.
    ///
    /// Every bar pixel is composed in a8r8g8b8 terms: straight into a 32-bit RGB image
    /// off screen when the background is opaque (every pixel then is, and the same
    /// operations give the same bits as in a8r8g8b8), else in the scratch image and
    /// copied or converted once.
    private func compose(
        _ part: Rect, into dst: PixmanImage, phase: Int, origin: (x: Int, y: Int) = (0, 0), onScreen: Bool = false
    ) {
        if !onScreen, composesInPlace(pixman_image_get_format(dst.raw)) {
            drawLayers(into: dst, part: part, phase: phase, origin: origin)
            return
        }
        let bar = layout.bar
        drawLayers(into: scratch, part: part, phase: phase, origin: (bar.x, bar.y))
        dst.composite(PIXMAN_OP_SRC, source: scratch,
                      rect: Rect(x: part.x - origin.x, y: part.y - origin.y, width: part.width, height: part.height),
                      sourceOrigin: (part.x - bar.x, part.y - bar.y))
    }

    /// Whether bar pixels are composed straight into an image of `format`: 32-bit RGB
    /// with 8-bit channels, the background opaque.
    private func composesInPlace(_ format: pixman_format_code_t) -> Bool {
        theme.background.alpha == 1 && Self.composedInPlace.contains(format.rawValue)
    }

    private static let composedInPlace = [PIXMAN_x8r8g8b8, PIXMAN_a8r8g8b8, PIXMAN_x8b8g8r8, PIXMAN_a8b8g8r8].map { $0.rawValue }

    /// `region` at `phase`, composed and converted to the display's format once; nil
    /// when it is not cached and would not fit the budget.
    private func cached(_ kind: Region, region: Rect, phase: Int) -> PixmanImage? {
        if let hit = cache.slots[kind.rawValue][phase] { return hit }
        let size = region.area * PixmanImage.bytesPerPixel(cache.format)
        guard cache.bytes + size <= Self.phaseCacheBudget else { return nil }
        let image = PixmanImage(format: cache.format, width: region.width, height: region.height)
        compose(region, into: image, phase: phase, origin: (region.x, region.y))
        cache.slots[kind.rawValue][phase] = image
        cache.bytes += size
        return image
    }

    /// `part` of `region` from its cached image, or composed afresh when over budget.
    private func blit(_ part: Rect, region: Rect, kind: Region, phase: Int, into dst: PixmanImage, onScreen: Bool) {
        guard let image = cached(kind, region: region, phase: phase) else {
            compose(part, into: dst, phase: phase, onScreen: onScreen)
            return
        }
        dst.copy(from: image, rect: part, sourceOrigin: (part.x - region.x, part.y - region.y))
    }

    static func byteCount(of image: PixmanImage) -> Int {
        image.height * Int(pixman_image_get_stride(image.raw))
    }

    /// Every layer of the bar over `part` (screen coordinates), drawn into `dst` whose
    /// pixel (0, 0) is the screen point `origin`.
    private func drawLayers(into dst: PixmanImage, part: Rect, phase: Int, origin: (x: Int, y: Int) = (0, 0)) {
        let bar = layout.bar
        let target = Rect(x: part.x - origin.x, y: part.y - origin.y, width: part.width, height: part.height)
        dst.composite(PIXMAN_OP_SRC, source: background, rect: target)
        dst.composite(PIXMAN_OP_OVER, source: track, rect: target, sourceOrigin: (part.x - bar.x, part.y - bar.y))
        let filled = part.intersection(fillRect)
        if !filled.isEmpty {
            // Left of the fill's middle the full-width mask fits as it is; right of it, its right
            // end shifted onto the fill's head.
            let middle = bar.x + fillWidth / 2
            let rightHalf = Rect(x: middle, y: bar.y, width: bar.width, height: bar.height)
            var pieces = filled.subtracting(rightHalf)
            pieces.append(filled.intersection(rightHalf))
            for piece in pieces where !piece.isEmpty {
                let useShort = shortFill != nil
                let shift = useShort || piece.x < middle ? 0 : bar.width - fillWidth
                let maskOrigin = (piece.x - bar.x + shift, piece.y - bar.y)
                let rect = Rect(x: piece.x - origin.x, y: piece.y - origin.y, width: piece.width, height: piece.height)
                dst.composite(PIXMAN_OP_OVER, source: fillTile, mask: useShort ? shortFill! : fullFill, rect: rect,
                              sourceOrigin: (piece.x - bar.x - phase, piece.y - bar.y), maskOrigin: maskOrigin)
                if let outline = useShort ? shortOutline : fullOutline {
                    dst.composite(PIXMAN_OP_OVER, source: outlineColor, mask: outline, rect: rect, maskOrigin: maskOrigin)
                }
            }
        }
        if let label {
            let l = part.intersection(label.rect)
            if !l.isEmpty {
                dst.composite(PIXMAN_OP_OVER, source: label.color, mask: label.mask,
                              rect: Rect(x: l.x - origin.x, y: l.y - origin.y, width: l.width, height: l.height),
                              maskOrigin: (l.x - label.rect.x, l.y - label.rect.y))
            }
        }
    }

    // MARK: - Building the cached images

    /// `image` widened to `width`: its first and last `cap` columns kept, its middle column repeated.
    fileprivate static func stretch(_ image: PixmanImage, to width: Int, cap: Int) -> PixmanImage {
        guard image.width < width else { return image }
        let h = image.height
        let out = PixmanImage(format: pixman_image_get_format(image.raw), width: width, height: h)
        out.composite(PIXMAN_OP_SRC, source: image, rect: Rect(x: 0, y: 0, width: cap, height: h))
        out.composite(PIXMAN_OP_SRC, source: column(image, at: cap), rect: Rect(x: cap, y: 0, width: width - 2 * cap, height: h))
        out.composite(PIXMAN_OP_SRC, source: image, rect: Rect(x: width - cap, y: 0, width: cap, height: h),
                      sourceOrigin: (image.width - cap, 0))
        return out
    }

    /// Column `x` of `image` as a one-pixel-wide repeating image.
    private static func column(_ image: PixmanImage, at x: Int) -> PixmanImage {
        let col = PixmanImage(format: pixman_image_get_format(image.raw), width: 1, height: image.height)
        col.composite(PIXMAN_OP_SRC, source: image, rect: Rect(x: 0, y: 0, width: 1, height: image.height), sourceOrigin: (x, 0))
        pixman_image_set_repeat(col.raw, PIXMAN_REPEAT_NORMAL)
        return col
    }

    fileprivate static func makeTrack(theme: Theme, layout: Layout, width: Int) -> PixmanImage {
        let h = layout.bar.height
        let whole = Rect(x: 0, y: 0, width: width, height: h)
        let shape = Shape.roundedRectMask(width: width, height: h, rect: (0, 0, Double(width), Double(h)), radius: layout.radius)
        let track = PixmanImage(format: PIXMAN_a8r8g8b8, width: width, height: h)
        track.composite(PIXMAN_OP_SRC, source: PixmanImage(solid: theme.trackColor), mask: shape, rect: whole)
        guard theme.trackShadow else { return track }

        // Inner shadow: the area outside the track, moved down by a pixel, blurred, and
        // kept only inside the track (a shadow cast by the top edge).
        let margin = Int((layout.shadowBlur * 4).rounded(.up)) + 2
        let outside = PixmanImage(format: PIXMAN_a8, width: width + 2 * margin, height: h + 2 * margin)
        outside.fill(Rect(x: 0, y: 0, width: outside.width, height: outside.height), color: .white)
        let offsetY = max(1, Int(layout.scale.rounded()))
        outside.composite(PIXMAN_OP_OUT_REVERSE, source: shape, rect: Rect(x: margin, y: margin + offsetY, width: width, height: h))
        Blur.apply(to: outside, radius: layout.shadowBlur, region: Rect(x: margin, y: margin, width: width, height: h))
        let shadow = PixmanImage(format: PIXMAN_a8, width: width, height: h)
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
        // Each lies within three quarters of its period, so one period's mask, repeated,
        // is the whole tile's.
        let period = layout.stripePeriod
        let stripes = PixmanImage(format: PIXMAN_a8, width: period, height: h)
        let p = Double(period), hh = Double(h)
        Shape.fillConvex([(0, hh), (p * 0.25, 0), (p * 0.75, 0), (p * 0.5, hh)], into: stripes)
        pixman_image_set_repeat(stripes.raw, PIXMAN_REPEAT_NORMAL)
        tile.composite(PIXMAN_OP_OVER, source: PixmanImage(solid: theme.stripeColor), mask: stripes, rect: whole)
        pixman_image_set_repeat(tile.raw, PIXMAN_REPEAT_NORMAL)
        return tile
    }

    /// The fill's shape (inset half a pixel, as a stroke's centre line) and its outline ring.
    fileprivate static func makeFillMasks(layout: Layout, width: Int, outline: Bool) -> (fill: PixmanImage, outline: PixmanImage?) {
        let h = layout.bar.height
        let w = Double(width), hh = Double(h)
        let fill = Shape.roundedRectMask(width: width, height: h, rect: (0.5, 0.5, w - 1, hh - 1), radius: layout.radius)
        guard outline else { return (fill, nil) }
        let line = max(1, layout.scale.rounded())
        let ring = Shape.roundedRectMask(width: width, height: h, rect: (0, 0, w, hh), radius: layout.radius + line / 2)
        if w > 2 * line {
            let inner = Shape.roundedRectMask(
                width: width, height: h, rect: (line, line, w - 2 * line, hh - 2 * line),
                radius: max(0, layout.radius - line / 2))
            ring.composite(PIXMAN_OP_OUT_REVERSE, source: inner, rect: Rect(x: 0, y: 0, width: width, height: h))
        }
        return (fill, ring)
    }
}

extension Rect {
    /// This rectangle less `hole`: at most four pieces, none overlapping, in a fixed-size
    /// value (no allocation on the frame path).
    func subtracting(_ hole: Rect) -> Pieces {
        var parts = Pieces()
        let h = intersection(hole)
        guard !h.isEmpty else {
            if !isEmpty { parts.append(self) }
            return parts
        }
        if h.y > y { parts.append(Rect(x: x, y: y, width: width, height: h.y - y)) }
        if h.maxY < maxY { parts.append(Rect(x: x, y: h.maxY, width: width, height: maxY - h.maxY)) }
        if h.x > x { parts.append(Rect(x: x, y: h.y, width: h.x - x, height: h.height)) }
        if h.maxX < maxX { parts.append(Rect(x: h.maxX, y: h.y, width: maxX - h.maxX, height: h.height)) }
        return parts
    }

    /// Up to four rectangles.
    struct Pieces: Sequence, IteratorProtocol {
        private var items: (Rect, Rect, Rect, Rect) = (.zero, .zero, .zero, .zero)
        private(set) var count = 0
        private var cursor = 0

        mutating func append(_ r: Rect) {
            switch count {
            case 0: items.0 = r
            case 1: items.1 = r
            case 2: items.2 = r
            default: items.3 = r
            }
            count += 1
        }

        mutating func next() -> Rect? {
            guard cursor < count else { return nil }
            defer { cursor += 1 }
            switch cursor {
            case 0: return items.0
            case 1: return items.1
            case 2: return items.2
            default: return items.3
            }
        }
    }
}
