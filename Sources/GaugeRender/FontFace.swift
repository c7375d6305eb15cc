import CFreeType
import CPixman

/// One FreeType face from a font file's bytes, at any pixel size, with its rendered glyphs
/// cached within `glyphCacheBudget` bytes.
final class FontFace {
    private let face: FT_Face
    /// The bytes FreeType reads the face from, kept alive with it.
    private let data: FontData
    let path: String
    private var currentSize = 0
    private var glyphs: [GlyphKey: Glyph] = [:]
    /// Bytes of the glyph images kept.
    private(set) var glyphBytes = 0

    /// Bytes of glyph images one face keeps; past it the cache starts over (text that
    /// cycles through thousands of CJK characters costs renders, not memory).
    static let glyphCacheBudget = 2 << 20

    struct GlyphKey: Hashable {
        var index: UInt32
        var size: Int
    }

    /// An anti-aliased glyph coverage image with its placement relative to the pen.
    struct Glyph {
        var image: PixmanImage?
        var left: Int
        var top: Int
        var advance: Double
    }

    /// Opens the face in `data` (the file at `path`); throws when FreeType cannot read it
    /// or it is not scalable.
    init(library: FT_Library, data: FontData, path: String, index: Int = 0) throws(AssetError) {
        var face: FT_Face?
        let base = data.bytes.baseAddress!.assumingMemoryBound(to: FT_Byte.self)
        guard FT_New_Memory_Face(library, base, FT_Long(data.count), FT_Long(index), &face) == 0, let face else {
            throw AssetError("font: \(path) is not a font FreeType reads")
        }
        guard face.pointee.face_flags & FT_Long(FT_FACE_FLAG_SCALABLE) != 0 else {
            FT_Done_Face(face)
            throw AssetError("font: \(path) is not a scalable font")
        }
        self.face = face
        self.data = data
        self.path = path
    }

    deinit { FT_Done_Face(face) }

    func glyphIndex(for scalar: Unicode.Scalar) -> UInt32? {
        let index = FT_Get_Char_Index(face, FT_ULong(scalar.value))
        return index == 0 ? nil : index
    }

    /// Ascent and descent (positive) in pixels at `size`.
    func verticalMetrics(size: Int) -> (ascent: Int, descent: Int) {
        setSize(size)
        let m = face.pointee.size.pointee.metrics
        return (Int((Double(m.ascender) / 64).rounded(.up)), Int((Double(-m.descender) / 64).rounded(.up)))
    }

    func glyph(index: UInt32, size: Int) -> Glyph {
        let key = GlyphKey(index: index, size: size)
        if let cached = glyphs[key] { return cached }
        setSize(size)
        let loadRender: Int32 = 1 << 2
        let targetLight: Int32 = Int32(FT_RENDER_MODE_LIGHT.rawValue & 15) << 16
        var glyph = Glyph(image: nil, left: 0, top: 0, advance: 0)
        if FT_Load_Glyph(face, index, loadRender | targetLight) == 0, let slot = face.pointee.glyph {
            let bitmap = slot.pointee.bitmap
            glyph.left = Int(slot.pointee.bitmap_left)
            glyph.top = Int(slot.pointee.bitmap_top)
            glyph.advance = Double(slot.pointee.advance.x) / 64
            if bitmap.width > 0, bitmap.rows > 0, bitmap.pixel_mode == UInt8(FT_PIXEL_MODE_GRAY.rawValue),
                let src = bitmap.buffer
            {
                let image = PixmanImage(format: PIXMAN_a8, width: Int(bitmap.width), height: Int(bitmap.rows))
                let dst = pixman_image_get_data(image.raw)!.withMemoryRebound(to: UInt8.self, capacity: 1) { $0 }
                let dstStride = Int(pixman_image_get_stride(image.raw))
                for row in 0..<Int(bitmap.rows) {
                    (dst + row * dstStride).update(from: src + row * Int(bitmap.pitch), count: Int(bitmap.width))
                }
                glyph.image = image
            }
        }
        let bytes = 64 + (glyph.image.map { $0.width * $0.height } ?? 0)
        if glyphBytes + bytes > Self.glyphCacheBudget {
            glyphs.removeAll()
            glyphBytes = 0
        }
        glyphs[key] = glyph
        glyphBytes += bytes
        return glyph
    }

    private func setSize(_ size: Int) {
        guard size != currentSize else { return }
        FT_Set_Pixel_Sizes(face, 0, FT_UInt(size))
        currentSize = size
    }
}
