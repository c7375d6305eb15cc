import CGaugeLinux
import CPixman
import GaugeProtocol
import GaugeRender
import GaugeSystem

/// A framebuffer in ordinary memory: the headless display for tests, previews and
/// screenshots (`--display memory:1920x1080:XRGB8888`).
///
/// Any size, any `PixelFormat`, any stride that is at least a row and a multiple of 4
/// (pixman's requirement). One buffer, so a frame never has a stale region. `present`
/// only counts frames and remembers the damage; the pixels stay readable through
/// `pixel(x:y:)` and `rgbaBytes()`.
package final class MemoryDisplay: Display {
    package let width: Int
    package let height: Int
    package let format: PixelFormat
    /// Bytes from one row to the next.
    package let stride: Int
    /// The zero-filled memory, `stride * height` bytes, owned by this display.
    package let base: UnsafeMutableRawPointer
    package var physicalSize: (width: Int, height: Int)?
    /// As a DRM connector would report it (tests of panels mounted sideways).
    package var panelOrientation = Rotation.none

    /// How many frames `present(damage:)` has shown.
    package private(set) var frameCount = 0
    /// The damage of the last presented frame; nil before the first.
    package private(set) var lastDamage: Rect?

    package var name: String { "memory \(width)x\(height) \(format.rawValue)" }

    package var byteCount: Int { stride * height }

    package var framebuffer: Framebuffer {
        Framebuffer(base: base, width: width, height: height, stride: stride, format: format)
    }

    /// The largest side accepted, as for DRM framebuffers.
    static let maximumSide = 16384

    /// A display of `width` x `height` pixels. `stride` defaults to a row's bytes rounded
    /// up to a multiple of 4 (tightly packed for every common width).
    package init(
        width: Int, height: Int, format: PixelFormat = .xrgb8888,
        stride: Int? = nil, physicalSize: (width: Int, height: Int)? = nil
    ) throws(DisplayError) {
        let stride = stride ?? Self.packedStride(width: width, format: format)
        if let reason = Self.problem(width: width, height: height, format: format, stride: stride) {
            throw DisplayError("memory display: \(reason)")
        }
        self.width = width
        self.height = height
        self.format = format
        self.stride = stride
        self.physicalSize = physicalSize
        base = UnsafeMutableRawPointer.allocate(byteCount: stride * height, alignment: 64)
        memset(base, 0, stride * height)
    }

    deinit {
        base.deallocate()
    }

    /// A row's bytes rounded up to a multiple of 4, the default stride.
    package static func packedStride(width: Int, format: PixelFormat) -> Int {
        (width * format.bytesPerPixel + 3) & ~3
    }

    /// What is wrong with this geometry, or nil when a display can have it.
    private static func problem(width: Int, height: Int, format: PixelFormat, stride: Int) -> String? {
        guard (1...maximumSide).contains(width), (1...maximumSide).contains(height) else {
            return "size \(width)x\(height) outside 1x1...\(maximumSide)x\(maximumSide)"
        }
        let row = width * format.bytesPerPixel
        if stride < row {
            return "stride \(stride) shorter than a row of \(width) \(format.rawValue) pixels (\(row) bytes)"
        }
        if stride % 4 != 0 { return "stride \(stride) is not a multiple of 4" }
        if stride > row + 65536 { return "stride \(stride) is more than 64 KiB past a row of \(row) bytes" }
        return nil
    }

    package func beginFrame() -> FrameTarget? {
        FrameTarget(buffer: framebuffer, staleRegion: .zero)
    }

    package func present(damage: Rect) throws(DisplayError) {
        frameCount += 1
        lastDamage = damage
    }

    /// The colour at (`x`, `y`) widened to 8 bits a channel (5 and 6 bit channels by
    /// bit replication). Alpha, where the format has it, is ignored.
    package func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel (\(x), \(y)) outside \(width)x\(height)")
        return format.decode(at: base + y * stride + x * format.bytesPerPixel)
    }

    /// Stores a colour at (`x`, `y`) in the display's format (narrow channels keep
    /// their top bits; an X or A byte becomes 0xff).
    package func setPixel(x: Int, y: Int, r: UInt8, g: UInt8, b: UInt8) {
        precondition(x >= 0 && x < width && y >= 0 && y < height, "pixel (\(x), \(y)) outside \(width)x\(height)")
        format.encode(r: r, g: g, b: b, at: base + y * stride + x * format.bytesPerPixel)
    }

    /// Fills `rect` (clipped to the display; the whole display by default) with a colour.
    package func fill(_ rect: Rect? = nil, r: UInt8, g: UInt8, b: UInt8) {
        let area = (rect ?? framebuffer.bounds).intersection(framebuffer.bounds)
        guard !area.isEmpty else { return }
        for y in area.y..<area.maxY {
            for x in area.x..<area.maxX {
                setPixel(x: x, y: y, r: r, g: g, b: b)
            }
        }
    }

    /// The whole frame as tightly packed R, G, B, A bytes (alpha always 255), rows top
    /// to bottom: the layout PNG writers and image comparisons want. Converted by pixman,
    /// which widens narrow channels by bit replication like `pixel(x:y:)`.
    package func rgbaBytes() -> [UInt8] {
        // Scanout ignores the alpha byte, so ARGB8888 is read as XRGB8888.
        let source = format == .argb8888 ? PIXMAN_x8r8g8b8 : format.pixman
        let count = width * height * 4
        return [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            let src = pixman_image_create_bits(
                source, Int32(width), Int32(height),
                base.assumingMemoryBound(to: UInt32.self), Int32(stride))
            let dst = pixman_image_create_bits(
                PIXMAN_a8b8g8r8, Int32(width), Int32(height),
                UnsafeMutableRawPointer(out.baseAddress!).assumingMemoryBound(to: UInt32.self), Int32(width * 4))
            precondition(src != nil && dst != nil, "pixman refused a \(width)x\(height) image")
            pixman_image_composite32(PIXMAN_OP_SRC, src, nil, dst, 0, 0, 0, 0, 0, 0, Int32(width), Int32(height))
            pixman_image_unref(src)
            pixman_image_unref(dst)
            initialized = count
        }
    }
}

