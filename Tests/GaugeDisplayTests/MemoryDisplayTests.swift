import GaugeDisplay
import GaugeRender
import Testing

/// A colour whose 5/6-bit forms are uneven bit patterns, so widening by bit replication
/// is told apart from shifting: r5 = 10101, g6 = 110011, b5 = 00110.
private let odd565 = (r: UInt8(173), g: UInt8(207), b: UInt8(49))

/// (format, bytes in memory for one pixel, the colour they mean)
private let samples: [(PixelFormat, [UInt8], (r: UInt8, g: UInt8, b: UInt8))] = [
    (.xrgb8888, [0x56, 0x34, 0x12, 0x00], (0x12, 0x34, 0x56)),
    (.argb8888, [0x56, 0x34, 0x12, 0x80], (0x12, 0x34, 0x56)),
    (.xbgr8888, [0x12, 0x34, 0x56, 0x00], (0x12, 0x34, 0x56)),
    // 0xAE66 = 10101 110011 00110 (r, g, b), little-endian.
    (.rgb565, [0x66, 0xAE], odd565),
    // 0x3675 = 00110 110011 10101 (b, g, r), little-endian.
    (.bgr565, [0x75, 0x36], odd565),
    (.rgb888, [0x56, 0x34, 0x12], (0x12, 0x34, 0x56)),
    (.bgr888, [0x12, 0x34, 0x56], (0x12, 0x34, 0x56)),
]

private func bytes(_ display: MemoryDisplay, x: Int, y: Int) -> [UInt8] {
    let p = display.base + y * display.stride + x * display.format.bytesPerPixel
    return (0..<display.format.bytesPerPixel).map { p.load(fromByteOffset: $0, as: UInt8.self) }
}

private func poke(_ display: MemoryDisplay, x: Int, y: Int, _ raw: [UInt8]) {
    let p = display.base + y * display.stride + x * display.format.bytesPerPixel
    for (i, byte) in raw.enumerated() { p.storeBytes(of: byte, toByteOffset: i, as: UInt8.self) }
}

@Suite struct MemoryDisplayTests {
    @Test func coversEveryFormat() {
        #expect(Set(samples.map(\.0)) == Set(PixelFormat.allCases))
    }

    @Test(arguments: samples.indices)
    func decodesRawBytes(_ index: Int) throws {
        let (format, raw, colour) = samples[index]
        let display = try MemoryDisplay(width: 5, height: 3, format: format)
        poke(display, x: 2, y: 1, raw)
        #expect(display.pixel(x: 2, y: 1) == colour, "\(format)")
        // Neighbours still read as the zeroed memory they are.
        for (x, y) in [(1, 1), (3, 1), (2, 0), (2, 2)] {
            #expect(display.pixel(x: x, y: y) == (0, 0, 0))
        }
    }

