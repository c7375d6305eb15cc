import CPixman
import GaugeSystem

/// The logo the firmware showed before the kernel, as UEFI publishes it in ACPI's Boot
/// Graphics Resource Table (the kernel's `/sys/firmware/acpi/bgrt`): a BMP image and the
/// offsets the firmware drew it at, so the splash can keep it where it was.
package struct FirmwareLogo {
    package static let directory = "/sys/firmware/acpi/bgrt"
    /// A firmware's logo is small; a larger file is not one.
    static let maxImageBytes = 16 << 20
    package static let maxSide = 4096

    /// The logo as the firmware drew it: the table's image turned by `rotation`.
    package let image: PixmanImage
    package let xOffset: Int
    package let yOffset: Int
    /// The firmware drew it rotated by this many degrees clockwise (ACPI 6.2's status bits
    /// 1-2, set where the panel is mounted turned): the offsets are those of the turned image.
    package let rotation: Int

    /// Reads the table under `directory`; says why when there is no usable logo (no table,
    /// its status says the logo was not displayed, an image that is not a BMP it can read).
    package static func read(directory: String = directory) throws(AssetError) -> FirmwareLogo {
        func number(_ name: String) throws(AssetError) -> Int {
            let bytes: [UInt8]
            do {
                bytes = try RegularFile.read(directory + "/" + name, maxBytes: 4096)  // sysfs says 4096 for any attribute
            } catch {
                throw AssetError("firmware logo: \(error)")
            }
            // A sysfs value: one line.
            let text = String(decoding: bytes.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self).trimmingSpaces
            guard let value = DecimalDigits.value(text, maxDigits: 9) else { throw AssetError("firmware logo: \(directory)/\(name) holds \"\(text)\"") }
            return Int(value)
        }
        let status = try number("status")
        guard status & 1 == 1 else { throw AssetError("firmware logo: the firmware says it did not display it (status \(status))") }
        let type = try number("type")
        guard type == 0 else { throw AssetError("firmware logo: image type \(type) is not a bitmap") }
        let x = try number("xoffset"), y = try number("yoffset")
        let bytes: [UInt8]
        do {
            bytes = try RegularFile.read(directory + "/image", maxBytes: maxImageBytes)
        } catch {
            throw AssetError("firmware logo: \(error)")
        }
        let image = try BMP.decode(bytes, maxSide: maxSide).mapError { AssetError("firmware logo: \(directory)/image: \($0)") }.get()
        let rotation = (status >> 1 & 3) * 90
        return FirmwareLogo(image: turned(image, clockwise: rotation), xOffset: x, yOffset: y, rotation: rotation)
    }

    /// `image` turned by `degrees` (0, 90, 180 or 270) clockwise.
    static func turned(_ image: PixmanImage, clockwise degrees: Int) -> PixmanImage {
        guard degrees % 360 != 0 else { return image }
        let w = image.width, h = image.height
        let sideways = degrees == 90 || degrees == 270
        let out = PixmanImage(format: PIXMAN_a8r8g8b8, width: sideways ? h : w, height: sideways ? w : h)
        let from = UnsafeRawPointer(pixman_image_get_data(image.raw)!), fromStride = Int(pixman_image_get_stride(image.raw))
        let to = UnsafeMutableRawPointer(pixman_image_get_data(out.raw)!), toStride = Int(pixman_image_get_stride(out.raw))
        for y in 0..<h {
            let line = (from + y * fromStride).assumingMemoryBound(to: UInt32.self)
            for x in 0..<w {
                // Where (x, y) lands once turned clockwise.
                let (tx, ty) = degrees == 90 ? (h - 1 - y, x) : degrees == 180 ? (w - 1 - x, h - 1 - y) : (y, w - 1 - x)
                (to + ty * toStride).assumingMemoryBound(to: UInt32.self)[tx] = line[x]
            }
        }
        return out
    }

    /// Where the logo goes on a screen of `width` x `height`: where the firmware drew it when
    /// it drew at this size (it centres the logo across), else centred across with its
    /// middle at 38.2% of the height, where firmware guidelines put it; nil when it does not
    /// fit.
    package func placement(width: Int, height: Int) -> Rect? {
        let w = image.width, h = image.height
        guard w <= width, h <= height else { return nil }
        let centredX = (width - w) / 2
        if abs(xOffset - centredX) <= 1, yOffset + h <= height {
            return Rect(x: xOffset, y: yOffset, width: w, height: h)
        }
        let y = Int((Double(height) * 0.382).rounded()) - h / 2
        return Rect(x: centredX, y: max(0, min(height - h, y)), width: w, height: h)
    }
}

