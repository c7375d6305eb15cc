import GaugeDisplay
import GaugeRender
import Testing

@Suite("PNG band by band")
struct BandedPNGTests {
    /// The scene's current frame as a PNG made `bandRows` rows at a time.
    private func bandedPNG(_ screen: Screen, bandRows: Int) throws -> [UInt8] {
        let display = screen.display
        let stride = MemoryDisplay.packedStride(width: display.width, format: display.format)
        let memory = UnsafeMutableRawPointer.allocate(byteCount: stride * bandRows, alignment: 64)
        defer { memory.deallocate() }
        // Garbage in the band: every pixel must be drawn, none left from before.
        memory.initializeMemory(as: UInt8.self, repeating: 0x5a, count: stride * bandRows)
        return try PNG.encode(width: display.width, height: display.height, bandRows: bandRows) { y, rows, rgba in
            let band = Framebuffer(base: memory, width: display.width, height: rows, stride: stride, format: display.format)
            screen.scene.draw(rows: y..<(y + rows), into: band)
            PNG.convert(band, toRGBA: rgba)
        }
    }

    @Test("drawn and encoded a band at a time, the frame is the same file as drawn whole and encoded at once",
          arguments: [PixelFormat.xrgb8888, .rgb565, .argb8888])
    func sameFile(format: PixelFormat) throws {
        let screen = try Screen(width: 640, height: 360, format: format)
        screen.render(model(42, message: "Copying files", title: "Installing"), at: 0.7)
        let whole = try PNG.encode(screen.image)
        // 7 rows: the last band is short (360 = 51 * 7 + 3), and bands cut the bar and the text.
        for bandRows in [1, 7, 32, 360, 1000] {
            #expect(try bandedPNG(screen, bandRows: bandRows) == whole, "\(format), bands of \(bandRows) rows")
        }
    }

    @Test("libpng's error comes back as a thrown error, not a crash")
    func error() {
        // Wider than libpng writes (its limit is 1,000,000 pixels a row).
        #expect {
            _ = try PNG.encode(width: 1_000_001, height: 1, bandRows: 1) { _, _, _ in Issue.record("no row is asked for") }
        } throws: { error in
            (error as? PNG.Error)?.description.contains("IHDR") == true
        }
    }
}
