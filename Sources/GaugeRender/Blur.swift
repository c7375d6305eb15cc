import CGaugeLinux
import CPixman

/// Gaussian blur through pixman's separable convolution filter.
enum Blur {
    /// Blurs an a8 image in place with a Gaussian of roughly `radius` pixels' standard
    /// deviation, where it counts: only `region`'s pixels get the blurred values (the rest
    /// of the image is what they are blurred from).
    ///
    /// Two passes, horizontal then vertical: pixman applies a separable convolution filter
    /// as the full width × height grid of taps per pixel, which at a 3 px radius is over a
    /// thousand taps and cost the daemon's start-up some 10 ms; one axis at a time it is
    /// two rows of a few dozen. The horizontal pass covers `region`'s columns in every row
    /// (the vertical one reads above and below), the vertical one `region` alone: each
    /// pixel is computed exactly as over the whole image, for a fraction of the taps.
    static func apply(to image: PixmanImage, radius: Double, region: Rect) {
        guard radius > 0 else { return }
        pass(image, radius: radius, horizontal: true, rect: Rect(x: region.x, y: 0, width: region.width, height: image.height))
        pass(image, radius: radius, horizontal: false, rect: region)
    }

    private static func pass(_ image: PixmanImage, radius: Double, horizontal: Bool, rect: Rect) {
        let copy = PixmanImage(format: PIXMAN_a8, width: image.width, height: image.height)
        let whole = Rect(x: 0, y: 0, width: image.width, height: image.height)
        copy.composite(PIXMAN_OP_SRC, source: image, rect: whole)
        var count: Int32 = 0
        // pixman's Gaussian sampling kernel has a standard deviation of about half its scale.
        let scale = pixman_fixed_t(radius * 2 * 65536)
        let one = pixman_fixed_t(65536)
        // The other axis samples a one-pixel box at scale 1: a single tap of weight 1.
        let gaussian = PIXMAN_KERNEL_GAUSSIAN, box = PIXMAN_KERNEL_BOX, impulse = PIXMAN_KERNEL_IMPULSE
        guard let params = pixman_filter_create_separable_convolution(
            &count, horizontal ? scale : one, horizontal ? one : scale, impulse, impulse,
            horizontal ? gaussian : box, horizontal ? box : gaussian, 0, 0)
        else { return }
        defer { free(params) }
        pixman_image_set_filter(copy.raw, PIXMAN_FILTER_SEPARABLE_CONVOLUTION, params, count)
        pixman_image_set_repeat(copy.raw, PIXMAN_REPEAT_PAD)
        image.composite(PIXMAN_OP_SRC, source: copy, rect: rect, sourceOrigin: (rect.x, rect.y))
    }
}
