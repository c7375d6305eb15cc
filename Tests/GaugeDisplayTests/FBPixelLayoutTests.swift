@testable import GaugeDisplay
import GaugeRender
import Testing

private typealias F = FBPixelLayout.Field

/// What fbdev drivers report for each layout (vesafb, efifb, simplefb, DRM fbdev
/// emulation, panel drivers), and the format it must map to.
private let layouts: [(String, FBPixelLayout, PixelFormat?)] = [
    ("RGB565", FBPixelLayout(bitsPerPixel: 16, red: F(offset: 11, length: 5), green: F(offset: 5, length: 6), blue: F(offset: 0, length: 5)), .rgb565),
    ("BGR565", FBPixelLayout(bitsPerPixel: 16, red: F(offset: 0, length: 5), green: F(offset: 5, length: 6), blue: F(offset: 11, length: 5)), .bgr565),
    ("RGB888 packed", FBPixelLayout(bitsPerPixel: 24, red: F(offset: 16, length: 8), green: F(offset: 8, length: 8), blue: F(offset: 0, length: 8)), .rgb888),
    ("BGR888 packed", FBPixelLayout(bitsPerPixel: 24, red: F(offset: 0, length: 8), green: F(offset: 8, length: 8), blue: F(offset: 16, length: 8)), .bgr888),
    ("XRGB8888", FBPixelLayout(bitsPerPixel: 32, red: F(offset: 16, length: 8), green: F(offset: 8, length: 8), blue: F(offset: 0, length: 8)), .xrgb8888),
    ("XRGB8888, empty alpha at 24", FBPixelLayout(bitsPerPixel: 32, red: F(offset: 16, length: 8), green: F(offset: 8, length: 8), blue: F(offset: 0, length: 8), transp: F(offset: 24, length: 0)), .xrgb8888),
    ("XBGR8888", FBPixelLayout(bitsPerPixel: 32, red: F(offset: 0, length: 8), green: F(offset: 8, length: 8), blue: F(offset: 16, length: 8)), .xbgr8888),
    ("ARGB8888", FBPixelLayout(bitsPerPixel: 32, red: F(offset: 16, length: 8), green: F(offset: 8, length: 8), blue: F(offset: 0, length: 8), transp: F(offset: 24, length: 8)), .argb8888),
    // Layouts Gauge has no format for: refused, never drawn wrongly.
    ("ABGR8888", FBPixelLayout(bitsPerPixel: 32, red: F(offset: 0, length: 8), green: F(offset: 8, length: 8), blue: F(offset: 16, length: 8), transp: F(offset: 24, length: 8)), nil),
    ("RGB555", FBPixelLayout(bitsPerPixel: 16, red: F(offset: 10, length: 5), green: F(offset: 5, length: 5), blue: F(offset: 0, length: 5)), nil),
    ("ARGB1555", FBPixelLayout(bitsPerPixel: 16, red: F(offset: 10, length: 5), green: F(offset: 5, length: 5), blue: F(offset: 0, length: 5), transp: F(offset: 15, length: 1)), nil),
    ("XRGB2101010", FBPixelLayout(bitsPerPixel: 32, red: F(offset: 20, length: 10), green: F(offset: 10, length: 10), blue: F(offset: 0, length: 10)), nil),
    ("8 bpp pseudocolor", FBPixelLayout(bitsPerPixel: 8, red: F(offset: 0, length: 8), green: F(offset: 0, length: 8), blue: F(offset: 0, length: 8)), nil),
    ("MSB right", FBPixelLayout(bitsPerPixel: 16, red: F(offset: 11, length: 5, msbRight: true), green: F(offset: 5, length: 6), blue: F(offset: 0, length: 5)), nil),
    ("24 bpp with alpha", FBPixelLayout(bitsPerPixel: 24, red: F(offset: 16, length: 8), green: F(offset: 8, length: 8), blue: F(offset: 0, length: 8), transp: F(offset: 0, length: 8)), nil),
]

@Test(arguments: layouts.indices)
func fbdevLayoutMapsToFormat(_ index: Int) {
    let (name, layout, expected) = layouts[index]
    #expect(layout.pixelFormat == expected, "\(name): \(layout.description)")
}

@Test func fbdevLayoutDescriptionNamesTheFields() {
    let layout = FBPixelLayout(
        bitsPerPixel: 32, red: F(offset: 16, length: 8), green: F(offset: 8, length: 8),
        blue: F(offset: 0, length: 8), transp: F(offset: 24, length: 8))
    #expect(layout.description == "32 bpp r16:8 g8:8 b0:8 a24:8")
}

/// Each mapped format stores a pure red where the layout's red field says.
@Test(arguments: layouts.indices)
func fbdevLayoutRedLandsInTheRedField(_ index: Int) {
    let (_, layout, expected) = layouts[index]
    guard let format = expected else { return }
    var bytes = [UInt8](repeating: 0, count: 4)
    bytes.withUnsafeMutableBytes { format.encode(r: 255, g: 0, b: 0, at: $0.baseAddress!) }
    var value: UInt32 = 0
    for i in 0..<format.bytesPerPixel { value |= UInt32(bytes[i]) << (8 * UInt32(i)) }
    let redMask = UInt32((1 << layout.red.length) - 1) << UInt32(layout.red.offset)
    #expect(value & redMask == redMask)
    #expect(value & ~redMask & ~(layout.transp.length > 0 || format.bytesPerPixel == 4 ? 0xff00_0000 : 0) == 0)
}
