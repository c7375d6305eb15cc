import Glibc
import CPixman

/// Gaussian blur through pixman's separable convolution filter.
enum Blur {
    /// Blurs an a8 image in place with a Gaussian of roughly `radius` pixels' standard deviation.
    static func apply(to image: PixmanImage, radius: Double) {
        guard radius > 0 else { return }
        let copy = PixmanImage(format: PIXMAN_a8, width: image.width, height: image.height)
        let whole = Rect(x: 0, y: 0, width: image.width, height: image.height)
        copy.composite(PIXMAN_OP_SRC, source: image, rect: whole)
        var count: Int32 = 0
        // pixman's Gaussian sampling kernel has a standard deviation of about half its scale.
        let scale = pixman_fixed_t(radius * 2 * 65536)
        guard let params = pixman_filter_create_separable_convolution(
            &count, scale, scale, PIXMAN_KERNEL_IMPULSE, PIXMAN_KERNEL_IMPULSE,
            PIXMAN_KERNEL_GAUSSIAN, PIXMAN_KERNEL_GAUSSIAN, 0, 0)
        else { return }
        defer { free(params) }
        pixman_image_set_filter(copy.raw, PIXMAN_FILTER_SEPARABLE_CONVOLUTION, params, count)
        pixman_image_set_repeat(copy.raw, PIXMAN_REPEAT_PAD)
        image.composite(PIXMAN_OP_SRC, source: copy, rect: whole)
    }
}
