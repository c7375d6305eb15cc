import CPixman
import GaugeProtocol
import GaugeSystem

/// Why a logo or font named by a theme cannot be used, as one line for a reply or the log.
package struct AssetError: Error, Equatable, Sendable, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// The files a theme names (logo, fonts), read through `RegularFile` and kept for every
/// scene of the process within byte budgets: a theme change or a snapshot decodes no logo
/// and reads no font that was loaded before and has not changed on disk since.
///
/// Each cache keeps its entries in least-recently-used order and drops the oldest while it
/// holds more than its budget, but always keeps the newest (the one being shown).
package final class Assets {
    /// Largest logo file read.
    static let maxLogoFileBytes = 32 << 20
    /// Largest logo, in pixels each way, as shown (the file's size times the scale): a
    /// 4096x4096 logo is 64 MiB decoded.
    static let maxLogoSide = 4096
    /// Largest font file read (a CJK collection is about 20 MiB).
    static let maxFontFileBytes = 64 << 20
    /// Most font files kept open for later scenes (each holds a descriptor).
    package static let maxCachedFonts = 8

    private struct LogoEntry {
        var path: String
        var identity: RegularFile.Identity
        var scale: Double
        var image: PixmanImage
        var bytes: Int
    }

    private struct FontEntry {
        var path: String
        var identity: RegularFile.Identity
        var data: FontData
    }

    private var logos: [LogoEntry] = []
    private var fonts: [FontEntry] = []
    private let logoBudget: Int
    private let fontBudget: Int

    /// Logos decoded so far (a cache hit decodes none).
    package private(set) var logoDecodes = 0
    /// Font files read so far.
    package private(set) var fontReads = 0

    /// Where the firmware's logo is read (`FirmwareLogo.directory`; tests name their own).
    package let firmwareDirectory: String
    /// The firmware's logo, or why there is none: read once, the first time a theme asks
    /// (the table does not change while the machine runs).
    private var firmware: Result<FirmwareLogo, AssetError>?

    package init(logoBudget: Int = 64 << 20, fontBudget: Int = 64 << 20, firmwareDirectory: String = FirmwareLogo.directory) {
        self.logoBudget = logoBudget
        self.fontBudget = fontBudget
        self.firmwareDirectory = firmwareDirectory
    }

    /// The logo the firmware published (ACPI's BGRT), as it drew it.
    package func firmwareLogo() throws(AssetError) -> FirmwareLogo {
        if firmware == nil {
            do throws(AssetError) {
                firmware = .success(try FirmwareLogo.read(directory: firmwareDirectory))
            } catch {
                firmware = .failure(error)
            }
        }
        return try firmware!.get()
    }

    /// Bytes the caches hold.
    var cachedBytes: Int { logos.reduce(0) { $0 + $1.bytes } + fonts.reduce(0) { $0 + $1.data.count } }

    /// The PNG at `path`, premultiplied and scaled by `scale` (bilinear).
    package func logo(_ path: String, scale: Double) throws(AssetError) -> PixmanImage {
        let file: RegularFile
        do {
            file = try RegularFile(path, maxBytes: Self.maxLogoFileBytes)
        } catch {
            throw AssetError("logo: \(error)")
        }
        if let index = logos.firstIndex(where: { $0.path == path && $0.identity == file.identity && $0.scale == scale }) {
            let entry = logos.remove(at: index)
            logos.append(entry)
            return entry.image
        }
        let image = try Self.decodeLogo(file, scale: scale)
        logoDecodes += 1
        logos.removeAll { $0.path == path && $0.scale == scale }
        logos.append(LogoEntry(path: path, identity: file.identity, scale: scale, image: image, bytes: image.width * image.height * 4))
        while logos.count > 1, logos.reduce(0, { $0 + $1.bytes }) > logoBudget { logos.removeFirst() }
        return image
    }

    /// The font file at `path`, opened for FreeType to read from.
    func fontData(_ path: String) throws(AssetError) -> FontData {
        let file: RegularFile
        do {
            file = try RegularFile(path, maxBytes: Self.maxFontFileBytes)
        } catch {
            throw AssetError("font: \(error)")
        }
        if let index = fonts.firstIndex(where: { $0.path == path && $0.identity == file.identity }) {
            let entry = fonts.remove(at: index)
            fonts.append(entry)
            return entry.data
        }
        let data = FontData(file)
        fontReads += 1
        fonts.removeAll { $0.path == path }
        fonts.append(FontEntry(path: path, identity: file.identity, data: data))
        while fonts.count > 1, fonts.count > Self.maxCachedFonts || fonts.reduce(0, { $0 + $1.data.count }) > fontBudget {
            fonts.removeFirst()
        }
        return data
    }

    /// Checks that `path` is a regular font-sized file without reading it (fallback fonts
    /// are read when a character first needs them).
    package func checkFontFile(_ path: String) throws(AssetError) {
        do {
            _ = try RegularFile(path, maxBytes: Self.maxFontFileBytes)
        } catch {
            throw AssetError("font: \(error)")
        }
    }

    private static func decodeLogo(_ file: RegularFile, scale: Double) throws(AssetError) -> PixmanImage {
        let bytes: [UInt8]
        do {
            bytes = try file.bytes()
        } catch {
            throw AssetError("logo: \(error)")
        }
        return try decodeLogo(bytes, name: file.path, scale: scale, maxSide: maxLogoSide).get()
    }

    /// A logo's PNG `bytes` decoded, premultiplied and scaled by `scale`: at most
    /// `maxSide` pixels each way as shown, checked from the header before decoding.
    package static func decodeLogo(_ bytes: [UInt8], name: String, scale: Double, maxSide: Int) -> Result<PixmanImage, AssetError> {
        let image: PixmanImage
        do {
            // Decoded straight into the pixman image (b, g, r, a in memory), then premultiplied.
            let side = Int(Double(maxSide) / scale)
            image = try PNG.decode(bytes, name: name, format: PNG.formatBGRA, maxWidth: side, maxHeight: side) {
                width, height, finish in
                let image = PixmanImage(format: PIXMAN_a8r8g8b8, width: width, height: height)
                let data = UnsafeMutableRawPointer(pixman_image_get_data(image.raw)!)
                return finish(data, Int(pixman_image_get_stride(image.raw))) ? image : nil
            }.get()
        } catch {
            return .failure(AssetError(scale == 1 ? "logo: \(error)" : "logo: \(error) (at scale \(scale.shortText))"))
        }
        premultiply(image)
        guard scale != 1 else { return .success(image) }
        let w = Int((Double(image.width) * scale).rounded()), h = Int((Double(image.height) * scale).rounded())
        var transform = pixman_transform_t()
        pixman_transform_init_scale(&transform, pixman_fixed_t(65536 / scale), pixman_fixed_t(65536 / scale))
        pixman_image_set_transform(image.raw, &transform)
        pixman_image_set_filter(image.raw, PIXMAN_FILTER_BILINEAR, nil, 0)
        let scaled = PixmanImage(format: PIXMAN_a8r8g8b8, width: w, height: h)
        scaled.composite(PIXMAN_OP_SRC, source: image, rect: Rect(x: 0, y: 0, width: w, height: h))
        return .success(scaled)
    }

    private static func premultiply(_ image: PixmanImage) {
        let stride = Int(pixman_image_get_stride(image.raw)) / 4
        let data = pixman_image_get_data(image.raw)!
        for y in 0..<image.height {
            let row = data + y * stride
            for x in 0..<image.width {
                let p = row[x]
                let a = p >> 24
                if a == 255 { continue }
                func pre(_ shift: UInt32) -> UInt32 { ((((p >> shift) & 0xff) * a + 127) / 255) << shift }
                row[x] = a << 24 | pre(16) | pre(8) | pre(0)
            }
        }
    }
}

