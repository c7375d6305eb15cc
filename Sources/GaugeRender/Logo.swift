import CPixman

/// A PNG logo as a premultiplied pixman image, scaled with the screen.
enum Logo {
    /// Loads `path` and scales it by `scale` (bilinear); throws a message fit for the log.
    static func load(_ path: String, scale: Double) throws(PNG.Error) -> PixmanImage {
        let png = try PNG.read(path)
        guard png.width <= 4096, png.height <= 4096 else {
            throw PNG.Error(description: "logo \(path) is \(png.width)x\(png.height), larger than 4096x4096")
        }
        let image = PixmanImage(format: PIXMAN_a8r8g8b8, width: png.width, height: png.height)
        let stride = Int(pixman_image_get_stride(image.raw)) / 4
        let data = pixman_image_get_data(image.raw)!
        for y in 0..<png.height {
            for x in 0..<png.width {
                let p = png.pixel(x: x, y: y)
                let a = UInt32(p.a)
                func pre(_ c: UInt8) -> UInt32 { (UInt32(c) * a + 127) / 255 }
                data[y * stride + x] = a << 24 | pre(p.r) << 16 | pre(p.g) << 8 | pre(p.b)
            }
        }
        guard scale != 1 else { return image }
        let w = Int((Double(png.width) * scale).rounded()), h = Int((Double(png.height) * scale).rounded())
        var transform = pixman_transform_t()
        pixman_transform_init_scale(&transform, pixman_fixed_t(65536 / scale), pixman_fixed_t(65536 / scale))
        pixman_image_set_transform(image.raw, &transform)
        pixman_image_set_filter(image.raw, PIXMAN_FILTER_BILINEAR, nil, 0)
        let scaled = PixmanImage(format: PIXMAN_a8r8g8b8, width: w, height: h)
        scaled.composite(PIXMAN_OP_SRC, source: image, rect: Rect(x: 0, y: 0, width: w, height: h))
        return scaled
    }
}
