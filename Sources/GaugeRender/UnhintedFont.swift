import CFreeType
import CGaugeLinux
import CGaugeSubset
import CPixman
import GaugeSystem

/// A copy of a font file for the initramfs without what Gauge's renderer never reads.
///
/// Every glyph is drawn with `FT_LOAD_TARGET_LIGHT`, for which FreeType's auto-hinter hints
/// an outline of TrueType curves: the font's own TrueType instructions run only for the few
/// fonts FreeType calls tricky. Glyph names are read by nothing Gauge calls. So a TrueType
/// font's copy leaves out both (HarfBuzz's subsetter, every glyph at its index and every
/// other table kept): about a fifth of DejaVu Sans. The copy is kept only when FreeType
/// draws every glyph of it at every size `checkedSizes` names exactly as it draws the
/// original's, the same bitmap at the same place with the same advance; otherwise, and for
/// any other font (CFF outlines, whose hints FreeType's light hinting uses; collections),
/// the original is copied whole.
package enum UnhintedFont {
    /// What `write` made.
    package enum Outcome: Equatable, Sendable {
        /// The copy without instructions and glyph names, of `to` bytes (the original `from`).
        case unhinted(from: Int, to: Int)
        /// The original, byte for byte, and why.
        case whole(String)
    }

    /// Pixel sizes at which every glyph is compared: the label's and the text's sizes of the
    /// sample theme from a 480x272 panel to a 4K screen lie among them.
    package static let checkedSizes = [11, 16, 24, 37]

    /// Writes `destination` (replaced as a whole: a temporary file renamed over it) as
    /// `source` without its hinting and glyph names, or as `source` itself where that would
    /// draw anything differently or cannot be made; throws when `source` cannot be read or
    /// `destination` written.
    package static func write(_ source: String, to destination: String) throws(AssetError) -> Outcome {
        let original: [UInt8]
        do throws(RegularFile.Error) {
            original = try RegularFile.read(source, maxBytes: Assets.maxFontFileBytes)
        } catch {
            throw AssetError("font: \(error)")
        }
        let temporary = destination + ".gauge-new"
        let outcome: Outcome
        switch unhinted(original) {
        case .failure(let reason):
            try store(original, at: temporary)
            outcome = .whole(reason.description)
        case .success(let bytes):
            try store(bytes, at: temporary)
            if let difference = difference(between: source, and: temporary) {
                try store(original, at: temporary)
                outcome = .whole(difference)
            } else {
                outcome = .unhinted(from: original.count, to: bytes.count)
            }
        }
        do throws(SystemError) {
            try Syscall.rename(temporary, to: destination)
        } catch {
            try? Syscall.unlink(temporary)
            throw AssetError("font: cannot write \(destination): \(error)")
        }
        return outcome
    }

    /// The font without its instructions and glyph names, or why it is to be copied whole.
    private static func unhinted(_ font: [UInt8]) -> Result<[UInt8], AssetError> {
        // A single face of TrueType outlines: 0x00010000 or 'true'.
        let tag = Array(font.prefix(4))
        guard font.count >= 12, tag == [0, 1, 0, 0] || tag == Array("true".utf8) else {
            if tag == Array("ttcf".utf8) { return .failure(AssetError("a collection of faces: kept whole")) }
            if tag == Array("OTTO".utf8) { return .failure(AssetError("CFF outlines, whose hints light hinting reads: kept whole")) }
            return .failure(AssetError("not a TrueType font: kept whole"))
        }
        var size = 0
        var message = [CChar](repeating: 0, count: 160)
        let made = font.withUnsafeBytes { bytes in
            message.withUnsafeMutableBufferPointer { gauge_subset_unhinted(bytes.baseAddress, bytes.count, &size, $0.baseAddress, $0.count) }
        }
        guard let made else {
            let why = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            return .failure(AssetError("\(why): kept whole"))
        }
        defer { free(made) }
        guard size < font.count else { return .failure(AssetError("no hinting or glyph names to leave out: kept whole")) }
        return .success(Array(UnsafeRawBufferPointer(start: made, count: size)))
    }

    /// How the font at `copy` draws differently from the one at `original`, if it does
    /// (`checkedSizes`, every glyph); or why the two cannot be compared.
    package static func difference(between original: String, and copy: String) -> String? {
        var library: FT_Library?
        guard FT_Init_FreeType(&library) == 0, let library else { return "FreeType cannot start: kept whole" }
        defer { FT_Done_FreeType(library) }
        let a: FontFace, b: FontFace
        do throws(AssetError) {
            a = try face(original, library: library)
            b = try face(copy, library: library)
        } catch {
            return "\(error): kept whole"
        }
        guard !a.isTricky else { return "FreeType draws this font by its instructions (a tricky font): kept whole" }
        guard a.glyphCount == b.glyphCount else { return "the copy has other glyphs: kept whole" }
        for size in checkedSizes {
            guard a.verticalMetrics(size: size) == b.verticalMetrics(size: size) else {
                return "the copy's lines are spaced differently at \(size) px: kept whole"
            }
            for index in 0..<UInt32(a.glyphCount) where !a.glyph(index: index, size: size).drawsAs(b.glyph(index: index, size: size)) {
                return "the copy draws glyph \(index) differently at \(size) px: kept whole"
            }
        }
        return nil
    }

    private static func face(_ path: String, library: FT_Library) throws(AssetError) -> FontFace {
        let file: RegularFile
        do throws(RegularFile.Error) {
            file = try RegularFile(path, maxBytes: Assets.maxFontFileBytes)
        } catch {
            throw AssetError("font: \(error)")
        }
        return try FontFace(library: library, data: FontData(file), path: path)
    }

    private static func store(_ bytes: [UInt8], at path: String) throws(AssetError) {
        try? Syscall.unlink(path)
        do throws(SystemError) {
            let fd = try Syscall.open(path, flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode: 0o644)
            defer { Syscall.close(fd) }
            try bytes.withUnsafeBytes { bytes in Result { () throws(SystemError) in try Syscall.writeAll(fd, bytes, at: 0) } }.get()
            try Syscall.chmod(path, mode: 0o644)
        } catch {
            try? Syscall.unlink(path)
            throw AssetError("font: cannot write \(path): \(error)")
        }
    }
}

extension FontFace.Glyph {
    /// The same coverage at the same place, with the same advance.
    fileprivate func drawsAs(_ other: FontFace.Glyph) -> Bool {
        guard left == other.left, top == other.top, advance == other.advance else { return false }
        switch (image, other.image) {
        case (nil, nil): return true
        case (let a?, let b?): return a.sameA8Pixels(as: b)
        default: return false
        }
    }
}

extension PixmanImage {
    /// Whether two a8 images of the same size hold the same coverage, row by row (the
    /// stride's padding not compared).
    fileprivate func sameA8Pixels(as other: PixmanImage) -> Bool {
        guard width == other.width, height == other.height, let a = pixman_image_get_data(raw),
            let b = pixman_image_get_data(other.raw)
        else { return false }
        let (strideA, strideB) = (Int(pixman_image_get_stride(raw)), Int(pixman_image_get_stride(other.raw)))
        let rowA = UnsafeRawPointer(a), rowB = UnsafeRawPointer(b)
        for y in 0..<height where memcmp(rowA + y * strideA, rowB + y * strideB, width) != 0 { return false }
        return true
    }
}
