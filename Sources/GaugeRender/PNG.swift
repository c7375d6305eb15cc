import CPNG
import CPixman

/// PNG files through libpng's simplified API.
public enum PNG {
    public struct Error: Swift.Error, CustomStringConvertible {
        public let description: String
    }

    /// An 8-bit RGBA picture, rows tightly packed.
    public struct Image: Equatable, Sendable {
        public var width: Int
        public var height: Int
        public var rgba: [UInt8]

        public init(width: Int, height: Int, rgba: [UInt8]) {
            precondition(rgba.count == width * height * 4)
            self.width = width
            self.height = height
            self.rgba = rgba
        }

        public func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
            let i = (y * width + x) * 4
            return (rgba[i], rgba[i + 1], rgba[i + 2], rgba[i + 3])
        }
    }

    private static let formatRGBA: UInt32 = 3  // PNG_FORMAT_RGBA

    /// The whole framebuffer as RGBA, converted by pixman from its format (formats
    /// without alpha read as opaque).
    public static func image(of buffer: Framebuffer) -> Image {
        var rgba = [UInt8](repeating: 0, count: buffer.width * buffer.height * 4)
        rgba.withUnsafeMutableBytes { bytes in
            let dst = PixmanImage(pixman_image_create_bits_no_clear(
                PIXMAN_a8b8g8r8, Int32(buffer.width), Int32(buffer.height),
                bytes.baseAddress!.assumingMemoryBound(to: UInt32.self), Int32(buffer.width * 4))!)
            dst.composite(PIXMAN_OP_SRC, source: PixmanImage(wrapping: buffer), rect: buffer.bounds)
        }
        return Image(width: buffer.width, height: buffer.height, rgba: rgba)
    }

    public static func write(_ image: Image, to path: String) throws(Error) {
        var png = png_image()
        png.version = UInt32(PNG_IMAGE_VERSION)
        png.width = UInt32(image.width)
        png.height = UInt32(image.height)
        png.format = formatRGBA
        let ok = image.rgba.withUnsafeBytes { bytes in
            png_image_write_to_file(&png, path, 0, bytes.baseAddress, Int32(image.width * 4), nil)
        }
        defer { png_image_free(&png) }
        guard ok != 0 else { throw Error(description: "cannot write PNG \(path): \(message(of: png))") }
    }

    public static func write(_ buffer: Framebuffer, to path: String) throws(Error) {
        try write(image(of: buffer), to: path)
    }

    public static func read(_ path: String) throws(Error) -> Image {
        var png = png_image()
        png.version = UInt32(PNG_IMAGE_VERSION)
        guard png_image_begin_read_from_file(&png, path) != 0 else {
            throw Error(description: "cannot read PNG \(path): \(message(of: png))")
        }
        png.format = formatRGBA
        let width = Int(png.width), height = Int(png.height)
        guard width > 0, height > 0, width * height <= 64 << 20 else {
            png_image_free(&png)
            throw Error(description: "PNG \(path) has an unusable size \(width)x\(height)")
        }
        var rgba = [UInt8](repeating: 0, count: width * height * 4)
        let ok = rgba.withUnsafeMutableBytes { png_image_finish_read(&png, nil, $0.baseAddress, Int32(width * 4), nil) }
        defer { png_image_free(&png) }
        guard ok != 0 else { throw Error(description: "cannot decode PNG \(path): \(message(of: png))") }
        return Image(width: width, height: height, rgba: rgba)
    }

    private static func message(of png: png_image) -> String {
        var m = png.message
        return withUnsafeBytes(of: &m) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
