import GaugeDaemon
import GaugeDisplay
import GaugeProtocol
import GaugeRender
import Testing

/// A card with two heads at different modes, as `DRMDisplay` gives them: each head is a
/// view of its own; the card as one display is its first head.
private final class TwoHeads: Display {
    let first: MemoryDisplay
    let second: MemoryDisplay
    init(_ first: MemoryDisplay, _ second: MemoryDisplay) {
        self.first = first
        self.second = second
    }
    var name: String { "two heads" }
    var width: Int { first.width }
    var height: Int { first.height }
    var format: PixelFormat { first.format }
    var physicalSize: (width: Int, height: Int)? { first.physicalSize }
    var views: [any Display] { [first, second] }
    func beginFrame() -> FrameTarget? { first.beginFrame() }
    func present(damage: Rect) throws(DisplayError) { try first.present(damage: damage) }
}

/// Every head shows the whole splash laid out for its own mode and scale, from one state.
@Suite struct HeadViewsTests {
    /// The bar's fill on a head: its colour's pixels' bounding box (the anti-aliased pixels
    /// of its rounded ends and edges left out: a pixel or two short of the bar each way).
    private func fillBox(_ head: MemoryDisplay) -> Rect {
        var box = Rect.zero
        for y in 0..<head.height {
            for x in 0..<head.width {
                let p = head.pixel(x: x, y: y)
                if p.r > 150, p.b < 80, p.g > 60, p.g < 170 { box = box.union(Rect(x: x, y: y, width: 1, height: 1)) }
            }
        }
        return box
    }

    private func theme() -> Theme {
        var theme = Theme()
        theme.flat = true
        theme.animate = false
        return theme
    }

    @Test("two heads at different modes: each gets the whole bar, centred for its own width")
    func ownLayoutPerHead() throws {
        let first = try MemoryDisplay(width: 1024, height: 768)
        let second = try MemoryDisplay(width: 1600, height: 900)
        let screen = ProgressScreen(theme: theme(), display: TwoHeads(first, second), log: { _ in })
        screen.setProgress(100, message: "Both", at: 0)
        screen.renderFrame(at: 10)
        #expect(first.frameCount == 1 && second.frameCount == 1)
        // Half the head's width, centred: 512 at 256 on the first, 800 at 400 on the second;
        // 24 px tall, at the same height from the bottom (5/6 down).
        for (head, x, width, y) in [(first, 256, 512, 628), (second, 400, 800, 738)] {
            let fill = fillBox(head)
            #expect(abs(fill.x - x) <= 2 && abs(fill.width - width) <= 4 && abs(fill.y - y) <= 2 && abs(fill.height - 24) <= 2,
                    "\(head.width)x\(head.height): \(fill)")
        }
        // A change reaches both heads; a snapshot is of the first.
        screen.setProgress(50, message: nil, at: 10)
        screen.renderFrame(at: 20)
        #expect(first.frameCount == 2 && second.frameCount == 2)
        #expect(abs(fillBox(second).width - 400) <= 4)
        #expect(screen.framesPresented == 2)
        let png = try screen.snapshotPNG(at: 20)
        #expect(Array(png[16..<24]) == [0, 0, 4, 0, 0, 0, 3, 0])   // IHDR: 1024 x 768
    }

    @Test("scale = auto per head: a dense panel at scale 2, the other head at 1")
    func scalePerHead() throws {
        let first = try MemoryDisplay(width: 1024, height: 768, physicalSize: (310, 230))
        // 1920x1080 on 210x120 mm: 231 dpi, 1.71 x 135.
        let second = try MemoryDisplay(width: 1920, height: 1080, physicalSize: (210, 120))
        var logged: [String] = []
        let screen = ProgressScreen(theme: theme(), display: TwoHeads(first, second), log: { logged.append($0) })
        #expect(screen.viewSizes.map { $0.scale } == [1, 2])
        #expect(logged == ["each head laid out for its own mode: 1024x768 at scale 1, 1920x1080 at scale 2"])
        screen.setProgress(100, message: "Dense", at: 0)
        screen.renderFrame(at: 10)
        let thin = fillBox(first), thick = fillBox(second)
        #expect(abs(thin.height - 24) <= 2 && abs(thick.height - 48) <= 4, "\(thin), \(thick)")
        // Scale 2 on the dense head: the bar twice as tall, its width still half the head's.
        #expect(thick.height == 2 * thin.height && abs(thick.width - 960) <= 4)
        // --scale forces one scale on every head.
        let forced = ProgressScreen(theme: theme(), display: TwoHeads(first, second), scale: 1, log: { _ in })
        #expect(forced.viewSizes.map { $0.scale } == [1, 1])
    }
}