/// A font file FreeType reads from through its checked descriptor, as it needs the
/// bytes: the tables it keeps when a face opens, each glyph's outline the first time
/// it is drawn. The file is never held in memory whole (DejaVu Sans and Sans Bold are
/// 1.4 MiB, of which a splash needs a few tables and a few dozen glyphs), and one that
/// shrinks or fails to read meanwhile only fails the glyphs it no longer has.
final class FontData {
    let file: RegularFile
    /// The file's size when it was opened: what FreeType may read.
    var count: Int { file.identity.size }
    /// FreeType reads a face's table directory and each glyph's outline in pieces of a
    /// few bytes (about 300 reads to open two faces and draw a label); one page read at
    /// a time serves most of them, a system call fewer each (they cost on a slow core).
    private static let windowSize = 4096
    private var window: [UInt8] = []
    private var windowStart = 0
    private var windowCount = 0

    init(_ file: RegularFile) { self.file = file }

    /// Fills as much of `buffer` as the file has from `offset` on; the count read (short
    /// at the end of the file or when a read fails).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        guard buffer.count < Self.windowSize else { return readFile(into: buffer, at: offset) }
        if offset < windowStart || offset + buffer.count > windowStart + windowCount {
            if window.isEmpty { window = [UInt8](repeating: 0, count: Self.windowSize) }
            windowStart = offset
            windowCount = window.withUnsafeMutableBytes { readFile(into: $0, at: offset) }
        }
        let available = min(buffer.count, windowStart + windowCount - offset)
        guard available > 0 else { return 0 }
        window.withUnsafeBytes { bytes in
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[(offset - windowStart)...].prefix(available)))
        }
        return available
    }

    private func readFile(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        var done = 0
        while done < buffer.count {
            let n: Int
            do throws(RegularFile.Error) {
                n = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]), at: offset + done)
            } catch {
                break
            }
            if n == 0 { break }
            done += n
        }
        return done
    }
}

extension Assets {
    /// The logo `theme` asks for on a `width` x `height` screen at `scale`: a PNG, or the firmware's at the place it drew it
    /// (`fixed`), or when the firmware has none that fits, `logo_fallback`; `problem` says
    /// why the one asked for is not shown.
    func logo(
        for theme: Theme, width: Int, height: Int, scale: Double
    ) -> (image: PixmanImage?, fixed: Rect?, problem: String?, note: String?) {
        var file = theme.logo
        var problem: String?
        if theme.logo == ThemeSetting.firmwareLogo {
            do throws(AssetError) {
                let firmware = try firmwareLogo()
                if let place = firmware.placement(width: width, height: height) {
                    let moved = place.x != firmware.xOffset || place.y != firmware.yOffset
                    let note = "firmware logo centred on \(width)x\(height): the firmware drew it at \(firmware.xOffset),\(firmware.yOffset) on a screen of another size"
                    return (firmware.image, place, nil, moved ? note : nil)
                }
                problem = "firmware logo: \(firmware.image.width)x\(firmware.image.height) is larger than the screen's \(width)x\(height)"
            } catch {
                problem = error.description
            }
            file = theme.logoFallback
            problem = (problem ?? "") + (file.isEmpty ? "; no logo_fallback, so no logo" : "; showing logo_fallback \(file) instead")
        }
        guard !file.isEmpty else { return (nil, nil, problem, nil) }
        do throws(AssetError) {
            return (try logo(file, scale: scale), nil, problem, nil)
        } catch {
            return (nil, nil, problem.map { "\($0); \(error)" } ?? error.description, nil)
        }
    }
}
