import CFreeType
import CGaugeShape
import CPixman

/// A line of text rendered as a coverage mask, ready to be composited in any colour.
package struct TextImage {
    package let mask: PixmanImage?
    package let width: Int
    package let height: Int
    /// Distance from the top of the image to the baseline.
    let ascent: Int
    /// True when the text was cut and ended with an ellipsis to fit.
    package let truncated: Bool
    /// Characters no font had, drawn as replacement boxes.
    package let missingGlyphs: Int
}

/// Lays out and rasterises single lines of text with FreeType: a regular and a bold face,
/// per-character fallback through a list of fonts, a replacement box for characters no
/// font has, and the built-in digits when no font file exists at all.
///
/// The theme's font and bold font open at once; each fallback font (a CJK collection is
/// megabytes) is read the first time a character is missing from every font before it
/// in the list, and is shared by the regular and bold text.
package final class TextRenderer {
    private var library: FT_Library?
    private let assets: Assets
    private var regularFace: FontFace?
    private var boldFace: FontFace?
    private let fallbackPaths: [String]
    /// The fallbacks opened so far, and how many paths of the list were tried.
    private var fallbackFaces: [FontFace] = []
    private var fallbacksTried = 0

    /// Fonts that failed to open, for the log.
    package private(set) var unavailableFonts: [String] = []
    /// Why each font in `unavailableFonts` failed.
    package private(set) var fontProblems: [String: String] = [:]

    package init(theme: Theme, assets: Assets = Assets()) {
        self.assets = assets
        var lib: FT_Library?
        if FT_Init_FreeType(&lib) == 0 { library = lib }
        fallbackPaths = theme.fallbackFonts.filter { !$0.isEmpty }
        regularFace = openFace(theme.font)
        boldFace = openFace(theme.boldFont) ?? regularFace
    }

    deinit {
        regularFace = nil
        boldFace = nil
        fallbackFaces = []
        if let library { FT_Done_FreeType(library) }
    }

    /// Bytes of rendered glyphs the open faces keep (each within `FontFace.glyphCacheBudget`).
    package var glyphCacheBytes: Int {
        var faces = fallbackFaces
        if let regularFace { faces.append(regularFace) }
        if let boldFace, boldFace !== regularFace { faces.append(boldFace) }
        return faces.reduce(0) { $0 + $1.glyphBytes }
    }

    /// Open faces, each with its own glyph budget.
    package var openFaceCount: Int {
        fallbackFaces.count + (regularFace == nil ? 0 : 1) + (boldFace == nil || boldFace === regularFace ? 0 : 1)
    }

    /// The most bytes of glyphs one face keeps.
    package static var glyphCacheBudget: Int { FontFace.glyphCacheBudget }

    /// True when no font file could be opened and only the built-in digits are available.
    package var usesBuiltinFont: Bool { regularFace == nil && firstFallback == nil }

    private func openFace(_ path: String) -> FontFace? {
        guard let library, !path.isEmpty else { return nil }
        do throws(AssetError) {
            return try FontFace(library: library, data: try assets.fontData(path), path: path)
        } catch {
            if !unavailableFonts.contains(path) {
                unavailableFonts.append(path)
                fontProblems[path] = error.description
            }
            return nil
        }
    }

    /// The fallback at `index` of those that open, opening further ones as needed; nil
    /// past the last.
    private func fallback(_ index: Int) -> FontFace? {
        while fallbackFaces.count <= index, fallbacksTried < fallbackPaths.count {
            let path = fallbackPaths[fallbacksTried]
            fallbacksTried += 1
            if let face = openFace(path) { fallbackFaces.append(face) }
        }
        return index < fallbackFaces.count ? fallbackFaces[index] : nil
    }

    private var firstFallback: FontFace? { fallback(0) }

    /// Renders `text` on one line at `size` pixels, cut with an ellipsis to `maxWidth` pixels.
    /// A line with a character that needs shaping or has a direction of its own is shaped
    /// (`TextShaping`) where HarfBuzz and FriBidi load; any other, a glyph per character.
    package func render(_ text: String, size: Int, bold useBold: Bool = false, maxWidth: Int = .max) -> TextImage {
        let main = useBold ? boldFace : regularFace
        var scalars: [Unicode.Scalar] = []
        for scalar in text.unicodeScalars where !(scalar.value < 0x20 || (scalar.value >= 0x7f && scalar.value < 0xa0)) {
            scalars.append(scalar)
        }
        if main != nil || firstFallback != nil, scalars.contains(where: TextShaping.needsShaping) {
            if let problem = TextShaping.problem {
                shapingProblem = problem
            } else if let image = renderShaped(scalars, main: main, size: size, maxWidth: maxWidth) {
                return image
            } else {
                shapingProblem = "HarfBuzz or FriBidi failed on a line"
            }
        }
        var glyphs: [(glyph: FontFace.Glyph, missing: Bool)] = []
        for scalar in scalars {
            glyphs.append(glyph(for: scalar, main: main, size: size))
        }
        var truncated = false
        var total = glyphs.reduce(0.0) { $0 + $1.glyph.advance }
        if total > Double(maxWidth) {
            truncated = true
            let ellipsis = glyph(for: "\u{2026}", main: main, size: size)
            let dots = ellipsis.missing ? glyph(for: ".", main: main, size: size) : ellipsis
            let tail = ellipsis.missing ? [dots, dots, dots] : [ellipsis]
            let tailWidth = tail.reduce(0.0) { $0 + $1.glyph.advance }
            while !glyphs.isEmpty, total + tailWidth > Double(maxWidth) {
                total -= glyphs.removeLast().glyph.advance
            }
            while let last = glyphs.last, last.glyph.image == nil, !last.missing {
                total -= glyphs.removeLast().glyph.advance
            }
            if total + tailWidth <= Double(maxWidth) {
                glyphs += tail
            }
        }
        var line = PlacedLine()
        for entry in glyphs {
            line.append(entry.glyph, missing: entry.missing)
        }
        return image(of: line, truncated: truncated, main: main, size: size)
    }

    /// The coverage mask of `line`.
    private func image(of line: PlacedLine, truncated: Bool, main: FontFace?, size: Int) -> TextImage {
        let metrics = verticalMetrics(main: main, size: size)
        let width = Int(line.width.rounded(.up))
        let height = metrics.ascent + metrics.descent
        guard width > 0, height > 0 else {
            return TextImage(mask: nil, width: 0, height: height, ascent: metrics.ascent, truncated: truncated, missingGlyphs: line.missing)
        }
        let mask = PixmanImage(format: PIXMAN_a8, width: width, height: height)
        for placed in line.glyphs {
            guard let image = placed.glyph.image else { continue }
            let x = Int(placed.x.rounded()) + placed.glyph.left
            let y = metrics.ascent - placed.glyph.top - Int(placed.y.rounded())
            mask.composite(PIXMAN_OP_ADD, source: image, rect: Rect(x: x, y: y, width: image.width, height: image.height))
        }
        return TextImage(mask: mask, width: width, height: height, ascent: metrics.ascent, truncated: truncated, missingGlyphs: line.missing)
    }

    /// Renders `lines` one under the other, each centred and cut to `maxWidth` as `render`
    /// cuts one line, a fifth of `size` apart. One line gives what `render` gives.
    package func render(lines: [String], size: Int, bold: Bool = false, maxWidth: Int = .max) -> TextImage {
        let images = lines.map { render($0, size: size, bold: bold, maxWidth: maxWidth) }
        guard images.count > 1 else { return images.first ?? render("", size: size, bold: bold) }
        let gap = Int((Double(size) * 0.2).rounded())
        let width = images.map { $0.width }.max() ?? 0
        let height = images.reduce(0) { $0 + $1.height } + gap * (images.count - 1)
        let truncated = images.contains(where: { $0.truncated })
        let missing = images.reduce(0) { $0 + $1.missingGlyphs }
        guard width > 0 else {
            return TextImage(mask: nil, width: 0, height: height, ascent: images[0].ascent, truncated: truncated, missingGlyphs: missing)
        }
        let mask = PixmanImage(format: PIXMAN_a8, width: width, height: height)
        var y = 0
        for image in images {
            if let line = image.mask {
                mask.composite(PIXMAN_OP_ADD, source: line, rect: Rect(x: (width - image.width) / 2, y: y, width: image.width, height: image.height))
            }
            y += image.height + gap
        }
        return TextImage(mask: mask, width: width, height: height, ascent: images[0].ascent, truncated: truncated, missingGlyphs: missing)
    }

    /// Why a line that needs shaping was drawn unshaped (HarfBuzz or FriBidi missing), for
    /// the log; nil while every such line was shaped.
    package private(set) var shapingProblem: String?

    /// A line's glyphs where they go: each at its pen position, offset upwards by `y`.
    private struct PlacedLine {
        var glyphs: [(glyph: FontFace.Glyph, x: Double, y: Double)] = []
        var width = 0.0
        var missing = 0

        mutating func append(_ glyph: FontFace.Glyph, missing: Bool, dx: Double = 0, dy: Double = 0, advance: Double? = nil) {
            glyphs.append((glyph, width + dx, dy))
            width += advance ?? glyph.advance
            if missing { self.missing += 1 }
        }
    }

    /// `scalars` shaped (see `TextShaping`) and cut in reading order to `maxWidth`, so a cut
    /// right-to-left line keeps its start (on the right) and ends in the ellipsis on its
    /// left; nil when the libraries cannot shape it (then it is drawn unshaped).
    private func renderShaped(_ scalars: [Unicode.Scalar], main: FontFace?, size: Int, maxWidth: Int) -> TextImage? {
        guard var line = layoutShaped(scalars, main: main, size: size) else { return nil }
        let truncated = line.width > Double(maxWidth)
        if truncated {
            let tail: [Unicode.Scalar] = face(for: "\u{2026}", main: main) != nil ? ["\u{2026}"] : [".", ".", "."]
            // The most characters of the start that fit with the ellipsis after them.
            line = PlacedLine()
            var low = 0, high = scalars.count - 1
            while low <= high {
                let count = (low + high) / 2
                var kept = Array(scalars[..<count])
                while let last = kept.last, Self.isWhiteSpace(last) { kept.removeLast() }
                guard let cut = layoutShaped(kept + tail, main: main, size: size) else { return nil }
                if cut.width <= Double(maxWidth) {
                    line = cut
                    low = count + 1
                } else {
                    high = count - 1
                }
            }
        }
        return image(of: line, truncated: truncated, main: main, size: size)
    }

    /// The glyphs of `scalars` in visual order: the paragraph's levels from FriBidi, runs of
    /// one level and one face (the first face with the character; a combining mark or a
    /// joiner stays with the character before it), each shaped by HarfBuzz, the runs
    /// reordered. Characters no font has are replacement boxes. Nil when a library fails.
    private func layoutShaped(_ scalars: [Unicode.Scalar], main: FontFace?, size: Int) -> PlacedLine? {
        var line = PlacedLine()
        var codes: [UInt32] = []
        var faces: [FontFace?] = []
        for scalar in scalars {
            codes.append(scalar.value)
            if let previous = faces.last, let face = previous, TextShaping.staysWithPrevious(scalar) {
                faces.append(face)
            } else {
                faces.append(face(for: scalar, main: main)?.face)
            }
        }
        guard !codes.isEmpty else { return line }
        guard let levels = TextShaping.levels(codes) else { return nil }
        // Each run's first character.
        var starts: [Int] = [0]
        for index in 1..<codes.count where levels[index] != levels[index - 1] || faces[index] !== faces[index - 1] {
            starts.append(index)
        }
        for run in TextShaping.visualOrder(starts.map { levels[$0] }) {
            let first = starts[run], end = run + 1 < starts.count ? starts[run + 1] : codes.count
            let rightToLeft = levels[first] & 1 == 1
            guard let face = faces[first] else {
                for offset in 0..<(end - first) {
                    let entry = glyph(for: scalars[rightToLeft ? end - 1 - offset : first + offset], main: main, size: size)
                    line.append(entry.glyph, missing: entry.missing)
                }
                continue
            }
            guard let shaped = face.shape(codes, from: first, to: end, rightToLeft: rightToLeft, size: size) else { return nil }
            for glyph in shaped {
                line.append(
                    face.glyph(index: glyph.index, size: size), missing: false, dx: Double(glyph.x_offset) / 64,
                    dy: Double(glyph.y_offset) / 64, advance: Double(glyph.x_advance) / 64)
            }
        }
        return line
    }

    /// The face that has `scalar` and its glyph there: the main one, else the first fallback
    /// that has it.
    private func face(for scalar: Unicode.Scalar, main: FontFace?) -> (face: FontFace, index: UInt32)? {
        if let main, let index = main.glyphIndex(for: scalar) { return (main, index) }
        var next = 0
        while let face = fallback(next) {
            next += 1
            if face !== main, let index = face.glyphIndex(for: scalar) { return (face, index) }
        }
        return nil
    }

    /// Unicode's White_Space property, its 25 code points written out: the standard
    /// library's answer (`properties.isWhitespace`) brings 20 KB of property tables.
    package static func isWhiteSpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }

    /// The glyph from the main face, else from the first fallback that has it; else the
    /// built-in digits where no font opened at all, a space's advance, or a replacement box.
    private func glyph(for scalar: Unicode.Scalar, main: FontFace?, size: Int) -> (glyph: FontFace.Glyph, missing: Bool) {
        if let found = face(for: scalar, main: main) {
            return (found.face.glyph(index: found.index, size: size), false)
        }
        if main == nil, firstFallback == nil {
            if let g = BuiltinFont.glyph(scalar, size: size) { return (g, false) }
            return (replacementBox(size: size), true)
        }
        if Self.isWhiteSpace(scalar) {
            return (FontFace.Glyph(image: nil, left: 0, top: 0, advance: Double(size) / 3), false)
        }
        return (replacementBox(size: size), true)
    }

    /// A hollow box, as fonts draw `.notdef`, so a missing character still shows as one.
    private func replacementBox(size: Int) -> FontFace.Glyph {
        let w = max(3, size * 5 / 9), h = max(4, size * 7 / 9)
        let line = max(1, size / 14)
        let image = PixmanImage(format: PIXMAN_a8, width: w, height: h)
        image.fill(Rect(x: 0, y: 0, width: w, height: h), color: .white)
        image.fill(Rect(x: line, y: line, width: w - 2 * line, height: h - 2 * line), color: Color.black.withAlpha(0))
        return FontFace.Glyph(image: image, left: max(1, size / 12), top: h, advance: Double(w + 2 * max(1, size / 12)))
    }

    private func verticalMetrics(main: FontFace?, size: Int) -> (ascent: Int, descent: Int) {
        guard let first = main ?? firstFallback else { return BuiltinFont.verticalMetrics(size: size) }
        return first.verticalMetrics(size: size)
    }
}

extension TextImage {
    /// The mask's coverage, row after row (for tests and diagnostics).
    package var coverageRows: [[UInt8]] {
        guard let mask else { return [] }
        let stride = Int(pixman_image_get_stride(mask.raw))
        let data = pixman_image_get_data(mask.raw)!.withMemoryRebound(to: UInt8.self, capacity: 1) { $0 }
        return (0..<height).map { y in (0..<width).map { data[y * stride + $0] } }
    }

    /// Pixels with any coverage (for tests and diagnostics).
    package var inkPixels: Int {
        guard let mask else { return 0 }
        let stride = Int(pixman_image_get_stride(mask.raw))
        let data = pixman_image_get_data(mask.raw)!.withMemoryRebound(to: UInt8.self, capacity: 1) { $0 }
        var count = 0
        for y in 0..<height {
            for x in 0..<width where data[y * stride + x] > 0 { count += 1 }
        }
        return count
    }
}
