import GaugeRender

/// The buffer a frame is drawn into, and what it lacks compared with the frame on screen.
package struct FrameTarget {
    package var buffer: Framebuffer
    /// Region of `buffer` older than the presented frame (for example the damage of the
    /// frame before on a double-buffered display). The next frame must redraw it too.
    package var staleRegion: Rect

    package init(buffer: Framebuffer, staleRegion: Rect) {
        self.buffer = buffer
        self.staleRegion = staleRegion
    }
}

/// Where frames go: DRM dumb buffers, an fbdev device, a terminal, or memory.
///
/// One frame: `beginFrame()` hands out the buffer; the scene draws the damage plus the
/// buffer's `staleRegion` into it; `present(damage:)` shows it. All calls come from the
/// daemon's one thread and never block.
package protocol Display: AnyObject {
    /// What the log and `status` call this display ("memory", "drm /dev/dri/card0 bochs-drm").
    var name: String { get }
    var width: Int { get }
    var height: Int { get }
    var format: PixelFormat { get }
    /// The panel's physical size in millimetres, where known (used for HiDPI scale).
    var physicalSize: (width: Int, height: Int)? { get }
    /// How far the picture must be turned, clockwise, to be upright on the panel as it is
    /// mounted (the DRM connector's "panel orientation": tablets, handhelds, panels fitted
    /// sideways); `.none` where unknown.
    var panelOrientation: Rotation { get }
    /// The heads that each show the whole picture laid out for their own size, scale and
    /// orientation (a DRM card's connectors at their own modes); a display with one
    /// picture is its own one view. The daemon draws every view, each from the one state.
    var views: [any Display] { get }
    /// The buffer for the next frame, or nil while the display cannot take one
    /// (a page flip pending, the display released).
    func beginFrame() -> FrameTarget?
    /// Shows the frame drawn since `beginFrame()`; `damage` is what changed since the frame
    /// on screen (drawn together with the target's `staleRegion`, which the display knows).
    func present(damage: Rect) throws(DisplayError)
}

extension Display {
    package var panelOrientation: Rotation { .none }
    package var views: [any Display] { [self] }
}

extension Rotation {
    /// This turn followed by `other`.
    package func then(_ other: Rotation) -> Rotation {
        Rotation(rawValue: (rawValue + other.rawValue) % 360)!
    }

    /// The turn that shows a picture upright on a panel whose DRM "panel orientation"
    /// property reads `name` (nil for names the kernel does not define). "Left Side Up":
    /// the panel's left edge is at the top of the device, so the picture's top must be
    /// drawn along it: turned a quarter counter-clockwise.
    package init?(panelOrientation name: String) {
        switch name {
        case "Normal": self = .none
        case "Upside Down": self = .half
        case "Left Side Up": self = .threeQuarters
        case "Right Side Up": self = .quarter
        default: return nil
        }
    }
}
