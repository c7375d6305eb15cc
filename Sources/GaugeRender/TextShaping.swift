import CGaugeShape

/// Lines in scripts that need more than a glyph per character: right-to-left text put in
/// its visual order by the Unicode bidirectional algorithm (FriBidi), and each run of one
/// direction and one font shaped by HarfBuzz (Arabic's joined forms, Devanagari's
/// conjuncts and vowel signs, Thai's stacked marks), both libraries loaded at run time.
/// A line of Latin, Greek, Cyrillic or CJK alone never comes here: it keeps the plain
/// path, a glyph per character, which costs no library and draws the same.
enum TextShaping {
    /// Whether `scalar` belongs to a script or class that shaping or direction changes:
    /// right-to-left scripts, the Indic, Southeast Asian and Tibetan scripts, combining
    /// marks, joiners and the directional formatting characters.
    static func needsShaping(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0300...0x036F: true  // combining diacritical marks
        case 0x0590...0x08FF: true  // Hebrew, Arabic, Syriac, Thaana, NKo, Samaritan, Mandaic
        case 0x0900...0x0DFF: true  // Devanagari ... Sinhala
        case 0x0E00...0x0FFF: true  // Thai, Lao, Tibetan
        case 0x1000...0x109F: true  // Myanmar
        case 0x1780...0x18AF: true  // Khmer, Mongolian
        case 0x200C...0x200F, 0x202A...0x202E, 0x2066...0x2069: true  // joiners, marks, embeddings, isolates
        case 0xA8E0...0xA8FF: true  // Devanagari Extended
        case 0xFB1D...0xFDFF, 0xFE70...0xFEFF: true  // Hebrew and Arabic presentation forms
        case 0x10800...0x10FFF, 0x1E800...0x1EFFF: true  // historic right-to-left scripts, Adlam
        default: false
        }
    }

    /// Whether `scalar` is drawn with the character before it, whatever font that came
    /// from: a combining mark, a joiner, a variation selector, or a character that draws
    /// nothing (directional marks and embeddings, which HarfBuzz makes invisible).
    static func staysWithPrevious(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0300...0x036F, 0x1AB0...0x1AFF, 0x1DC0...0x1DFF, 0x20D0...0x20FF, 0xFE20...0xFE2F: true
        case 0x200B...0x200F, 0x202A...0x202E, 0x2060...0x206F, 0xFE00...0xFE0F, 0xFEFF: true
        default: false
        }
    }

    /// Why shaping is not available (a library did not load), nil when it is.
    static let problem: String? = {
        var message = [CChar](repeating: 0, count: 160)
        guard gauge_shape_load(&message, message.count) != 0 else { return nil }
        return String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

    /// Each character's embedding level in its paragraph, nil when FriBidi fails.
    static func levels(_ text: [UInt32]) -> [UInt8]? {
        var levels = [UInt8](repeating: 0, count: text.count)
        let result = text.withUnsafeBufferPointer { codes in
            levels.withUnsafeMutableBufferPointer { gauge_bidi_levels(codes.baseAddress, Int32(codes.count), $0.baseAddress) }
        }
        return result < 0 ? nil : levels
    }

    /// Runs of one level and one font, in visual order (rule L2: from the highest level
    /// down to the lowest odd one, each stretch at that level or higher reversed).
    static func visualOrder(_ levels: [UInt8]) -> [Int] {
        var order = Array(levels.indices)
        guard let highest = levels.max(), let lowestOdd = levels.filter({ $0 & 1 == 1 }).min() else { return order }
        var level = highest
        while level >= lowestOdd {
            var start = 0
            while start < order.count {
                guard levels[order[start]] >= level else {
                    start += 1
                    continue
                }
                var end = start
                while end < order.count, levels[order[end]] >= level { end += 1 }
                order[start..<end].reverse()
                start = end
            }
            level -= 1
        }
        return order
    }
}
