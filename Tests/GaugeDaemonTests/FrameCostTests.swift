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

    /// The stale region of every target handed out, in order.
    private(set) var staleRegions: [Rect] = []

    func beginFrame() -> FrameTarget? {
        staleRegions.append(damage.backStale)
        return FrameTarget(buffer: buffers[damage.back].framebuffer, staleRegion: damage.backStale)
    }

    func present(damage changed: Rect) throws(DisplayError) {
        front = damage.back
        damage.presented(changed: changed)
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
        // 320x240 is drawn at scale 1 (a shorter screen is drawn smaller, its stripes slower).
        let flipped = try FlippedMemoryDisplay(width: 320, height: 240)
        let reference = try MemoryDisplay(width: 320, height: 240)
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
        // Once both buffers hold a frame, each lacks only the moving stripes: a frame that
        // treated the redrawn stale region as changed would keep both buffers stale whole.
        let bar = try #require(flipped.staleRegions.dropFirst(3).max { $0.area < $1.area })
        #expect(bar.area * 10 < 320 * 240, "back buffer stale over \(bar)")
        #expect(presented >= 30 && presented <= 36, "\(presented) frames in a second at 35 px/s")
    }
}

/// A display whose frames fail, as a device that went away does.
private final class FailingDisplay: Display {
    let memory: MemoryDisplay
    init() throws { memory = try MemoryDisplay(width: 64, height: 48) }
    var name: String { "fbdev /dev/fb7 test" }
    var width: Int { memory.width }
    var height: Int { memory.height }
    var format: PixelFormat { memory.format }
    var physicalSize: (width: Int, height: Int)? { nil }
    func beginFrame() -> FrameTarget? { memory.beginFrame() }
    func present(damage: Rect) throws(DisplayError) { throw DisplayError("fbdev /dev/fb7: the device is gone") }
}

@Suite struct FrameFailureLogTests {
    /// The display's error names the device; the log line does not name it again.
    @Test func aFailedFrameIsLoggedNamingTheDeviceOnce() throws {
        var lines: [String] = []
        let screen = ProgressScreen(theme: Theme(), display: try FailingDisplay(), log: { lines.append($0) })
        screen.setProgress(10, message: nil, at: 0)
        screen.renderFrame(at: 1)
        // (A 64x48 display also has the layout say what it dropped.)
        #expect(lines.filter { $0.hasPrefix("frame") } == ["frame not presented: fbdev /dev/fb7: the device is gone"])
        #expect(screen.framesPresented == 0)
    }
}
