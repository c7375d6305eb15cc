import CPixman

/// The pixman images wrapping the framebuffers a scene draws into, kept while a buffer
/// stays the same (address, size, stride, format): a display's two or three buffers are
/// wrapped once, not at every frame.
struct TargetImages {
    private var images: [UnsafeMutableRawPointer: PixmanImage] = [:]
    private var last: (base: UnsafeMutableRawPointer, width: Int, height: Int, stride: Int, format: PixelFormat, image: PixmanImage)?

    /// The image drawing into `buffer`.
    mutating func image(for buffer: Framebuffer) -> PixmanImage {
        if let last, last.base == buffer.base, last.width == buffer.width, last.height == buffer.height,
            last.stride == buffer.stride, last.format == buffer.format
        {
            return last.image
        }
        let image = wrapped(buffer)
        last = (buffer.base, buffer.width, buffer.height, buffer.stride, buffer.format, image)
        return image
    }

    private mutating func wrapped(_ buffer: Framebuffer) -> PixmanImage {
        if let cached = images[buffer.base], cached.width == buffer.width, cached.height == buffer.height,
            pixman_image_get_format(cached.raw) == buffer.format.pixman,
            Int(pixman_image_get_stride(cached.raw)) == buffer.stride
        {
            return cached
        }
        if images.count > 4 { images.removeAll() }
        let image = PixmanImage(wrapping: buffer)
        images[buffer.base] = image
        return image
    }
}
