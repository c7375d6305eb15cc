import CPixman
import Foundation
import GaugeRender
import Testing

/// A BMP file as firmware writes one: `rows` top row first, each pixel (r, g, b); 24 bits a
/// pixel bottom-up, or 32 with bit fields (blue in the high byte, red in the low) top-down.
private func bmp(_ rows: [[(UInt8, UInt8, UInt8)]], bits: Int = 24) -> [UInt8] {
    let width = rows[0].count, height = rows.count
    let stride = (width * bits / 8 + 3) / 4 * 4
    let header = bits == 32 ? 40 + 12 : 40
    let offset = 14 + header
    func le(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
    var bytes = Array("BM".utf8) + le(offset + stride * height, 4) + le(0, 4) + le(offset, 4)
    bytes += le(40, 4) + le(width, 4) + le(bits == 32 ? -height : height, 4) + le(1, 2) + le(bits, 2)
    bytes += le(bits == 32 ? 3 : 0, 4) + le(stride * height, 4) + le(2835, 4) + le(2835, 4) + le(0, 4) + le(0, 4)
    if bits == 32 { bytes += le(0x0000_00FF, 4) + le(0x0000_FF00, 4) + le(0x00FF_0000, 4) }
    for row in (bits == 32 ? Array(rows) : rows.reversed()) {
        var line: [UInt8] = []
        for (r, g, b) in row { line += bits == 32 ? [r, g, b, 0x7F] : [b, g, r] }
        bytes += line + [UInt8](repeating: 0, count: stride - line.count)
    }
    return bytes
}

private func pixel(_ image: PixmanImage, _ x: Int, _ y: Int) -> UInt32 {
    let data = UnsafeRawPointer(pixman_image_get_data(image.raw)!)
    return (data + y * Int(pixman_image_get_stride(image.raw))).assumingMemoryBound(to: UInt32.self)[x]
}

private let picture: [[(UInt8, UInt8, UInt8)]] = [
    [(255, 0, 0), (0, 255, 0), (0, 0, 255)],
    [(1, 2, 3), (250, 128, 7), (255, 255, 255)],
]

@Suite struct FirmwareLogoTests {
    @Test(arguments: [24, 32])
    func bitmapsDecodeOpaqueTheRightWayUp(bits: Int) throws {
        let image = try BMP.decode(bmp(picture, bits: bits), maxSide: 64).get()
        #expect(image.width == 3 && image.height == 2)
        let expected: [[UInt32]] = [[0xFFFF_0000, 0xFF00_FF00, 0xFF00_00FF], [0xFF01_0203, 0xFFFA_8007, 0xFFFF_FFFF]]
        for y in 0..<2 {
            #expect((0..<3).map { pixel(image, $0, y) } == expected[y], "row \(y), \(bits) bits")
        }
    }

    @Test func whatIsNotAReadableBitmapIsSaidSo() {
        func problem(_ bytes: [UInt8], maxSide: Int = 64) -> String? {
            if case .failure(let error) = BMP.decode(bytes, maxSide: maxSide) { return error.description }
            return nil
        }
        let good = bmp(picture)
        #expect(problem(Array("GIF89a".utf8) + good) == "not a BMP image")
        #expect(problem(Array(good.dropLast(3))) == "a BMP's pixels end after its file (75 bytes)")
        var eightBits = good
        eightBits[28] = 8
        #expect(problem(eightBits)?.hasPrefix("a BMP of 8 bits a pixel") == true)
        #expect(problem(good, maxSide: 2) == "a BMP of 3x2 pixels (at most 2 each way)")
    }

    /// A table as the kernel shows it in sysfs: status, type, offsets, the image.
    private func table(status: String = "1\n", x: Int, y: Int, image: [UInt8]) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bgrt-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (name, value) in [("status", status), ("type", "0\n"), ("version", "1\n"), ("xoffset", "\(x)\n"), ("yoffset", "\(y)\n")] {
            try value.write(toFile: directory + "/" + name, atomically: false, encoding: .utf8)
        }
        try Data(image).write(to: URL(fileURLWithPath: directory + "/image"))
        return directory
    }

    @Test func theTableGivesTheLogoAndWhereTheFirmwareDrewIt() throws {
        let directory = try table(x: 638, y: 300, image: bmp(picture))
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let logo = try FirmwareLogo.read(directory: directory)
        #expect(logo.xOffset == 638 && logo.yOffset == 300 && logo.rotation == 0)
        #expect(pixel(logo.image, 1, 1) == 0xFFFA_8007)
        // Drawn at this size (centred across 1280): kept where it was.
        #expect(logo.placement(width: 1280, height: 800) == Rect(x: 638, y: 300, width: 3, height: 2))
        // At another size: centred across, its middle at 38.2% of the height.
        #expect(logo.placement(width: 1920, height: 1080) == Rect(x: 958, y: 412, width: 3, height: 2))
        #expect(logo.placement(width: 2, height: 2) == nil, "larger than the screen")
    }

    @Test func aLogoTheFirmwareDidNotShowIsNotUsed() throws {
        let directory = try table(status: "0\n", x: 0, y: 0, image: bmp(picture))
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(throws: AssetError("firmware logo: the firmware says it did not display it (status 0)")) {
            try FirmwareLogo.read(directory: directory)
        }
        #expect(throws: AssetError.self) { try FirmwareLogo.read(directory: directory + "/none") }
        let rotated = try table(status: "3\n", x: 0, y: 0, image: bmp(picture))
        defer { try? FileManager.default.removeItem(atPath: rotated) }
        #expect(try FirmwareLogo.read(directory: rotated).rotation == 90)
    }
}
