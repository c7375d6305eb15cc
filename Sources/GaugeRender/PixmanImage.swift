import CGaugeLinux
import CPixman

/// An owned reference to a pixman image (unreferenced on deinit).
package final class PixmanImage {
    package let raw: OpaquePointer

    package init(_ raw: OpaquePointer) {
        self.raw = raw
    }

    /// A new image with its own zeroed memory.
    package convenience init(format: pixman_format_code_t, width: Int, height: Int) {
        guard let image = pixman_image_create_bits(format, Int32(width), Int32(height), nil, 0) else {
            fatalError("pixman could not allocate a \(width)x\(height) image")
        }
        self.init(image)
    }

    /// An image over memory owned elsewhere (a display buffer).
    package convenience init(wrapping buffer: Framebuffer) {
        guard let image = pixman_image_create_bits_no_clear(
            buffer.format.pixman, Int32(buffer.width), Int32(buffer.height),
            buffer.base.assumingMemoryBound(to: UInt32.self), Int32(buffer.stride))
        else { fatalError("pixman refused a \(buffer.width)x\(buffer.height) framebuffer") }
        self.init(image)
    }

    /// A solid colour source.
    package convenience init(solid color: Color) {
        var c = color.pixman
        self.init(pixman_image_create_solid_fill(&c)!)
    }

    deinit { pixman_image_unref(raw) }

    package var width: Int { Int(pixman_image_get_width(raw)) }
    package var height: Int { Int(pixman_image_get_height(raw)) }

    /// `op` of `source` (through `mask`, if any) onto `self` over `rect` in this image's
    /// coordinates; `sourceOrigin`/`maskOrigin` are the source and mask points drawn at `rect`'s origin.
    package func composite(
        _ op: pixman_op_t, source: PixmanImage, mask: PixmanImage? = nil, rect: Rect,
        sourceOrigin: (x: Int, y: Int) = (0, 0), maskOrigin: (x: Int, y: Int) = (0, 0)
    ) {
        guard !rect.isEmpty else { return }
        pixman_image_composite32(
            op, source.raw, mask?.raw, raw,
            Int32(sourceOrigin.x), Int32(sourceOrigin.y),
            Int32(maskOrigin.x), Int32(maskOrigin.y),
            Int32(rect.x), Int32(rect.y), Int32(rect.width), Int32(rect.height))
    }

    /// Copies `rect` from `source`: row by row when both have the same pixel format (a
    /// cached region going to the display is exactly that), else a SRC composite, which
    /// converts.
    package func copy(from source: PixmanImage, rect: Rect, sourceOrigin: (x: Int, y: Int)) {
        guard sourceOrigin.x >= 0, sourceOrigin.x + rect.width <= source.width else {
            composite(PIXMAN_OP_SRC, source: source, rect: rect, sourceOrigin: sourceOrigin)
            return
        }
        copy(fromRepeating: source, rect: rect, sourceOrigin: sourceOrigin)
    }

    /// Copies `rect` from `source` laid side by side without end, as a tile with NORMAL
    /// repeat is drawn: each row in pieces no wider than `source` when both have the same
    /// pixel format and the rows lie within `source` (the bar's interior tile, once per
    /// animated frame), else a SRC composite (which repeats as `source` says). Rows that
    /// lie within `source` across too are copied in one piece: `copy(from:)`.
    package func copy(fromRepeating source: PixmanImage, rect: Rect, sourceOrigin: (x: Int, y: Int)) {
        guard !rect.isEmpty else { return }
        let format = pixman_image_get_format(raw)
        let tileWidth = source.width
        guard format == pixman_image_get_format(source.raw), tileWidth > 0,
            sourceOrigin.y >= 0, sourceOrigin.y + rect.height <= source.height,
            rect.x >= 0, rect.y >= 0, rect.maxX <= width, rect.maxY <= height
        else {
            composite(PIXMAN_OP_SRC, source: source, rect: rect, sourceOrigin: sourceOrigin)
            return
        }
        let bytesPerPixel = Self.bytesPerPixel(format)
        let srcStride = Int(pixman_image_get_stride(source.raw)), dstStride = Int(pixman_image_get_stride(raw))
        let start = (sourceOrigin.x % tileWidth + tileWidth) % tileWidth
        // Each row: the tile from `start` to its end, then whole tiles from its left edge,
        // then what is left; the same pieces in every row.
        let first = min(rect.width, tileWidth - start) * bytesPerPixel
        let rowBytes = rect.width * bytesPerPixel, tileBytes = tileWidth * bytesPerPixel
        var tileRow = UnsafeRawPointer(pixman_image_get_data(source.raw)!) + sourceOrigin.y * srcStride
        var dst = UnsafeMutableRawPointer(pixman_image_get_data(raw)!) + rect.y * dstStride + rect.x * bytesPerPixel
        for _ in 0..<rect.height {
            dst.copyMemory(from: tileRow + start * bytesPerPixel, byteCount: first)
            var done = first
            while done < rowBytes {
                let count = min(rowBytes - done, tileBytes)
                (dst + done).copyMemory(from: tileRow, byteCount: count)
                done += count
            }
            tileRow += srcStride
            dst += dstStride
        }
    }

    /// PIXMAN_FORMAT_BPP, which Swift cannot import, in bytes.
    static func bytesPerPixel(_ format: pixman_format_code_t) -> Int {
        Int((format.rawValue >> 24) & 0xff) << Int((format.rawValue >> 22) & 3) / 8
    }

    /// Fills `rect` with `color` using `op` (SRC replaces, OVER blends).
    package func fill(_ rect: Rect, color: Color, op: pixman_op_t = PIXMAN_OP_SRC) {
        guard !rect.isEmpty else { return }
        var c = color.pixman
        var box = pixman_box32_t(x1: Int32(rect.x), y1: Int32(rect.y), x2: Int32(rect.maxX), y2: Int32(rect.maxY))
        _ = pixman_image_fill_boxes(op, raw, &c, 1, &box)
    }

    /// A copy of this (premultiplied ARGB) image at `width`x`height`: bilinear when it
    /// grows, averaged over each destination pixel's footprint when it shrinks (bilinear
    /// alone would skip most source pixels of a large picture made small).
    package func scaled(toWidth w: Int, height h: Int) -> PixmanImage {
        let sx = Double(width) / Double(w), sy = Double(height) / Double(h)
        var transform = pixman_transform_t()
        pixman_transform_init_scale(&transform, pixman_fixed_t((sx) * 65536), pixman_fixed_t((sy) * 65536))
        pixman_image_set_transform(raw, &transform)
        defer { pixman_image_set_transform(raw, nil); pixman_image_set_filter(raw, PIXMAN_FILTER_NEAREST, nil, 0) }
        if sx > 1 || sy > 1 {
            var count: Int32 = 0
            let params = pixman_filter_create_separable_convolution(
                &count, pixman_fixed_t((max(sx, 1)) * 65536), pixman_fixed_t((max(sy, 1)) * 65536),
                PIXMAN_KERNEL_IMPULSE, PIXMAN_KERNEL_IMPULSE, PIXMAN_KERNEL_BOX, PIXMAN_KERNEL_BOX, 1, 1)
            pixman_image_set_filter(raw, PIXMAN_FILTER_SEPARABLE_CONVOLUTION, params, count)
            free(params)
        } else {
            pixman_image_set_filter(raw, PIXMAN_FILTER_BILINEAR, nil, 0)
        }
        let scaled = PixmanImage(format: PIXMAN_a8r8g8b8, width: w, height: h)
        scaled.composite(PIXMAN_OP_SRC, source: self, rect: Rect(x: 0, y: 0, width: w, height: h))
        return scaled
    }
}
