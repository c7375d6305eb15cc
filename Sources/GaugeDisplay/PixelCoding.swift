import GaugeRender

/// Single-pixel reads and writes in a framebuffer's own layout: what tests and
/// screenshots need to look at one pixel. Whole frames are converted with pixman.
extension PixelFormat {
    /// The colour of the pixel whose first byte is at `p`. Channels narrower than
    /// 8 bits are widened by bit replication (`r5` becomes `r5 << 3 | r5 >> 2`), so
    /// full intensity stays 255 and zero stays 0.
    package func decode(at p: UnsafeRawPointer) -> (r: UInt8, g: UInt8, b: UInt8) {
        switch self {
        case .xrgb8888, .argb8888, .rgb888:
            // B, G, R in memory.
            return (p.load(fromByteOffset: 2, as: UInt8.self),
                    p.load(fromByteOffset: 1, as: UInt8.self),
                    p.load(as: UInt8.self))
        case .xbgr8888, .bgr888:
            // R, G, B in memory.
            return (p.load(as: UInt8.self),
                    p.load(fromByteOffset: 1, as: UInt8.self),
                    p.load(fromByteOffset: 2, as: UInt8.self))
        case .rgb565, .bgr565:
            let v = UInt16(p.load(as: UInt8.self)) | UInt16(p.load(fromByteOffset: 1, as: UInt8.self)) << 8
            let high = Self.widen5(v >> 11)
            let green = Self.widen6(v >> 5)
            let low = Self.widen5(v)
            // RGB565: red in the high bits; BGR565: blue.
            return self == .rgb565 ? (high, green, low) : (low, green, high)
        }
    }

    /// Writes a colour at `p`; narrow channels keep their top bits. The X (or A)
    /// byte of a 32 bpp format is set to 0xff.
    package func encode(r: UInt8, g: UInt8, b: UInt8, at p: UnsafeMutableRawPointer) {
        switch self {
        case .xrgb8888, .argb8888, .rgb888:
            p.storeBytes(of: b, as: UInt8.self)
            p.storeBytes(of: g, toByteOffset: 1, as: UInt8.self)
            p.storeBytes(of: r, toByteOffset: 2, as: UInt8.self)
            if bytesPerPixel == 4 { p.storeBytes(of: 0xff, toByteOffset: 3, as: UInt8.self) }
        case .xbgr8888, .bgr888:
            p.storeBytes(of: r, as: UInt8.self)
            p.storeBytes(of: g, toByteOffset: 1, as: UInt8.self)
            p.storeBytes(of: b, toByteOffset: 2, as: UInt8.self)
            if bytesPerPixel == 4 { p.storeBytes(of: 0xff, toByteOffset: 3, as: UInt8.self) }
        case .rgb565, .bgr565:
            let (high, low) = self == .rgb565 ? (r, b) : (b, r)
            let v = UInt16(high >> 3) << 11 | UInt16(g >> 2) << 5 | UInt16(low >> 3)
            p.storeBytes(of: UInt8(truncatingIfNeeded: v), as: UInt8.self)
            p.storeBytes(of: UInt8(truncatingIfNeeded: v >> 8), toByteOffset: 1, as: UInt8.self)
        }
    }

    private static func widen5(_ v: UInt16) -> UInt8 {
        let c = UInt8(truncatingIfNeeded: v) & 0x1f
        return c << 3 | c >> 2
    }

    private static func widen6(_ v: UInt16) -> UInt8 {
        let c = UInt8(truncatingIfNeeded: v) & 0x3f
        return c << 2 | c >> 4
    }
}
