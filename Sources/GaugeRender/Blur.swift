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
        let line = Line(capacity: max(width, height), margin: kernel.weights.count)
        defer { line.deallocate() }
        for y in 0..<height {
            let row = pixels + y * stride
            for x in 0..<width { line.values[line.margin + x] = row[x] }
            line.finish(count: width)
            for x in area.x..<area.maxX { row[x] = kernel.value(at: x, in: line) }
        }
        for x in area.x..<area.maxX {
            for y in 0..<height { line.values[line.margin + y] = pixels[y * stride + x] }
            line.finish(count: height)
            for y in area.y..<area.maxY { pixels[y * stride + x] = kernel.value(at: y, in: line) }
        }
    }

    /// One row or column being blurred, with `margin` copies of its end values on each side
    /// (pixman's PAD repeat), and for every position where the run of equal values it
    /// starts ends: a pixel whose taps all read one value needs no sum. The track's
    /// shadow is mostly such pixels (the blank rows above and below the track, the empty
    /// middle of the narrow track).
    private struct Line {
        let margin: Int
        let values: UnsafeMutablePointer<UInt8>
        /// The index of the last value of the run of equal values that starts at each index.
        let runEnds: UnsafeMutablePointer<Int32>

        init(capacity: Int, margin: Int) {
            self.margin = margin
            values = .allocate(capacity: capacity + 2 * margin)
            runEnds = .allocate(capacity: capacity + 2 * margin)
        }

        func deallocate() {
            values.deallocate()
            runEnds.deallocate()
        }

        /// Pads the `count` values just stored at `margin` and finds their runs.
        func finish(count: Int) {
            let first = values[margin], last = values[margin + count - 1]
            for i in 0..<margin {
                values[i] = first
                values[margin + count + i] = last
            }
            var i = count + 2 * margin - 1
            runEnds[i] = Int32(i)
            while i > 0 {
                i -= 1
                runEnds[i] = values[i] == values[i + 1] ? runEnds[i + 1] : Int32(i)
            }
        }
    }

    /// One axis of pixman's Gaussian for `radius`: the taps' weights (16.16 fixed point,
    /// as pixman multiplies them by the other axis's single unit tap) and where the first
    /// tap lies from the pixel it is for.
    private struct Kernel {
        let weights: [Int]
        let firstOffset: Int
        /// What the taps sum to when they all read 1.
        let weightSum: Int
        /// The weights read the same backwards (a Gaussian's are): each pair of taps
        /// mirrored about the middle is summed before its one multiplication.
        let symmetric: Bool

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
            weightSum = weights.reduce(0, &+)
            symmetric = weights.elementsEqual(weights.reversed())
        }

        /// The blurred value of the line's pixel `i`.
        func value(at i: Int, in line: Line) -> UInt8 {
            let first = line.margin + i + firstOffset
            let taps = weights.count
            if Int(line.runEnds[first]) >= first + taps - 1 {
                return UInt8(clamping: (Int(line.values[first]) &* weightSum + 0x8000) >> 16)
            }
            var sum = 0
            weights.withUnsafeBufferPointer { weights in
                let values = line.values + first
                if symmetric {
                    let half = taps / 2
                    for k in 0..<half { sum &+= (Int(values[k]) &+ Int(values[taps - 1 - k])) &* weights[k] }
                    if taps % 2 == 1 { sum &+= Int(values[half]) &* weights[half] }
                } else {
                    for k in 0..<taps { sum &+= Int(values[k]) &* weights[k] }
                }
            }
            return UInt8(clamping: (sum + 0x8000) >> 16)
        }
    }
}
