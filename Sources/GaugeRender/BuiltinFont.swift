import CPixman

/// Glyphs drawn without any font file (an initramfs with no fonts): digits, `%`, `.`,
/// `/` and space, as 5x7 cell bitmaps scaled to the pixel size.
enum BuiltinFont {
    /// Rows of five cells, top first; `#` is ink.
    private static let bitmaps: [Character: [String]] = [
        "0": [" ### ", "#   #", "#  ##", "# # #", "##  #", "#   #", " ### "],
        "1": ["  #  ", " ##  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "],
        "2": [" ### ", "#   #", "    #", "   # ", "  #  ", " #   ", "#####"],
        "3": ["#####", "   # ", "  #  ", "   # ", "    #", "#   #", " ### "],
        "4": ["   # ", "  ## ", " # # ", "#  # ", "#####", "   # ", "   # "],
        "5": ["#####", "#    ", "#### ", "    #", "    #", "#   #", " ### "],
        "6": ["  ## ", " #   ", "#    ", "#### ", "#   #", "#   #", " ### "],
        "7": ["#####", "    #", "   # ", "  #  ", " #   ", " #   ", " #   "],
        "8": [" ### ", "#   #", "#   #", " ### ", "#   #", "#   #", " ### "],
        "9": [" ### ", "#   #", "#   #", " ####", "    #", "   # ", " ##  "],
        "%": ["##   ", "##  #", "   # ", "  #  ", " #   ", "#  ##", "   ##"],
        ".": ["     ", "     ", "     ", "     ", "     ", " ##  ", " ##  "],
        "/": ["     ", "    #", "   # ", "  #  ", " #   ", "#    ", "     "],
    ]

    static func covers(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || bitmaps[Character(scalar)] != nil
    }

    /// The glyph for `scalar` at `size` pixels (nil image for a space).
    static func glyph(_ scalar: Unicode.Scalar, size: Int) -> FontFace.Glyph? {
        let cell = max(1, (size + 4) / 8)
        let advance = Double(cell * 6)
        if scalar == " " { return FontFace.Glyph(image: nil, left: 0, top: 0, advance: advance) }
        guard let rows = bitmaps[Character(scalar)] else { return nil }
        let image = PixmanImage(format: PIXMAN_a8, width: cell * 5, height: cell * 7)
        for (r, row) in rows.enumerated() {
            for (c, ch) in row.enumerated() where ch == "#" {
                image.fill(Rect(x: c * cell, y: r * cell, width: cell, height: cell), color: .white)
            }
        }
        return FontFace.Glyph(image: image, left: 0, top: cell * 7, advance: advance)
    }

    static func verticalMetrics(size: Int) -> (ascent: Int, descent: Int) {
        let cell = max(1, (size + 4) / 8)
        return (cell * 8, cell)
    }
}
