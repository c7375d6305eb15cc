import CPixman
@testable import GaugeRender
import Testing

/// The copies that stand in for SRC composites on the frame path give the composite's
/// bits, byte for byte.
@Suite("PixmanImage copies")
struct PixmanCopyTests {
    @Test("a repeating tile copied row by row is what pixman's NORMAL repeat composites",
          arguments: [PIXMAN_x8r8g8b8, PIXMAN_r5g6b5])
    func repeatingCopyMatchesComposite(format: pixman_format_code_t) {
        var generator = SystemRandomNumberGenerator()
        let tile = PixmanImage(format: format, width: 37, height: 9)
        let tileBytes = bytes(of: tile)
        for i in tileBytes.indices { tileBytes[i] = UInt8.random(in: 0...255, using: &generator) }
        pixman_image_set_repeat(tile.raw, PIXMAN_REPEAT_NORMAL)
        // Origins left of the tile, inside it and far right of it; rows narrower and wider
        // than the tile (several pieces per row).
        for (originX, width) in [(-5, 20), (0, 37), (3, 34), (36, 2), (-80, 120), (200, 75), (12, 1)] {
            let rect = Rect(x: 4, y: 2, width: width, height: 6)
            let originY = 1
            let copied = PixmanImage(format: format, width: 130, height: 10)
            let composited = PixmanImage(format: format, width: 130, height: 10)
            copied.copy(fromRepeating: tile, rect: rect, sourceOrigin: (originX, originY))
            composited.composite(PIXMAN_OP_SRC, source: tile, rect: rect, sourceOrigin: (originX, originY))
            let a = bytes(of: copied), b = bytes(of: composited)
            let wrong = a.indices.filter { a[$0] != b[$0] }.count
            #expect(wrong == 0, "origin \(originX), width \(width): \(wrong) bytes differ")
            #expect(a.contains { $0 != 0 }, "something was copied")
        }
    }

    private func bytes(of image: PixmanImage) -> UnsafeMutableBufferPointer<UInt8> {
        let count = Int(pixman_image_get_stride(image.raw)) * image.height
        return UnsafeMutableBufferPointer(start: UnsafeMutableRawPointer(pixman_image_get_data(image.raw)!)
            .assumingMemoryBound(to: UInt8.self), count: count)
    }
}
