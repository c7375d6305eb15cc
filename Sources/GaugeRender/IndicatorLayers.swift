import CGaugeLinux
import CPixman

/// What shows while the work's length is unknown.
package enum IndeterminateStyle: String, CaseIterable, Sendable {
    /// The whole bar striped, its stripes sweeping.
    case barberPole = "barber-pole"
    /// One circle after another grows from the centre, each in the next colour of a list.
    case circles
    /// A ring of drops, largest first, running round.
    case ring
}

/// Clockwise or counter-clockwise, for the ring of drops.
enum Direction: String, CaseIterable, Sendable {
    case clockwise, counterclockwise
}

/// The circles and ring indicators, centred where the bar is. Their animations repeat, so
/// each frame of a period is drawn once, composed over the background and kept in the
/// display's format; showing one is a blit. The kept frames hold at most `cacheBudget`
/// bytes: frames of a large, slow indicator past it are composed each time they show.
final class IndicatorLayers {
    /// Most bytes the composed frames hold.
    static let cacheBudget = 8 << 20

    let rect: Rect
    let frameCount: Int
    private let period: Double
    private let theme: Theme
    private let size: Int
    private var cache: [PixmanImage?]
    private var cacheFormat = PIXMAN_a8r8g8b8
    /// Bytes the kept frames hold.
    private(set) var cachedBytes = 0
    /// Where a frame that is not kept is composed (made on first need).
    private var uncached: PixmanImage?
    /// Images every frame is drawn with, made once: the shapes on transparent, the frame
    /// over the background, and one disc's coverage (a large indicator drawn every frame
    /// then allocates nothing).
    private lazy var work = (
        shapes: PixmanImage(format: PIXMAN_a8r8g8b8, width: size, height: size),
        scratch: PixmanImage(format: PIXMAN_a8r8g8b8, width: size, height: size),
        mask: PixmanImage(format: PIXMAN_a8, width: size, height: size)
    )
    private let background: PixmanImage

    init(theme: Theme, layout: Layout) {
        self.theme = theme
        rect = layout.indicator
        size = max(1, rect.width)
        switch theme.indeterminateStyle {
        case .circles: period = theme.indicatorPeriod * Double(max(1, theme.circleColors.count))
        default: period = theme.indicatorPeriod
        }
        // 50 distinct frames a second are smooth to the eye and bound the cache.
        frameCount = max(2, Int((period * 50).rounded()))
        background = PixmanImage(solid: theme.background)
        cache = Array(repeating: nil, count: frameCount)
    }

    /// How long each frame shows: `frame(at:)` changes at every multiple of it.
    var stepPeriod: Double { period / Double(frameCount) }

    func frame(at time: Double) -> Int {
        let f = time / period
        return min(frameCount - 1, Int((f - f.rounded(.down)) * Double(frameCount)))
    }

    /// Draws frame `index` over `clip` (screen coordinates) at `opacity` over what is there.
    func draw(into dst: PixmanImage, clip: Rect, frame index: Int, opacity: Double) {
        let area = clip.intersection(rect)
        guard !area.isEmpty, opacity > 0 else { return }
        let origin = (area.x - rect.x, area.y - rect.y)
        if opacity >= 1 {
            let format = pixman_image_get_format(dst.raw)
            if format != cacheFormat {
                cache = Array(repeating: nil, count: frameCount)
                cachedBytes = 0
                uncached = nil
                cacheFormat = format
            }
            if let hit = cache[index] {
                dst.copy(from: hit, rect: area, sourceOrigin: origin)
                return
            }
            let frameBytes = size * size * 4
            let keep = cachedBytes + frameBytes <= Self.cacheBudget
            let composed = keep ? PixmanImage(format: format, width: size, height: size)
                : uncached ?? PixmanImage(format: format, width: size, height: size)
            let whole = Rect(x: 0, y: 0, width: size, height: size)
            let scratch = work.scratch
            scratch.composite(PIXMAN_OP_SRC, source: background, rect: whole)
            scratch.composite(PIXMAN_OP_OVER, source: shapes(frame: index), rect: whole)
            composed.composite(PIXMAN_OP_SRC, source: scratch, rect: whole)
            if keep {
                cache[index] = composed
                cachedBytes += frameBytes
            } else {
                uncached = composed
            }
            dst.copy(from: composed, rect: area, sourceOrigin: origin)
        } else {
            let alpha = PixmanImage(solid: Color.white.withAlpha(opacity))
            dst.composite(PIXMAN_OP_OVER, source: shapes(frame: index), mask: alpha, rect: area, sourceOrigin: origin)
        }
    }

    /// The indicator alone, premultiplied on transparent, at frame `index` (in `work.shapes`,
    /// until the next call).
    private func shapes(frame index: Int) -> PixmanImage {
        let image = work.shapes
        image.fill(Rect(x: 0, y: 0, width: size, height: size), color: Color.black.withAlpha(0))
        let t = Double(index) / Double(frameCount)
        let c = Double(size) / 2
        switch theme.indeterminateStyle {
        case .barberPole:
            break
        case .circles:
            let colors = theme.circleColors.isEmpty ? [theme.fillColor] : theme.circleColors
            let cycles = t * Double(colors.count)
            let cycle = Int(cycles.rounded(.down)) % colors.count
            let grow = theme.indicatorTiming(cycles - cycles.rounded(.down))
            disc(in: image, x: c, y: c, radius: c, color: colors[cycle])
            disc(in: image, x: c, y: c, radius: c * grow, color: colors[(cycle + 1) % colors.count])
        case .ring:
            let drops = max(2, theme.ringDrops)
            let head = 2 * Double.pi * theme.indicatorTiming(t) * (theme.ringDirection == .clockwise ? 1 : -1)
            let largest = c * 0.22
            let track = c - largest - 1
            let spacing = 2 * Double.pi / Double(drops) * 0.55
            for i in 0..<drops {
                let angle = head - Double(i) * spacing * (theme.ringDirection == .clockwise ? 1 : -1) - Double.pi / 2
                let r = largest * (1 - Double(i) / Double(drops) * 0.8)
                disc(in: image, x: c + track * cos(angle), y: c + track * sin(angle), radius: r, color: theme.fillColor)
            }
        }
        return image
    }

    private func disc(in image: PixmanImage, x: Double, y: Double, radius: Double, color: Color) {
        guard radius > 0.25 else { return }
        let mask = work.mask
        // Only the disc's box is cleared and composited: a ring's drops are small.
        let left = Int((x - radius).rounded(.down)) - 1, top = Int((y - radius).rounded(.down)) - 1
        let side = Int((2 * radius).rounded(.up)) + 3
        let box = Rect(x: left, y: top, width: side, height: side).intersection(Rect(x: 0, y: 0, width: size, height: size))
        mask.fill(box, color: Color.black.withAlpha(0))
        let steps = max(12, Int(radius * 2))
        var points: [(x: Double, y: Double)] = []
        for s in 0..<steps {
            let a = Double(s) / Double(steps) * 2 * Double.pi
            points.append((x + radius * cos(a), y + radius * sin(a)))
        }
        Shape.fillConvex(points, into: mask)
        image.composite(PIXMAN_OP_OVER, source: PixmanImage(solid: color), mask: mask, rect: box, maskOrigin: (box.x, box.y))
    }
}
