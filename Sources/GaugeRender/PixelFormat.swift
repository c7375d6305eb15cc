import CPixman

/// A truecolor framebuffer layout. Names follow DRM fourcc order (most significant
/// component first in a little-endian word), so `xrgb8888` is B, G, R, X in memory.
package enum PixelFormat: String, CaseIterable, Sendable {
    case xrgb8888 = "XRGB8888"
    case argb8888 = "ARGB8888"
    case xbgr8888 = "XBGR8888"
    case rgb565 = "RGB565"
    case bgr565 = "BGR565"
    /// 24 bpp packed, B, G, R in memory (DRM `RG24`, pixman `r8g8b8`).
    case rgb888 = "RGB888"
    /// 24 bpp packed, R, G, B in memory (DRM `BG24`, pixman `b8g8r8`).
    case bgr888 = "BGR888"

    package var bytesPerPixel: Int {
        switch self {
        case .xrgb8888, .argb8888, .xbgr8888: 4
        case .rgb565, .bgr565: 2
        case .rgb888, .bgr888: 3
        }
    }

    package var pixman: pixman_format_code_t {
        switch self {
        case .xrgb8888: PIXMAN_x8r8g8b8
        case .argb8888: PIXMAN_a8r8g8b8
        case .xbgr8888: PIXMAN_x8b8g8r8
        case .rgb565: PIXMAN_r5g6b5
        case .bgr565: PIXMAN_b5g6r5
        case .rgb888: PIXMAN_r8g8b8
        case .bgr888: PIXMAN_b8g8r8
        }
    }

    /// Bits per colour channel, smallest first: the precision a picture in this format has.
    package var minimumChannelBits: Int {
        switch self {
        case .rgb565, .bgr565: 5
        default: 8
        }
    }

    /// Parses a name as written on the command line (`xrgb8888`, `RGB565`, ...).
    package init?(name: String) {
        var upper = ""
        for scalar in name.unicodeScalars {
            if scalar >= "a" && scalar <= "z" {
                upper.unicodeScalars.append(Unicode.Scalar(scalar.value - 32)!)
            } else {
                upper.unicodeScalars.append(scalar)
            }
        }
        self.init(rawValue: upper)
    }
}
