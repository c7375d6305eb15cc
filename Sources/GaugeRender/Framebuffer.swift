/// Pixel memory the scene draws into: a display's buffer, mapped or allocated.
/// The memory is owned elsewhere and must outlive every use of this value.
package struct Framebuffer: @unchecked Sendable {
    package let base: UnsafeMutableRawPointer
    package let width: Int
    package let height: Int
    /// Bytes from one row to the next, at least `width * format.bytesPerPixel`.
    package let stride: Int
    package let format: PixelFormat
    /// Whether the buffer is on screen while it is drawn into (a display with one buffer,
    /// once its first frame is up): whatever is composed in it layer over layer would
    /// show half done for as long as that takes, so a scene composes off screen and
    /// copies (`Scene.draw(into:clip:)`).
    package let isOnScreen: Bool

    package init(
        base: UnsafeMutableRawPointer, width: Int, height: Int, stride: Int, format: PixelFormat, isOnScreen: Bool = false
    ) {
        precondition(width > 0 && height > 0, "framebuffer needs a positive size")
        precondition(stride >= width * format.bytesPerPixel, "stride shorter than a row")
        self.base = base
        self.width = width
        self.height = height
        self.stride = stride
        self.format = format
        self.isOnScreen = isOnScreen
    }

    package var bounds: Rect { Rect(x: 0, y: 0, width: width, height: height) }
}
