import GaugeRender

/// An fbdev pixel layout as `fb_var_screeninfo` describes it, and the `PixelFormat`
/// that stores exactly that layout.
package struct FBPixelLayout: Equatable, Sendable {
    /// One channel's place in a pixel: `fb_bitfield`.
    package struct Field: Equatable, Sendable {
        package var offset: Int
        package var length: Int
        /// Non-zero when the most significant bit is on the right (never seen on truecolor
        /// hardware; not supported).
        package var msbRight: Bool

        package init(offset: Int, length: Int, msbRight: Bool = false) {
            self.offset = offset
            self.length = length
            self.msbRight = msbRight
        }
    }

    package var bitsPerPixel: Int
    package var red: Field
    package var green: Field
    package var blue: Field
    package var transp: Field

    package init(bitsPerPixel: Int, red: Field, green: Field, blue: Field, transp: Field = Field(offset: 0, length: 0)) {
        self.bitsPerPixel = bitsPerPixel
        self.red = red
        self.green = green
        self.blue = blue
        self.transp = transp
    }

    /// The format with this layout, or nil when Gauge has none (RGB555, 10-bit channels,
    /// ABGR, MSB-right fields). Little-endian memory: for 24 bpp, red at offset 16 means
    /// B, G, R bytes (`RGB888`); for 32 bpp an alpha field of 8 bits at 24 is ARGB, no alpha
    /// field is XRGB.
    package var pixelFormat: PixelFormat? {
        guard !red.msbRight, !green.msbRight, !blue.msbRight else { return nil }
        func at(_ field: Field, _ offset: Int, _ length: Int) -> Bool {
            field.offset == offset && field.length == length
        }
        let noAlpha = transp.length == 0
        switch bitsPerPixel {
        case 16:
            guard noAlpha, at(green, 5, 6) else { return nil }
            if at(red, 11, 5), at(blue, 0, 5) { return .rgb565 }
            if at(red, 0, 5), at(blue, 11, 5) { return .bgr565 }
        case 24:
            guard noAlpha, at(green, 8, 8) else { return nil }
            if at(red, 16, 8), at(blue, 0, 8) { return .rgb888 }
            if at(red, 0, 8), at(blue, 16, 8) { return .bgr888 }
        case 32:
            guard at(green, 8, 8) else { return nil }
            if at(red, 16, 8), at(blue, 0, 8) {
                if noAlpha { return .xrgb8888 }
                if at(transp, 24, 8) { return .argb8888 }
            }
            if at(red, 0, 8), at(blue, 16, 8), noAlpha { return .xbgr8888 }
        default:
            break
        }
        return nil
    }

    /// "16 bpp r11:5 g5:6 b0:5" for messages about layouts Gauge cannot use.
    package var description: String {
        var text = "\(bitsPerPixel) bpp r\(red.offset):\(red.length) g\(green.offset):\(green.length) b\(blue.offset):\(blue.length)"
        if transp.length > 0 { text += " a\(transp.offset):\(transp.length)" }
        return text
    }
}
