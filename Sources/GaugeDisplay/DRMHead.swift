import CDRM
import GaugeRender

/// One head of a DRM card (a connector on its CRTC at its own mode) as a display of its
/// own: its buffers have its mode's size, and the daemon lays the splash out for it. The
/// card (`DRMDisplay`) does the work; it holds its heads and each head its card until the
/// card is closed or abandoned.
package final class DRMHead: Display {
    package let card: DRMDisplay
    package let connector: UInt32
    package let connectorName: String
    let crtc: UInt32
    let mode: drmModeModeInfo
    /// What the CRTC showed before us, restored on close.
    let saved: drmModeCrtcPtr?
    package let width: Int
    package let height: Int
    package let physicalSize: (width: Int, height: Int)?
    package let panelOrientation: Rotation
    var buffers: [DumbBuffer]
    var damage: BufferDamage
    /// A page flip queued on this head's CRTC has not finished.
    var flipPending = false
    /// Completions that came while no flip was counted as pending: a flip's count lost
    /// (its completion could then be taken for the next flip's), for the log.
    var uncountedCompletions = 0
    /// Our buffer is on the CRTC: this head's first frame has been presented.
    var lit = false
    /// The CRTC refused the mode: nothing this head draws is seen.
    var dark = false
    /// When flipping fails for good, the buffer drawn in place from then on.
    var frontOverride: Int?

    init(
        card: DRMDisplay, connector: UInt32, name: String, crtc: UInt32, mode: drmModeModeInfo,
        saved: drmModeCrtcPtr?, buffers: [DumbBuffer], physicalSize: (width: Int, height: Int)?,
        panelOrientation: Rotation
    ) {
        self.card = card
        self.connector = connector
        connectorName = name
        self.crtc = crtc
        self.mode = mode
        self.saved = saved
        width = Int(mode.hdisplay)
        height = Int(mode.vdisplay)
        self.physicalSize = physicalSize
        self.panelOrientation = panelOrientation
        self.buffers = buffers
        damage = BufferDamage(count: buffers.count, screen: Rect(x: 0, y: 0, width: width, height: height))
    }

    package var name: String { "\(card.name) \(connectorName)" }
    package var format: PixelFormat { card.format }
    package func beginFrame() -> FrameTarget? { card.beginFrame(on: self) }
    package func present(damage: Rect) throws(DisplayError) { try card.present(on: self, damage: damage) }

    /// The buffer on screen.
    var frontIndex: Int { frontOverride ?? (damage.back + 1) % damage.count }

    func framebuffer(_ index: Int, onScreen: Bool = false) -> Framebuffer {
        let buffer = buffers[index]
        return Framebuffer(
            base: buffer.map!, width: width, height: height, stride: buffer.pitch, format: format, isOnScreen: onScreen)
    }
}

/// A dumb buffer, its framebuffer and its mapping.
struct DumbBuffer {
    var handle: UInt32 = 0
    var fb: UInt32 = 0
    var pitch = 0
    var size = 0
    var map: UnsafeMutableRawPointer?
}
