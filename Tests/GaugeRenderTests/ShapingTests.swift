import GaugeRender
import Testing

/// Text in scripts that need shaping and direction: HarfBuzz and FriBidi (tools/install-deps
/// installs them, with Devanagari's and Thai's fonts).
@Suite("Shaping and direction")
struct ShapingTests {
    let text = TextRenderer(theme: Theme())

    /// The mask's columns `range`, row after row.
    private func columns(_ image: TextImage, _ range: Range<Int>) -> [[UInt8]] {
        image.coverageRows.map { Array($0[range]) }
    }

    @Test("the libraries load here")
    func librariesLoad() {
        _ = text.render("שלום", size: 16)
        #expect(text.shapingProblem == nil)
    }

    @Test("Arabic letters join: three behs are narrower together than three alone")
    func arabicJoins() {
        let joined = text.render("\u{628}\u{628}\u{628}", size: 32)
        let alone = text.render("\u{628}", size: 32)
        #expect(joined.missingGlyphs == 0 && alone.missingGlyphs == 0)
        #expect(joined.width * 10 < alone.width * 3 * 8, "joined \(joined.width) px, alone \(alone.width) px each")
    }

    @Test("Hebrew runs right to left: the first letter is drawn rightmost")
    func hebrewRightToLeft() {
        let word = text.render("\u{5D0}\u{5D1}", size: 32)  // alef, bet
        let bet = text.render("\u{5D1}", size: 32)
        #expect(word.missingGlyphs == 0)
        #expect(word.width > bet.width)
        // Bet, the second letter, starts the line on the left, exactly as alone.
        #expect(columns(word, 0..<bet.width) == columns(bet, 0..<bet.width))
    }

    @Test("a mixed line: Hebrew, English and numbers each in their order")
    func mixedLine() {
        // "version 2.5" in English inside a Hebrew line stays left to right, digits too.
        let mixed = text.render("\u{5D2}\u{5E8}\u{5E1}\u{5D4} version 2.5", size: 20)
        // Shaped as well (a left-to-right mark draws nothing): kerned as in the mixed line.
        let english = text.render("version 2.5\u{200E}", size: 20)
        #expect(mixed.missingGlyphs == 0)
        // The English run comes first from the left, as it is alone (the paragraph is right to left).
        #expect(columns(mixed, 0..<(english.width - 1)) == columns(english, 0..<(english.width - 1)))
    }

    @Test("a long right-to-left line is cut at its end: its start stays, the ellipsis on its left")
    func cutKeepsTheStart() {
        let scalars = Array("\u{5D4}\u{5EA}\u{5E7}\u{5E0}\u{5EA} \u{5DE}\u{5E2}\u{5E8}\u{5DB}\u{5EA} \u{5D4}\u{5E4}\u{5E2}\u{5DC}\u{5D4} \u{5D7}\u{5D3}\u{5E9}\u{5D4} \u{5DE}\u{5D5}\u{5DB}\u{5E0}\u{5D4}".unicodeScalars)
        let whole = String(String.UnicodeScalarView(scalars))
        let cut = text.render(whole, size: 20, maxWidth: 120)
        #expect(cut.truncated)
        #expect(cut.width <= 120)
        // Exactly a start of the text with the ellipsis after it in reading order.
        let prefixes = (1..<scalars.count).map { count in
            var kept = Array(scalars[..<count])
            while kept.last == " " { kept.removeLast() }
            return text.render(String(String.UnicodeScalarView(kept)) + "\u{2026}", size: 20)
        }
        #expect(prefixes.contains { $0.width == cut.width && $0.coverageRows == cut.coverageRows })
        let ellipsis = text.render("\u{2026}", size: 20)
        #expect(columns(cut, 0..<ellipsis.width) == columns(ellipsis, 0..<ellipsis.width), "the ellipsis on the left")
    }

    @Test("Devanagari and Thai come from their fonts, shaped, nothing missing")
    func indicAndThai() {
        let hindi = text.render("\u{915}\u{94D}\u{937}\u{93F}", size: 32)  // क्षि: a conjunct and a vowel sign before it
        #expect(hindi.missingGlyphs == 0)
        let parts = text.render("\u{915}", size: 32).width + text.render("\u{937}", size: 32).width
        #expect(hindi.width < parts, "the conjunct is narrower than its letters side by side")
        let thai = text.render("\u{E01}\u{E33}\u{E25}\u{E31}\u{E07}\u{E15}\u{E34}\u{E14}\u{E15}\u{E31}\u{E49}\u{E07}", size: 32)
        #expect(thai.missingGlyphs == 0)
    }

    @Test("goldens: Arabic, Hebrew, a mixed line with numbers, Devanagari and Thai")
    func goldens() throws {
        let lines = [
            ("arabic", "جارٍ تثبيت النظام", "تحديث الحزم ٣ من ١٢"),
            ("hebrew", "מתקין את המערכת", "מעדכן חבילות"),
            ("mixed", "עדכון מערכת", "מתקין linux-image 6.12 (3 מתוך 12)"),
            ("devanagari", "सिस्टम इंस्टॉल हो रहा है", "पैकेज अपडेट हो रहे हैं"),
            ("thai", "กำลังติดตั้งระบบ", "กำลังอัปเดตแพ็กเกจ"),
        ]
        for (name, title, message) in lines {
            let screen = try Screen(width: 480, height: 272)
            screen.render(model(42, message: message, title: title))
            try expectGolden(screen.image, "480x272-\(name)")
        }
    }
}
