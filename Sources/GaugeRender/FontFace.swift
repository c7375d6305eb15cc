import CFreeType
import CGaugeShape
import CPixman

/// One FreeType face from a font file, at any pixel size, with its rendered glyphs
/// cached within `glyphCacheBudget` bytes.
final class FontFace {
    private let face: FT_Face
    /// The file FreeType reads the face from, and the stream it reads through, kept
    /// alive with it.
    private let data: FontData
    private let stream: UnsafeMutablePointer<FT_StreamRec>
    let path: String
    private var currentSize = 0
    private var glyphs: [GlyphKey: Glyph] = [:]
    /// Bytes of the glyph images kept.
    private(set) var glyphBytes = 0
    /// HarfBuzz's font for the face, made when a run is first shaped, and the size it was
    /// last told of.
    private var shapingFont: UnsafeMutableRawPointer?
    private var shapingSize = 0

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
        // FreeType reads through this stream for as long as the face lives; it neither
        // frees nor closes a stream it was given.
        let stream = UnsafeMutablePointer<FT_StreamRec>.allocate(capacity: 1)
        stream.initialize(to: FT_StreamRec())
        stream.pointee.size = UInt(data.count)
        stream.pointee.descriptor.pointer = Unmanaged.passUnretained(data).toOpaque()
        stream.pointee.read = { stream, offset, buffer, count in
            guard let stream else { return count == 0 ? 1 : 0 }
            let size = stream.pointee.size
            // A count of 0 is a seek: 0 for success.
            guard count > 0 else { return offset <= size ? 0 : 1 }
            guard let buffer, offset < size else { return 0 }
            let data = Unmanaged<FontData>.fromOpaque(stream.pointee.descriptor.pointer!).takeUnretainedValue()
            return UInt(data.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: Int(min(count, size - offset))),
                                  at: Int(offset)))
        }
        var arguments = FT_Open_Args()
        arguments.flags = FT_UInt(FT_OPEN_STREAM)
        arguments.stream = stream
        var face: FT_Face?
        guard FT_Open_Face(library, &arguments, FT_Long(index), &face) == 0, let face else {
            stream.deallocate()
            throw AssetError("font: \(path) is not a font FreeType reads")
        }
        guard face.pointee.face_flags & FT_Long(FT_FACE_FLAG_SCALABLE) != 0 else {
            FT_Done_Face(face)
            stream.deallocate()
            throw AssetError("font: \(path) is not a scalable font")
        }
        self.face = face
        self.stream = stream
        self.data = data
        self.path = path
    }

    /// The names the font gives its family and style ("DejaVu Sans", "Bold").
    var familyName: String { face.pointee.family_name.map { String(cString: $0) } ?? "" }
    var styleName: String { face.pointee.style_name.map { String(cString: $0) } ?? "" }
    /// Faces in the file (a collection has several).
    var faceCount: Int { Int(face.pointee.num_faces) }
    var glyphCount: Int { Int(face.pointee.num_glyphs) }
    /// A font FreeType knows to be drawn right only by its own TrueType instructions (a few
    /// old CJK fonts whose glyphs those put together).
    var isTricky: Bool { face.pointee.face_flags & FT_Long(FT_FACE_FLAG_TRICKY) != 0 }

    deinit {
        gauge_shape_font_destroy(shapingFont)
        FT_Done_Face(face)
        stream.deallocate()
    }

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

    /// The glyphs of `text[start ..< end]` shaped by HarfBuzz at `size`, in visual order
    /// (advances and offsets in 26.6 pixels); nil when HarfBuzz is not loaded or fails.
    func shape(_ text: [UInt32], from start: Int, to end: Int, rightToLeft: Bool, size: Int) -> [gauge_shaped_glyph]? {
        setSize(size)
        if shapingFont == nil {
            shapingFont = gauge_shape_font(UnsafeMutableRawPointer(face))
        } else if shapingSize != size {
            gauge_shape_font_changed(shapingFont)
        }
        shapingSize = size
        guard let font = shapingFont else { return nil }
        var glyphs = [gauge_shaped_glyph](repeating: gauge_shaped_glyph(), count: (end - start) * 2 + 8)
        while true {
            let count = Int(gauge_shape_run(
                font, text, Int32(text.count), Int32(start), Int32(end - start), rightToLeft ? 1 : 0, &glyphs, Int32(glyphs.count)))
            guard count >= 0 else { return nil }
            guard count > glyphs.count else { return Array(glyphs[..<count]) }
            glyphs = [gauge_shaped_glyph](repeating: gauge_shaped_glyph(), count: count)
        }
    }

    private func setSize(_ size: Int) {
        guard size != currentSize else { return }
        FT_Set_Pixel_Sizes(face, 0, FT_UInt(size))
        currentSize = size
    }
}