/// Windows bitmaps as firmware publishes them: uncompressed 24 or 32 bits a pixel (or 32 with
/// bit fields), rows bottom-up or top-down, decoded into an opaque pixman image.
package enum BMP {
    package static func decode(_ bytes: [UInt8], maxSide: Int) -> Result<PixmanImage, AssetError> {
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> UInt32 {
            UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
        }
        guard bytes.count >= 54, bytes[0] == UInt8(ascii: "B"), bytes[1] == UInt8(ascii: "M") else {
            return .failure(AssetError("not a BMP image"))
        }
        let dataOffset = Int(u32(10)), headerSize = Int(u32(14))
        guard headerSize >= 40, 14 + headerSize <= bytes.count else {
            return .failure(AssetError("a BMP header of \(headerSize) bytes is not one this reads"))
        }
        let width = Int(Int32(bitPattern: u32(18))), rawHeight = Int(Int32(bitPattern: u32(22)))
        let bits = u16(28), compression = u32(30)
        let height = abs(rawHeight), topDown = rawHeight < 0
        guard width > 0, height > 0, width <= maxSide, height <= maxSide else {
            return .failure(AssetError("a BMP of \(width)x\(rawHeight) pixels (at most \(maxSide) each way)"))
        }
        // Channel masks: red, green, blue.
        var masks: [UInt32] = [0x00FF_0000, 0x0000_FF00, 0x0000_00FF]
        switch (bits, compression) {
        case (24, 0), (32, 0):
            break
        case (32, 3):
            let at = headerSize >= 52 ? 14 + 40 : 14 + headerSize
            guard at + 12 <= bytes.count else { return .failure(AssetError("a BMP's bit fields are missing")) }
            masks = [u32(at), u32(at + 4), u32(at + 8)]
            guard masks.allSatisfy({ $0 != 0 }) else { return .failure(AssetError("a BMP's bit fields are empty")) }
        default:
            return .failure(AssetError("a BMP of \(bits) bits a pixel, compression \(compression): only 24 and 32 bits uncompressed are read"))
        }
        let stride = (width * bits / 8 + 3) / 4 * 4
        guard dataOffset >= 14 + headerSize, dataOffset + stride * height <= bytes.count else {
            return .failure(AssetError("a BMP's pixels end after its file (\(bytes.count) bytes)"))
        }
        let shifts = masks.map { UInt32($0.trailingZeroBitCount) }
        let maxima = zip(masks, shifts).map { mask, shift in mask >> shift }
        let image = PixmanImage(format: PIXMAN_a8r8g8b8, width: width, height: height)
        let out = UnsafeMutableRawPointer(pixman_image_get_data(image.raw)!)
        let outStride = Int(pixman_image_get_stride(image.raw))
        for row in 0..<height {
            let source = dataOffset + (topDown ? row : height - 1 - row) * stride
            let line = (out + row * outStride).assumingMemoryBound(to: UInt32.self)
            for x in 0..<width {
                let r: UInt32, g: UInt32, b: UInt32
                if bits == 24 {
                    let at = source + x * 3
                    (b, g, r) = (UInt32(bytes[at]), UInt32(bytes[at + 1]), UInt32(bytes[at + 2]))
                } else {
                    let value = u32(source + x * 4)
                    let channel = { (i: Int) -> UInt32 in ((value & masks[i]) >> shifts[i]) * 255 / maxima[i] }
                    (r, g, b) = (channel(0), channel(1), channel(2))
                }
                line[x] = 0xFF00_0000 | r << 16 | g << 8 | b
            }
        }
        return .success(image)
    }
}