    @Test(arguments: PixelFormat.allCases)
    func fullIntensityStaysFull(_ format: PixelFormat) throws {
        let display = try MemoryDisplay(width: 4, height: 1, format: format)
        let colours: [(r: UInt8, g: UInt8, b: UInt8)] = [(255, 255, 255), (255, 0, 0), (0, 255, 0), (0, 0, 255)]
        for (x, c) in colours.enumerated() { display.setPixel(x: x, y: 0, r: c.r, g: c.g, b: c.b) }
        for (x, c) in colours.enumerated() { #expect(display.pixel(x: x, y: 0) == c, "\(format) pixel \(x)") }
    }

    @Test(arguments: samples.indices)
    func setPixelWritesTheFormatsBytes(_ index: Int) throws {
        let (format, raw, colour) = samples[index]
        let display = try MemoryDisplay(width: 2, height: 2, format: format)
        display.setPixel(x: 1, y: 1, r: colour.r, g: colour.g, b: colour.b)
        var expected = raw
        if format.bytesPerPixel == 4 { expected[3] = 0xff }
        #expect(bytes(display, x: 1, y: 1) == expected, "\(format)")
        #expect(bytes(display, x: 0, y: 1) == [UInt8](repeating: 0, count: format.bytesPerPixel))
    }

    @Test(arguments: PixelFormat.allCases)
    func paddedStrideLeavesPaddingAlone(_ format: PixelFormat) throws {
        let row = 3 * format.bytesPerPixel
        let stride = (row + 3) / 4 * 4 + 8
        let display = try MemoryDisplay(width: 3, height: 4, format: format, stride: stride)
        #expect(display.stride == stride)
        #expect(display.framebuffer.stride == stride)
        display.fill(r: 255, g: 255, b: 255)
        for y in 0..<4 {
            for offset in row..<stride {
                #expect(display.base.load(fromByteOffset: y * stride + offset, as: UInt8.self) == 0, "row \(y) byte \(offset)")
            }
        }
        // Rows are found through the stride, not the packed width.
        let (_, raw, colour) = samples.first { $0.0 == format }!
        poke(display, x: 1, y: 2, raw)
        #expect(display.pixel(x: 1, y: 2) == colour)
        #expect(display.pixel(x: 1, y: 1) == (255, 255, 255))
        #expect(display.pixel(x: 1, y: 3) == (255, 255, 255))
    }

    @Test func fillClipsToTheRectangle() throws {
        let display = try MemoryDisplay(width: 4, height: 4, format: .rgb565)
        display.fill(Rect(x: 2, y: 2, width: 10, height: 10), r: 0, g: 255, b: 0)
        #expect(display.pixel(x: 1, y: 1) == (0, 0, 0))
        #expect(display.pixel(x: 2, y: 2) == (0, 255, 0))
        #expect(display.pixel(x: 3, y: 3) == (0, 255, 0))
        #expect(display.pixel(x: 3, y: 1) == (0, 0, 0))
    }

    @Test(arguments: PixelFormat.allCases)
    func rgbaBytesAgreeWithPixel(_ format: PixelFormat) throws {
        // An odd width and a padded stride, so pixman's conversion has to honour both.
        let width = 7, height = 5
        let stride = MemoryDisplay.packedStride(width: width, format: format) + 4
        let display = try MemoryDisplay(width: width, height: height, format: format, stride: stride)
        var seed: UInt32 = 12345
        for y in 0..<height {
            for x in 0..<width {
                seed = seed &* 1_103_515_245 &+ 12345
                display.setPixel(x: x, y: y, r: UInt8(truncatingIfNeeded: seed >> 8),
                                 g: UInt8(truncatingIfNeeded: seed >> 16), b: UInt8(truncatingIfNeeded: seed >> 24))
            }
        }
        if format == .argb8888 { poke(display, x: 0, y: 0, [1, 2, 3, 0]) }  // alpha 0 still reads opaque
        let rgba = display.rgbaBytes()
        #expect(rgba.count == width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                let p = display.pixel(x: x, y: y)
                #expect(rgba[i..<i + 4].elementsEqual([p.r, p.g, p.b, 255]), "\(format) (\(x), \(y))")
            }
        }
    }

    @Test func presentRecordsDamageAndCountsFrames() throws {
        let display = try MemoryDisplay(width: 16, height: 8)
        #expect(display.frameCount == 0)
        #expect(display.lastDamage == nil)
        let target = try #require(display.beginFrame())
        #expect(target.staleRegion.isEmpty)
        #expect(target.buffer.base == display.base)
        #expect(target.buffer.bounds == Rect(x: 0, y: 0, width: 16, height: 8))
        try display.present(damage: Rect(x: 1, y: 2, width: 3, height: 4))
        try display.present(damage: Rect(x: 0, y: 0, width: 16, height: 8))
        #expect(display.frameCount == 2)
        #expect(display.lastDamage == Rect(x: 0, y: 0, width: 16, height: 8))
        #expect(display.beginFrame()?.staleRegion.isEmpty == true)
    }

    @Test func memoryStartsZeroed() throws {
        let display = try MemoryDisplay(width: 33, height: 9, format: .bgr888)
        #expect((0..<display.byteCount).allSatisfy { display.base.load(fromByteOffset: $0, as: UInt8.self) == 0 })
    }

    @Test func parsesGoodSpecs() throws {
        let plain = try MemoryDisplay(spec: "1920x1080")
        #expect((plain.width, plain.height, plain.format, plain.stride) == (1920, 1080, .xrgb8888, 7680))
        let named = try MemoryDisplay(spec: "1920x1080:XRGB8888")
        #expect(named.format == .xrgb8888)
        let small = try MemoryDisplay(spec: "800x600:rgb565")
        #expect((small.width, small.height, small.format, small.stride) == (800, 600, .rgb565, 1600))
        let padded = try MemoryDisplay(spec: "1366x768:RGB888:4112")
        #expect((padded.format, padded.stride) == (.rgb888, 4112))
        let odd = try MemoryDisplay(spec: "3x2:BGR888")
        #expect(odd.stride == 12)  // 9 bytes rounded up to a multiple of 4
        for format in PixelFormat.allCases {
            #expect(try MemoryDisplay(spec: "2x2:\(format.rawValue)").format == format)
        }
    }

    @Test(arguments: [
        "", "1920", "1920x", "x1080", "1920x1080x3", "0x10", "10x0", "-1x5", "+10x10", " 10x10",
        "10 x10", "99999x10", "10x16385", "1e3x10", "10x10:", "10x10:FOO", "10x10:XRGB8888:",
        "10x10:XRGB8888:39", "10x10:XRGB8888:42", "10x10:XRGB8888:abc", "10x10:XRGB8888:-40",
        "10x10:XRGB8888:40:1", "10x10:XRGB8888:9999999999",
    ])
    func rejectsBadSpecs(_ spec: String) {
        #expect {
            _ = try MemoryDisplay(spec: spec)
        } throws: { error in
            let text = (error as? DisplayError)?.message ?? ""
            return text.contains("\"\(spec)\"") && text.contains("WIDTHxHEIGHT")
        }
    }

    @Test func badSpecErrorsSayWhatIsWrong() {
        func message(_ spec: String) -> String {
            do {
                _ = try MemoryDisplay(spec: spec)
                return ""
            } catch {
                return error.message
            }
        }
        #expect(message("10x10:FOO").contains("unknown pixel format \"FOO\""))
        #expect(message("10x10:FOO").contains("RGB565"))
        #expect(message("10x10:XRGB8888:39").contains("shorter than a row"))
        #expect(message("10x10:XRGB8888:42").contains("multiple of 4"))
        #expect(message("0x10").contains("outside"))
    }

    @Test func rejectsBadGeometryDirectly() {
        #expect(throws: DisplayError.self) { try MemoryDisplay(width: 0, height: 1) }
        #expect(throws: DisplayError.self) { try MemoryDisplay(width: 4, height: 4, format: .rgb888, stride: 11) }
        #expect(throws: DisplayError.self) { try MemoryDisplay(width: 4, height: 4, format: .rgb888, stride: 14) }
    }
}
