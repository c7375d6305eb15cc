import CPixman
import Foundation
@testable import GaugeRender
import Testing

/// The shadow's blur gives, to the bit, what pixman's separable convolution filter gives
/// when composited (the way the blur was drawn before it was applied by hand).
@Suite("Blur")
struct BlurTests {
    @Test("matches pixman's composited Gaussian on random masks", arguments: [0.5, 1.0, 2.5, 3.75, 5.0, 7.5])
    func matchesPixman(radius: Double) {
        for _ in 0..<4 {
            compareWithPixman(radius: radius) { bytes, width, _, stride in
                var generator = SystemRandomNumberGenerator()
                // Random values, with runs of 0 and 255 as a shadow's mask has.
                for i in bytes.indices where i % stride < width {
                    switch Int.random(in: 0..<4, using: &generator) {
                    case 0: bytes[i] = 0
                    case 1: bytes[i] = 255
                    default: bytes[i] = UInt8.random(in: 0...255, using: &generator)
                    }
                }
            }
        }
    }

    /// Where every tap of a pixel reads one value the sum is skipped: masks of a few flat
    /// rectangles have many such pixels, and their edges and corners many that are not.
    @Test("matches pixman's composited Gaussian on masks of flat rectangles", arguments: [0.5, 1.0, 2.5, 3.75, 5.0, 7.5])
    func matchesPixmanOnFlatAreas(radius: Double) {
        for _ in 0..<4 {
            compareWithPixman(radius: radius) { bytes, width, height, stride in
                var generator = SystemRandomNumberGenerator()
                for _ in 0..<Int.random(in: 1...5, using: &generator) {
                    let x = Int.random(in: 0..<width, using: &generator), y = Int.random(in: 0..<height, using: &generator)
                    let w = Int.random(in: 1...(width - x), using: &generator), h = Int.random(in: 1...(height - y), using: &generator)
                    let value: UInt8 = [0, 255, UInt8.random(in: 0...255, using: &generator)][Int.random(in: 0..<3, using: &generator)]
                    for row in y..<(y + h) { for column in x..<(x + w) { bytes[row * stride + column] = value } }
                }
            }
        }
    }

    /// An image of random size filled by `fill(bytes, width, height, stride)`, blurred over a
    /// random region here and by pixman: every byte the same.
    private func compareWithPixman(
        radius: Double, fill: (UnsafeMutableBufferPointer<UInt8>, Int, Int, Int) -> Void
    ) {
        var generator = SystemRandomNumberGenerator()
        let width = Int.random(in: 1...90, using: &generator), height = Int.random(in: 1...70, using: &generator)
        let x = Int.random(in: 0..<width, using: &generator), y = Int.random(in: 0..<height, using: &generator)
        let region = Rect(x: x, y: y, width: Int.random(in: 1...(width - x), using: &generator),
                          height: Int.random(in: 1...(height - y), using: &generator))
        let image = PixmanImage(format: PIXMAN_a8, width: width, height: height)
        let bytes = bytes(of: image)
        let stride = Int(pixman_image_get_stride(image.raw))
        fill(bytes, width, height, stride)
        let reference = PixmanImage(format: PIXMAN_a8, width: width, height: height)
        copy(image, into: reference)
        pixmanBlur(reference, radius: radius, region: region)
        Blur.apply(to: image, radius: radius, region: region)
        let expected = self.bytes(of: reference), got = self.bytes(of: image)
        let wrong = expected.indices.filter { $0 % stride < width && expected[$0] != got[$0] }.count
        #expect(wrong == 0, "\(wrong) of \(got.count) bytes differ (\(width)x\(height), region \(region), radius \(radius))")
    }

    @Test("blurs only inside the region, and a hard edge softly")
    func blursInsideTheRegion() {
        let image = PixmanImage(format: PIXMAN_a8, width: 40, height: 10)
        let bytes = bytes(of: image)
        let stride = Int(pixman_image_get_stride(image.raw))
        for y in 0..<10 { for x in 20..<40 { bytes[y * stride + x] = 255 } }
        Blur.apply(to: image, radius: 2.5, region: Rect(x: 10, y: 2, width: 20, height: 6))
        #expect(bytes[5 * stride + 9] == 0 && bytes[5 * stride + 30] == 255, "beside the region's columns: untouched")
        let ramp = (10..<30).map { Int(bytes[5 * stride + $0]) }
        #expect(ramp.first! < 10 && ramp.last! > 245, "\(ramp)")
        #expect(zip(ramp, ramp.dropFirst()).allSatisfy { $0 <= $1 }, "a ramp up across the edge: \(ramp)")
        #expect(ramp[9] > 64 && ramp[10] < 192, "half way at the edge: \(ramp)")
    }

    private func bytes(of image: PixmanImage) -> UnsafeMutableBufferPointer<UInt8> {
        let count = Int(pixman_image_get_stride(image.raw)) * image.height
        return UnsafeMutableBufferPointer(start: UnsafeMutableRawPointer(pixman_image_get_data(image.raw)!)
            .assumingMemoryBound(to: UInt8.self), count: count)
    }

    private func copy(_ image: PixmanImage, into other: PixmanImage) {
        other.composite(PIXMAN_OP_SRC, source: image, rect: Rect(x: 0, y: 0, width: image.width, height: image.height))
    }

    /// The blur through pixman's filter: one axis at a time, each a composite of a copy.
    private func pixmanBlur(_ image: PixmanImage, radius: Double, region: Rect) {
        pass(image, radius: radius, horizontal: true, rect: Rect(x: region.x, y: 0, width: region.width, height: image.height))
        pass(image, radius: radius, horizontal: false, rect: region)
    }

    private func pass(_ image: PixmanImage, radius: Double, horizontal: Bool, rect: Rect) {
        let source = PixmanImage(format: PIXMAN_a8, width: image.width, height: image.height)
        copy(image, into: source)
        var count: Int32 = 0
        let scale = pixman_fixed_t(radius * 2 * 65536), one = pixman_fixed_t(65536)
        let params = pixman_filter_create_separable_convolution(
            &count, horizontal ? scale : one, horizontal ? one : scale, PIXMAN_KERNEL_IMPULSE, PIXMAN_KERNEL_IMPULSE,
            horizontal ? PIXMAN_KERNEL_GAUSSIAN : PIXMAN_KERNEL_BOX, horizontal ? PIXMAN_KERNEL_BOX : PIXMAN_KERNEL_GAUSSIAN, 0, 0)!
        defer { free(params) }
        pixman_image_set_filter(source.raw, PIXMAN_FILTER_SEPARABLE_CONVOLUTION, params, count)
        pixman_image_set_repeat(source.raw, PIXMAN_REPEAT_PAD)
        image.composite(PIXMAN_OP_SRC, source: source, rect: rect, sourceOrigin: (rect.x, rect.y))
    }
}