extension MemoryDisplay {
    /// Parses `WxH[:FORMAT[:STRIDE]]`, the part after `memory:` in `--display`:
    /// `1920x1080`, `800x600:RGB565`, `1366x768:RGB888:4104`. The format defaults to
    /// XRGB8888 and the stride to a packed row (rounded up to a multiple of 4).
    package convenience init(spec: String) throws(DisplayError) {
        let fields = spec.split(separator: ":", omittingEmptySubsequences: false)
        func fail(_ why: String) -> DisplayError {
            DisplayError("memory display \"\(spec)\": \(why); expected WIDTHxHEIGHT[:FORMAT[:STRIDE]], e.g. 1920x1080:XRGB8888")
        }
        guard fields.count <= 3 else { throw fail("too many fields") }
        let size = fields[0].split(separator: "x", omittingEmptySubsequences: false)
        guard size.count == 2, let width = Self.decimal(size[0]), let height = Self.decimal(size[1]) else {
            throw fail("size must be two decimal numbers joined by x")
        }
        var format = PixelFormat.xrgb8888
        if fields.count >= 2 {
            guard let named = PixelFormat(name: String(fields[1])) else {
                let names = PixelFormat.allCases.map { $0.rawValue }.joined(separator: ", ")
                throw fail("unknown pixel format \"\(fields[1])\" (one of \(names))")
            }
            format = named
        }
        var stride: Int?
        if fields.count == 3 {
            guard let value = Self.decimal(fields[2]) else { throw fail("stride must be a decimal number of bytes") }
            stride = value
        }
        if let reason = Self.problem(
            width: width, height: height, format: format,
            stride: stride ?? Self.packedStride(width: width, format: format)
        ) {
            throw fail(reason)
        }
        try self.init(width: width, height: height, format: format, stride: stride)
    }

    /// Plain ASCII digits only (no sign, no spaces), at most 9 of them.
    private static func decimal(_ text: Substring) -> Int? {
        DecimalDigits.value(text, maxDigits: 9).map { Int($0) }
    }
}
