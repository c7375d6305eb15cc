import GaugeDisplay
import GaugeRender
import Testing

@Suite("Golden frames")
struct GoldenTests {
    @Test("1920x1080 XRGB8888 at 0, 1, 42, 99.5 and 100 percent", arguments: [0.0, 1, 42, 99.5, 100])
    func fullHD(value: Double) throws {
        let screen = try Screen(width: 1920, height: 1080)
        screen.render(model(value, message: "Installing packages", title: "Gauge"))
        let name = "1080p-" + (value == 99.5 ? "99.5" : String(Int(value)))
        try expectGolden(screen.image, name)
    }

    @Test("800x480 RGB565 at 42 percent")
    func smallPanel() throws {
        let screen = try Screen(width: 800, height: 480, format: .rgb565)
        screen.render(model(42, message: "Updating firmware"))
        try expectGolden(screen.image, "800x480-rgb565-42")
    }

    @Test("1280x800 XRGB8888 with a padded stride at 42 percent")
    func paddedStride() throws {
        let stride = 1280 * 4 + 256
        let screen = try Screen(width: 1280, height: 800, stride: stride)
        // Padding bytes are never written.
        let padding = screen.display.base + 1280 * 4
        padding.initializeMemory(as: UInt8.self, repeating: 0xA5, count: 256)
        screen.render(model(42, message: "Installing packages"))
        for row in 0..<800 {
            let p = (screen.display.base + row * stride + 1280 * 4).assumingMemoryBound(to: UInt8.self)
            if row == 0 { #expect((0..<256).allSatisfy { p[$0] == 0xA5 }) }
        }
        try expectGolden(screen.image, "1280x800-padded-42")
    }
}
