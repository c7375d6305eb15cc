import CPixman
import GaugeProtocol

/// The check and cross drawn beside the bar once the work has succeeded or failed.
enum Mark {
    /// Coverage of the mark for `state` in a square of `size` pixels (nil while running).
    static func mask(for state: RunState, size: Int) -> PixmanImage? {
        let s = Double(size)
        let width = max(2, s * 0.16)
        let strokes: [((Double, Double), (Double, Double))]
        switch state {
        case .begin, .running: return nil
        case .success:
            strokes = [((0.12 * s, 0.52 * s), (0.40 * s, 0.80 * s)), ((0.40 * s, 0.80 * s), (0.90 * s, 0.18 * s))]
        case .failure:
            strokes = [((0.18 * s, 0.18 * s), (0.82 * s, 0.82 * s)), ((0.82 * s, 0.18 * s), (0.18 * s, 0.82 * s))]
        }
        let mask = PixmanImage(format: PIXMAN_a8, width: size, height: size)
        // Each stroke is its own mask, united with the others by keeping the larger coverage.
        for (p, q) in strokes {
            let stroke = PixmanImage(format: PIXMAN_a8, width: size, height: size)
            Shape.fillConvex(quad(from: p, to: q, width: width), into: stroke)
            mask.composite(PIXMAN_OP_SATURATE, source: stroke, rect: Rect(x: 0, y: 0, width: size, height: size))
        }
        return mask
    }

    /// A line from `p` to `q` of `width`, with square ends reaching half the width past each point.
    private static func quad(from p: (Double, Double), to q: (Double, Double), width: Double) -> [(x: Double, y: Double)] {
        let dx = q.0 - p.0, dy = q.1 - p.1
        let length = (dx * dx + dy * dy).squareRoot()
        let ux = dx / length * width / 2, uy = dy / length * width / 2
        let nx = -uy, ny = ux
        return [(p.0 - ux + nx, p.1 - uy + ny), (q.0 + ux + nx, q.1 + uy + ny),
                (q.0 + ux - nx, q.1 + uy - ny), (p.0 - ux - nx, p.1 - uy - ny)]
    }
}
