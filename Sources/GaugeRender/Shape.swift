import CGaugeLinux
import CPixman

/// Anti-aliased coverage masks drawn with pixman's trapezoid rasteriser.
enum Shape {
    /// A convex polygon's coverage added to an a8 `mask`, cut into horizontal trapezoids
    /// between its vertices' heights: each row of the mask is rasterised about once, where a
    /// triangle fan of a large polygon (a disc, a big rounded rectangle) rasterises hundreds
    /// of long triangles over each row.
    static func fillConvex(_ points: [(x: Double, y: Double)], into mask: PixmanImage) {
        let n = points.count
        guard n >= 3 else { return }
        let fixed = points.map(fixedPoint)
        let top = fixed.indices.min { fixed[$0].y < fixed[$1].y }!
        let bottom = fixed.indices.max { fixed[$0].y < fixed[$1].y }!
        /// The vertices from the top to the bottom one, going round one way.
        func chain(_ step: Int) -> [pixman_point_fixed_t] {
            var i = top
            var vertices = [fixed[i]]
            while i != bottom {
                i = (i + step + n) % n
                vertices.append(fixed[i])
            }
            return vertices
        }
        func x(of line: pixman_line_fixed_t, at y: Double) -> Double {
            let dy = Double(line.p2.y - line.p1.y)
            guard dy != 0 else { return Double(line.p1.x) }
            return Double(line.p1.x) + Double(line.p2.x - line.p1.x) * (y - Double(line.p1.y)) / dy
        }
        let a = chain(1), b = chain(-1)
        var ia = 0, ib = 0
        var y = fixed[top].y
        var traps: [pixman_trapezoid_t] = []
        traps.reserveCapacity(n)
        while ia < a.count - 1, ib < b.count - 1 {
            let next = min(a[ia + 1].y, b[ib + 1].y)
            if next > y {
                let la = pixman_line_fixed_t(p1: a[ia], p2: a[ia + 1])
                let lb = pixman_line_fixed_t(p1: b[ib], p2: b[ib + 1])
                let middle = (Double(y) + Double(next)) / 2
                let aIsLeft = x(of: la, at: middle) <= x(of: lb, at: middle)
                traps.append(pixman_trapezoid_t(top: y, bottom: next, left: aIsLeft ? la : lb, right: aIsLeft ? lb : la))
                y = next
            }
            if a[ia + 1].y <= y { ia += 1 }
            if b[ib + 1].y <= y { ib += 1 }
        }
        pixman_add_trapezoids(mask.raw, 0, 0, Int32(traps.count), &traps)
    }

    /// The outline of a rounded rectangle as a convex polygon (corner arcs as short segments).
    static func roundedRect(x: Double, y: Double, width: Double, height: Double, radius: Double)
        -> [(x: Double, y: Double)]
    {
        let r = max(0, min(radius, width / 2, height / 2))
        guard r > 0 else {
            return [(x, y), (x + width, y), (x + width, y + height), (x, y + height)]
        }
        let steps = max(4, Int((r * 1.5).rounded(.up)))
        var points: [(x: Double, y: Double)] = []
        points.reserveCapacity(4 * (steps + 1))
        let corners: [(cx: Double, cy: Double, start: Double)] = [
            (x + width - r, y + r, -Double.pi / 2),
            (x + width - r, y + height - r, 0),
            (x + r, y + height - r, Double.pi / 2),
            (x + r, y + r, Double.pi),
        ]
        for corner in corners {
            for s in 0...steps {
                let a = corner.start + Double(s) / Double(steps) * Double.pi / 2
                points.append((corner.cx + r * cos(a), corner.cy + r * sin(a)))
            }
        }
        return points
    }

    /// A rounded rectangle's coverage as a new a8 image of `size`.
    static func roundedRectMask(
        width: Int, height: Int, rect: (x: Double, y: Double, width: Double, height: Double), radius: Double
    ) -> PixmanImage {
        let mask = PixmanImage(format: PIXMAN_a8, width: width, height: height)
        guard rect.width > 0, rect.height > 0 else { return mask }
        fillConvex(roundedRect(x: rect.x, y: rect.y, width: rect.width, height: rect.height, radius: radius), into: mask)
        return mask
    }

    private static func fixedPoint(_ p: (x: Double, y: Double)) -> pixman_point_fixed_t {
        pixman_point_fixed_t(x: pixman_fixed_t((p.x * 65536).rounded()), y: pixman_fixed_t((p.y * 65536).rounded()))
    }
}
