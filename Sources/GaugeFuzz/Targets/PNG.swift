import GaugeRender

/// PNG files as the daemon reads logos: the size from the header, checked before any
/// pixel is decoded, then libpng's decode and the logo's premultiply and scaling.
extension FuzzTarget {
    static let png = FuzzTarget(
        name: "png",
        summary: "PNG bytes (as they are, and with every chunk's CRC made right so mutations get past it) "
            + "through PNG.decode and the logo decoder at scale 1 and 2: storage made only for sizes "
            + "within the limit, the image as large as its header says; small images encode and decode "
            + "to themselves",
        maxLength: 4096,
        extraDictionary: [Array("IHDR".utf8), Array("IDAT".utf8), Array("IEND".utf8), Array("PLTE".utf8), Array("tRNS".utf8),
                          Array("gAMA".utf8), Array("sRGB".utf8), Array("iCCP".utf8), Array("acTL".utf8), [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
        seeds: { PNGSamples.seeds() }
    ) { input, probe throws(FuzzFailure) in
        for bytes in [input, PNGSamples.fixingCRCs(input)] {
            let limit = 64
            var sizes: [(Int, Int)] = []
            let decoded = PNG.decode(bytes, name: "fuzz", format: PNG.formatRGBA, maxWidth: limit, maxHeight: limit) { width, height, finish in
                sizes.append((width, height))
                var rgba = [UInt8](repeating: 0, count: width * height * 4)
                guard rgba.withUnsafeMutableBytes({ finish($0.baseAddress!, width * 4) }) else { return nil as PNG.Image? }
                return PNG.Image(width: width, height: height, rgba: rgba)
            }
            try check(sizes.allSatisfy { (1...limit).contains($0.0) && (1...limit).contains($0.1) }, "storage made for \(sizes)")
            switch decoded {
            case .success(let image):
                probe.hit("decoded", bucket(image.width * image.height))
                try check(sizes.count == 1 && sizes[0] == (image.width, image.height), "an image of \(image.width)x\(image.height) from \(sizes)")
            case .failure(let error):
                probe.hit("refused", String(error.description.split(separator: ":").last?.prefix(24) ?? ""))
            }
            for scale in [1.0, 2.0] {
                switch Assets.decodeLogo(bytes, name: "fuzz", scale: scale, maxSide: 2 * limit) {
                case .success(let logo):
                    try check(logo.width <= 2 * limit && logo.height <= 2 * limit, "a logo of \(logo.width)x\(logo.height) at scale \(scale)")
                case .failure: break
                }
            }
        }

        var reader = FuzzReader(input)
        let width = 1 + reader.below(12), height = 1 + reader.below(12)
        let rgba = (0..<(width * height * 4)).map { _ in reader.byte() }
        let image = PNG.Image(width: width, height: height, rgba: rgba)
        let encoded: [UInt8]
        do {
            encoded = try PNG.encode(image)
        } catch {
            throw FuzzFailure("cannot encode a \(width)x\(height) image: \(error)")
        }
        let back = PNGSamples.decode(encoded)
        try check(back == image, "a \(width)x\(height) image does not decode to itself")
    }
}

/// PNG files made by hand (stored deflate blocks, so every pixel byte is in the file for
/// the mutator to change), in every colour type and depth, interlaced or not.
enum PNGSamples {
    static func decode(_ bytes: [UInt8]) -> PNG.Image? {
        let result = PNG.decode(bytes, name: "snapshot", format: PNG.formatRGBA, maxWidth: 1 << 14, maxHeight: 1 << 14) { width, height, finish in
            var rgba = [UInt8](repeating: 0, count: width * height * 4)
            guard rgba.withUnsafeMutableBytes({ finish($0.baseAddress!, width * 4) }) else { return nil as PNG.Image? }
            return PNG.Image(width: width, height: height, rgba: rgba)
        }
        return try? result.get()
    }

    static func seeds() -> [[UInt8]] {
        var seeds = [
            file(width: 4, height: 3, colorType: 0, depth: 8),
            file(width: 9, height: 2, colorType: 0, depth: 1),
            file(width: 2, height: 2, colorType: 0, depth: 16, extra: [chunk("gAMA", [0, 0, 0xb1, 0x8f])]),
            file(width: 3, height: 3, colorType: 2, depth: 8, extra: [chunk("sRGB", [0])]),
            file(width: 2, height: 2, colorType: 2, depth: 16),
            file(width: 4, height: 4, colorType: 3, depth: 8, extra: [chunk("PLTE", [255, 0, 0, 0, 255, 0, 0, 0, 255, 9, 9, 9]), chunk("tRNS", [0, 128])]),
            file(width: 5, height: 2, colorType: 3, depth: 2, extra: [chunk("PLTE", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])]),
            file(width: 3, height: 2, colorType: 4, depth: 8),
            file(width: 4, height: 4, colorType: 6, depth: 8),
            file(width: 2, height: 3, colorType: 6, depth: 16),
            file(width: 9, height: 9, colorType: 6, depth: 8, interlaced: true),
            file(width: 5, height: 5, colorType: 0, depth: 4, interlaced: true, extra: [chunk("tRNS", [0, 3])]),
        ]
        let rgba = (0..<(6 * 5 * 4)).map { UInt8(truncatingIfNeeded: $0 * 37) }
        if let encoded = try? PNG.encode(PNG.Image(width: 6, height: 5, rgba: rgba)) { seeds.append(encoded) }
        return seeds
    }

    static let signature: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]

