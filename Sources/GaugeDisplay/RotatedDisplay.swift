import CPixman
import GaugeRender

/// A display seen turned: the scene draws upright into a shadow buffer of the logical
/// size, and each frame's damage is turned onto the panel by one pixman composite with a
/// rotation transform (no per-pixel loop of ours).
package final class RotatedDisplay: Display {
    package let base: any Display
    package let rotation: Rotation
    package let width: Int
    package let height: Int
    private let shadow: MemoryDisplay
    private let source: PixmanImage
    private var pending: FrameTarget?

    package init(_ base: any Display, rotation: Rotation) throws(DisplayError) {
        self.base = base
        self.rotation = rotation
        let sideways = rotation == .quarter || rotation == .threeQuarters
        width = sideways ? base.height : base.width
        height = sideways ? base.width : base.height
        shadow = try MemoryDisplay(width: width, height: height, format: base.format)
        source = PixmanImage(wrapping: shadow.framebuffer)
        var t = pixman_transform_t()
        let one = pixman_fixed_t(65536)
        func fixed(_ v: Int) -> pixman_fixed_t { pixman_fixed_t(v) * one }
        // Maps a panel pixel's centre back to the upright picture.
        switch rotation {
        case .none: pixman_transform_init_identity(&t)
        case .quarter:
            t.matrix = ((0, one, 0), (-one, 0, fixed(height)), (0, 0, one))
        case .half:
            t.matrix = ((-one, 0, fixed(width)), (0, -one, fixed(height)), (0, 0, one))
        case .threeQuarters:
            t.matrix = ((0, -one, fixed(width)), (one, 0, 0), (0, 0, one))
        }
        pixman_image_set_transform(source.raw, &t)
        pixman_image_set_filter(source.raw, PIXMAN_FILTER_NEAREST, nil, 0)
    }

    package var name: String { "\(base.name) rotated \(rotation.rawValue)°" }
    package var format: PixelFormat { base.format }
    package var physicalSize: (width: Int, height: Int)? {
        guard let size = base.physicalSize else { return nil }
        return rotation == .quarter || rotation == .threeQuarters ? (size.height, size.width) : size
    }

    package func beginFrame() -> FrameTarget? {
        guard let target = base.beginFrame() else { return nil }
        pending = target
        return FrameTarget(buffer: shadow.framebuffer, staleRegion: .zero)
    }

    package func present(damage: Rect) throws(DisplayError) {
        guard let target = pending else { return }
        pending = nil
        let panelDamage = panelRect(damage).union(target.staleRegion)
        let destination = PixmanImage(wrapping: target.buffer)
        destination.composite(PIXMAN_OP_SRC, source: source, rect: panelDamage, sourceOrigin: (panelDamage.x, panelDamage.y))
        try base.present(damage: panelRect(damage))
    }

    /// A rectangle of the upright picture, on the panel.
    package func panelRect(_ r: Rect) -> Rect {
        guard !r.isEmpty else { return .zero }
        switch rotation {
        case .none: return r
        case .quarter: return Rect(x: height - r.maxY, y: r.x, width: r.height, height: r.width)
        case .half: return Rect(x: width - r.maxX, y: height - r.maxY, width: r.width, height: r.height)
        case .threeQuarters: return Rect(x: r.y, y: width - r.maxX, width: r.height, height: r.width)
        }
    }
}
