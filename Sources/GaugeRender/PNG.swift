import CGaugePNG
import CPNG
import CPixman
import GaugeSystem

/// PNG files through libpng's simplified API.
package enum PNG {
    package struct Error: Swift.Error, CustomStringConvertible {
        package let description: String
    }

    /// An 8-bit RGBA picture, rows tightly packed.
    package struct Image: Equatable, Sendable {
        package var width: Int
        package var height: Int
        package var rgba: [UInt8]

        package init(width: Int, height: Int, rgba: [UInt8]) {
            precondition(rgba.count == width * height * 4)
            self.width = width
            self.height = height
            self.rgba = rgba
        }

        package func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
            let i = (y * width + x) * 4
            return (rgba[i], rgba[i + 1], rgba[i + 2], rgba[i + 3])
        }
    }

    package static let formatRGBA: UInt32 = 3  // PNG_FORMAT_RGBA
    /// Blue, green, red, alpha in memory: pixman's a8r8g8b8 on a little-endian machine.
    static let formatBGRA: UInt32 = 0x13  // PNG_FORMAT_BGRA

    /// The whole framebuffer as RGBA, converted by pixman from its format (formats
    /// without alpha read as opaque).
    package static func image(of buffer: Framebuffer) -> Image {
        var rgba = [UInt8](repeating: 0, count: buffer.width * buffer.height * 4)
        rgba.withUnsafeMutableBytes { convert(buffer, toRGBA: $0.baseAddress!) }
        return Image(width: buffer.width, height: buffer.height, rgba: rgba)
    }

    /// `buffer` as tightly packed R, G, B, A bytes at `rgba`, converted as `image(of:)` does.
    package static func convert(_ buffer: Framebuffer, toRGBA rgba: UnsafeMutableRawPointer) {
        let dst = PixmanImage(pixman_image_create_bits_no_clear(
            PIXMAN_a8b8g8r8, Int32(buffer.width), Int32(buffer.height),
            rgba.assumingMemoryBound(to: UInt32.self), Int32(buffer.width * 4))!)
        dst.composite(PIXMAN_OP_SRC, source: PixmanImage(wrapping: buffer), rect: buffer.bounds)
    }

    package static func write(_ image: Image, to path: String) throws(Error) {
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

    package static func write(_ buffer: Framebuffer, to path: String) throws(Error) {
        try write(image(of: buffer), to: path)
    }

    /// Reads and decodes the PNG file at `path` (through `RegularFile`: no FIFO or device
    /// can block it).
    package static func read(_ path: String, maxBytes: Int = 256 << 20) throws(Error) -> Image {
        let bytes: [UInt8]
        do {
            bytes = try RegularFile.read(path, maxBytes: maxBytes)
        } catch {
            throw Error(description: error.description)
        }
        return try decode(bytes, name: path, format: formatRGBA, maxWidth: 1 << 14, maxHeight: 1 << 14) { width, height, finish in
            var rgba = [UInt8](repeating: 0, count: width * height * 4)
            guard rgba.withUnsafeMutableBytes({ finish($0.baseAddress!, width * 4) }) else { return nil }
            return Image(width: width, height: height, rgba: rgba)
        }.get()
    }

    /// Decodes PNG `bytes` in `format` (4 bytes a pixel). The size comes from the header
    /// and is checked before a pixel is decoded, so an oversized picture costs nothing;
    /// `make` then gets the size, makes the storage and decodes into it with `finish`
    /// (memory, row stride in bytes), which says whether decoding succeeded.
    package static func decode<T>(
        _ bytes: [UInt8], name: String, format: UInt32, maxWidth: Int, maxHeight: Int,
        into make: (_ width: Int, _ height: Int, _ finish: (UnsafeMutableRawPointer, Int) -> Bool) -> T?
    ) -> Result<T, Error> {
        // libpng reads from the bytes until the end, so all of it happens in their scope.
        bytes.withUnsafeBytes { raw -> Result<T, Error> in
            var png = png_image()
            png.version = UInt32(PNG_IMAGE_VERSION)
            defer { png_image_free(&png) }
            guard png_image_begin_read_from_memory(&png, raw.baseAddress, raw.count) != 0 else {
                return .failure(Error(description: "cannot read PNG \(name): \(message(of: png))"))
            }
            let width = Int(png.width), height = Int(png.height)
            guard width > 0, height > 0, width <= maxWidth, height <= maxHeight else {
                return .failure(Error(description: "PNG \(name) is \(width)x\(height), larger than \(maxWidth)x\(maxHeight)"))
            }
            png.format = format
            let decoded = make(width, height) { memory, stride in
                png_image_finish_read(&png, nil, memory, Int32(stride), nil) != 0
            }
            guard let decoded else { return .failure(Error(description: "cannot decode PNG \(name): \(message(of: png))")) }
            return .success(decoded)
        }
    }

    /// The PNG file's bytes for `image`, encoded in memory (nothing touches a file).
    package static func encode(_ image: Image) throws(Error) -> [UInt8] {
        var png = png_image()
        png.version = UInt32(PNG_IMAGE_VERSION)
        png.width = UInt32(image.width)
        png.height = UInt32(image.height)
        png.format = formatRGBA
        defer { png_image_free(&png) }
        var size: png_alloc_size_t = 0
        let sized = image.rgba.withUnsafeBytes {
            png_image_write_to_memory(&png, nil, &size, 0, $0.baseAddress, Int32(image.width * 4), nil)
        }
        guard sized != 0 else { throw Error(description: "cannot encode PNG: \(message(of: png))") }
        var bytes = [UInt8](repeating: 0, count: Int(size))
        let written = image.rgba.withUnsafeBytes { rgba in
            bytes.withUnsafeMutableBytes { out in
                png_image_write_to_memory(&png, out.baseAddress, &size, 0, rgba.baseAddress, Int32(image.width * 4), nil)
            }
        }
        guard written != 0 else { throw Error(description: "cannot encode PNG: \(message(of: png))") }
        bytes.removeLast(bytes.count - Int(size))
        return bytes
    }

    /// The PNG file's bytes for a `width` x `height` picture made band by band, so no
    /// copy of the whole picture is ever held: `band(y, rows, rgba)` writes rows
    /// `y..<y + rows` (at most `bandRows` of them) into `rgba` as tightly packed R, G, B,
    /// A bytes. The same bytes as `encode(_:)` writes for the same pixels.
    package static func encode(
        width: Int, height: Int, bandRows: Int = 32,
        band: @escaping (_ y: Int, _ rows: Int, _ rgba: UnsafeMutableRawPointer) -> Void
    ) throws(Error) -> [UInt8] {
        precondition(width > 0 && height > 0 && bandRows > 0, "PNG needs a positive size")
        let encoder = BandEncoder(width: width, height: height, bandRows: bandRows, band: band)
        var message = [CChar](repeating: 0, count: 128)
        let context = Unmanaged.passUnretained(encoder).toOpaque()
        let ok = message.withUnsafeMutableBufferPointer { text in
            gauge_png_encode_rgba(
                UInt32(width), UInt32(height),
                { context, y in Unmanaged<BandEncoder>.fromOpaque(context!).takeUnretainedValue().row(Int(y)) },
                { context, bytes, count in
                    Unmanaged<BandEncoder>.fromOpaque(context!).takeUnretainedValue()
                        .output.append(contentsOf: UnsafeBufferPointer(start: bytes, count: count))
                },
                context, text.baseAddress, text.count)
        }
        withExtendedLifetime(encoder) {}
        guard ok != 0 else {
            let reason = message.withUnsafeBytes { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            throw Error(description: "cannot encode PNG: \(reason)")
        }
        return encoder.output
    }

    /// The rows `encode(width:height:bandRows:band:)` hands libpng, made a band at a time.
    private final class BandEncoder {
        let width: Int
        let height: Int
        let bandRows: Int
        let band: (Int, Int, UnsafeMutableRawPointer) -> Void
        let rgba: UnsafeMutableRawPointer
        var bandStart = -1
        var output: [UInt8] = []

        init(width: Int, height: Int, bandRows: Int, band: @escaping (Int, Int, UnsafeMutableRawPointer) -> Void) {
            self.width = width
            self.height = height
            self.bandRows = min(bandRows, height)
            self.band = band
            rgba = UnsafeMutableRawPointer.allocate(byteCount: width * 4 * self.bandRows, alignment: 64)
        }

        deinit { rgba.deallocate() }

        func row(_ y: Int) -> UnsafePointer<UInt8>? {
            guard y >= 0 && y < height else { return nil }
            if bandStart < 0 || y < bandStart || y >= bandStart + bandRows {
                bandStart = y - y % bandRows
                band(bandStart, min(bandRows, height - bandStart), rgba)
            }
            return UnsafePointer((rgba + (y - bandStart) * width * 4).assumingMemoryBound(to: UInt8.self))
        }
    }

    private static func message(of png: png_image) -> String {
        var m = png.message
        return withUnsafeBytes(of: &m) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
