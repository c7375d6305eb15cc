import GaugeDaemon
import GaugeDisplay
import GaugeRender
import Testing

/// A page-flipped display in memory: two buffers, the back one lacking the previous
/// frame's damage (`BufferDamage`), as on DRM and fbdev with two pages.
private final class FlippedMemoryDisplay: Display {
    let buffers: [MemoryDisplay]
    private var damage: BufferDamage
    /// The buffer on screen.
    private(set) var front = 1
    private(set) var flips = 0

    init(width: Int, height: Int) throws {
        buffers = [try MemoryDisplay(width: width, height: height), try MemoryDisplay(width: width, height: height)]
        damage = BufferDamage(count: 2, screen: Rect(x: 0, y: 0, width: width, height: height))
    }

    var name: String { "flipped memory" }
    var width: Int { buffers[0].width }
    var height: Int { buffers[0].height }
    var format: PixelFormat { buffers[0].format }
    var physicalSize: (width: Int, height: Int)? { nil }

    func beginFrame() -> FrameTarget? {
        FrameTarget(buffer: buffers[damage.back].framebuffer, staleRegion: damage.backStale)
    }

    func present(damage drawn: Rect) throws(DisplayError) {
        front = damage.back
        damage.presented(drawn: drawn)
        flips += 1
    }

    var screenBytes: [UInt8] { bytes(buffers[front]) }
}

private func bytes(_ display: MemoryDisplay) -> [UInt8] {
    Array(UnsafeRawBufferPointer(start: display.base, count: display.byteCount))
}

@Suite struct FrameCostTests {
    /// Ticks at 60 per second for one second with the stripes moving 35 px/s: only the
    /// ticks that move them by a pixel present a frame, and every frame on screen is the
    /// picture a single-buffered display shows at that moment.
    @Test func flippedDisplayPresentsOnlyFramesThatChangePixels() throws {
        let flipped = try FlippedMemoryDisplay(width: 320, height: 200)
        let reference = try MemoryDisplay(width: 320, height: 200)
        let screen = ProgressScreen(theme: Theme(), display: flipped, log: { _ in })
        let expected = ProgressScreen(theme: Theme(), display: reference, log: { _ in })
        screen.setProgress(40, message: "Unpacking", at: 0)
        expected.setProgress(40, message: "Unpacking", at: 0)
        // Past the easing: only the stripes move.
        let start = 10.0
        screen.renderFrame(at: start)
        expected.renderFrame(at: start)
        let before = screen.framesPresented
        for tick in 1...60 {
            let time = start + Double(tick) / 60
            #expect(screen.renderFrame(at: time))
            expected.renderFrame(at: time)
            #expect(flipped.screenBytes == bytes(reference), "tick \(tick)")
        }
        let presented = screen.framesPresented - before
        #expect(presented == flipped.flips - 1)
        #expect(presented >= 30 && presented <= 36, "\(presented) frames in a second at 35 px/s")
    }
}
