import CGaugeLinux
import CPixman

/// Gaussian blur of a8 masks: pixman designs the kernel, this applies it.
///
/// pixman's separable convolution filter, composited, gives the blur this produces, but
/// through its general per-pixel fetcher: every tap of every pixel is a repeat check, a
/// pixel fetch and a conversion to 32 bits, which made the track's shadow 44% of the
/// daemon's start-up instructions. Here the same kernel (the weights pixman computes for
/// it) is applied one axis at a time with pixman's own fixed-point arithmetic and edge
/// padding, so each pixel comes out exactly as pixman's composite makes it
/// (`BlurTests` compares the two on random masks).
enum Blur {
    /// Blurs an a8 image in place with a Gaussian of roughly `radius` pixels' standard
    /// deviation, where it counts: `region`'s pixels get the blurred values, the rest of
    /// its columns a horizontal blur only (the vertical pass's input), the other columns
    /// are what they are blurred from.
    ///
    /// Two passes, horizontal then vertical: the horizontal one covers `region`'s columns
    /// in every row (the vertical one reads above and below), the vertical one `region`
    /// alone. Outside the image the nearest edge pixel counts (pixman's PAD repeat).
    static func apply(to image: PixmanImage, radius: Double, region: Rect) {
        guard radius > 0, let kernel = Kernel(radius: radius) else { return }
        let width = image.width, height = image.height
        let area = region.intersection(Rect(x: 0, y: 0, width: width, height: height))
        guard !area.isEmpty, let data = pixman_image_get_data(image.raw) else { return }
        let pixels = UnsafeMutableRawPointer(data).assumingMemoryBound(to: UInt8.self)
        let stride = Int(pixman_image_get_stride(image.raw))
        var line = [UInt8](repeating: 0, count: max(width, height))
        line.withUnsafeMutableBufferPointer { line in
            for y in 0..<height {
                let row = pixels + y * stride
                for x in 0..<width { line[x] = row[x] }
                for x in area.x..<area.maxX { row[x] = kernel.value(at: x, in: line, count: width) }
            }
            for x in area.x..<area.maxX {
                for y in 0..<height { line[y] = pixels[y * stride + x] }
                for y in area.y..<area.maxY { pixels[y * stride + x] = kernel.value(at: y, in: line, count: height) }
            }
        }
    }

    /// One axis of pixman's Gaussian for `radius`: the taps' weights (16.16 fixed point,
    /// as pixman multiplies them by the other axis's single unit tap) and where the first
    /// tap lies from the pixel it is for.
    private struct Kernel {
        let weights: [Int]
        let firstOffset: Int

        init?(radius: Double) {
            var count: Int32 = 0
            // pixman's Gaussian sampling kernel has a standard deviation of about half its scale.
            let scale = pixman_fixed_t(radius * 2 * 65536)
            // The other axis samples a one-pixel box at scale 1: a single tap.
            guard let params = pixman_filter_create_separable_convolution(
                &count, scale, pixman_fixed_t(65536), PIXMAN_KERNEL_IMPULSE, PIXMAN_KERNEL_IMPULSE,
                PIXMAN_KERNEL_GAUSSIAN, PIXMAN_KERNEL_BOX, 0, 0)
            else { return nil }
            defer { free(params) }
            // params: width, height, x and y phase bits (16.16), then the x taps, then the y taps.
            let taps = Int(params[0] >> 16), otherTaps = Int(params[1] >> 16)
            guard taps > 0, otherTaps == 1, Int(count) == 4 + taps + otherTaps else { return nil }
            let other = Int64(params[4 + taps])
            weights = (0..<taps).map { Int((other * Int64(params[4 + $0]) + 0x8000) >> 16) }
            // pixman samples at the pixel's centre and starts `(taps - 1) / 2` pixels before it,
            // rounded as pixman_fixed_to_int rounds (down).
            let offset = ((taps << 16) - 65536) >> 1
            firstOffset = (32768 - 1 - offset) >> 16
        }

        /// The blurred value of `line[i]`, the line's ends repeated beyond it.
        func value(at i: Int, in line: UnsafeMutableBufferPointer<UInt8>, count: Int) -> UInt8 {
            var sum = 0
            let first = i + firstOffset
            weights.withUnsafeBufferPointer { weights in
                if first >= 0, first + weights.count <= count {
                    for k in 0..<weights.count { sum &+= Int(line[first + k]) &* weights[k] }
                } else {
                    for k in 0..<weights.count { sum &+= Int(line[min(max(first + k, 0), count - 1)]) &* weights[k] }
                }
            }
            return UInt8(clamping: (sum + 0x8000) >> 16)
        }
    }
}