    static func file(width: Int, height: Int, colorType: UInt8, depth: UInt8, interlaced: Bool = false, extra: [[UInt8]] = []) -> [UInt8] {
        let channels = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][Int(colorType)]!
        let bitsPerPixel = channels * Int(depth)
        func rowBytes(_ pixels: Int) -> Int { (pixels * bitsPerPixel + 7) / 8 }
        var raw: [UInt8] = []
        var counter = 0
        func rows(width: Int, height: Int) {
            guard width > 0, height > 0 else { return }
            for row in 0..<height {
                raw.append(UInt8(row % 5))  // every filter type
                for _ in 0..<rowBytes(width) {
                    raw.append(UInt8(truncatingIfNeeded: counter * 29 + 7))
                    counter += 1
                }
            }
        }
        if interlaced {
            let passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
            for (x, y, dx, dy) in passes {
                rows(width: (width - x + dx - 1) / dx, height: (height - y + dy - 1) / dy)
            }
        } else {
            rows(width: width, height: height)
        }
        let header = bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [depth, colorType, 0, 0, interlaced ? 1 : 0]
        return signature + chunk("IHDR", header) + extra.joined() + chunk("IDAT", storedZlib(raw)) + chunk("IEND", [])
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
    }

    /// A zlib stream of stored (uncompressed) deflate blocks.
    static func storedZlib(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let length = min(65535, data.count - offset)
            let final: UInt8 = offset + length == data.count ? 1 : 0
            out += [final, UInt8(length & 0xff), UInt8(length >> 8), UInt8(~length & 0xff), UInt8((~length >> 8) & 0xff)]
            out += data[offset..<(offset + length)]
            offset += length
        } while offset < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return out + bigEndian(b << 16 | a)
    }

    /// `bytes` with the CRC of every whole chunk after the signature recomputed.
    static func fixingCRCs(_ bytes: [UInt8]) -> [UInt8] {
        var out = bytes
        var offset = 8
        while offset + 12 <= out.count {
            let length = Int(out[offset]) << 24 | Int(out[offset + 1]) << 16 | Int(out[offset + 2]) << 8 | Int(out[offset + 3])
            guard length <= out.count - offset - 12 else { break }
            let crc = crc32(Array(out[(offset + 4)..<(offset + 8 + length)]))
            out.replaceSubrange((offset + 8 + length)..<(offset + 12 + length), with: bigEndian(crc))
            offset += 12 + length
        }
        return out
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xff), UInt8((value >> 8) & 0xff), UInt8(value & 0xff)]
    }

    private static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 == 1 ? 0xedb8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xffff_ffff
        for byte in bytes { c = crcTable[Int((c ^ UInt32(byte)) & 0xff)] ^ (c >> 8) }
        return c ^ 0xffff_ffff
    }
}
