import Foundation
import GaugeRender
import Testing

/// The initramfs's copy of a font (`gaugectl copy-font`): DejaVu Sans without its TrueType
/// instructions and glyph names draws every line as the original does, shaped text too;
/// any other file is copied byte for byte. Needs libharfbuzz-subset0 (tools/install-deps).
@Suite struct UnhintedFontTests {
    private static let dejavu = "/usr/share/fonts/truetype/dejavu"

    private func scratch() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("unhinted-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func dejaVuLosesAFifthAndDrawsEveryLineTheSame() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for name in ["DejaVuSans.ttf", "DejaVuSans-Bold.ttf"] {
            let copy = directory + "/" + name
            let outcome = try UnhintedFont.write(Self.dejavu + "/" + name, to: copy)
            guard case .unhinted(let from, let to) = outcome else {
                Issue.record("\(name): \(outcome)")
                continue
            }
            let size = try FileManager.default.attributesOfItem(atPath: copy)[.size] as? Int
            let originalSize = try FileManager.default.attributesOfItem(atPath: Self.dejavu + "/" + name)[.size] as? Int
            #expect(size == to && from == originalSize)
            #expect(to * 100 < from * 85, "\(name): \(from) -> \(to) bytes")
            #expect(!FileManager.default.fileExists(atPath: copy + ".gauge-new"))
        }
        var original = Theme(), copied = Theme()
        original.font = Self.dejavu + "/DejaVuSans.ttf"
        original.boldFont = Self.dejavu + "/DejaVuSans-Bold.ttf"
        copied.font = directory + "/DejaVuSans.ttf"
        copied.boldFont = directory + "/DejaVuSans-Bold.ttf"
        original.fallbackFonts = []
        copied.fallbackFonts = []
        let (a, b) = (TextRenderer(theme: original), TextRenderer(theme: copied))
        // Latin with kerning and ligatures, Greek, Cyrillic, and Arabic and Hebrew shaped and
        // ordered by HarfBuzz and FriBidi from the copy's GSUB and GPOS.
        let lines = ["Installing packages: AVATAR, Ŧest fi ffl 42%", "Ελληνικά και Кириллица ǅ",
                     "مرحبا بالعالم 42%", "שלום עולם (100%)"]
        for line in lines {
            for size in [9, 14, 22, 40] {
                for bold in [false, true] {
                    let (x, y) = (a.render(line, size: size, bold: bold), b.render(line, size: size, bold: bold))
                    #expect(x.width > 0 && x.missingGlyphs == 0, "\(line)")
                    #expect(x.width == y.width && x.height == y.height && x.coverageRows == y.coverageRows,
                            "'\(line)' at \(size) px\(bold ? ", bold" : "") draws differently from the copy")
                }
            }
        }
        #expect(a.shapingProblem == nil && b.shapingProblem == nil)
    }

    /// Devanagari and Thai, shaped through the copies of their fonts (the default theme's
    /// fallbacks), draw as through the originals.
    @Test func shapedScriptsDrawTheSameThroughTheirCopies() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fonts = ["/usr/share/fonts/truetype/lohit-devanagari/Lohit-Devanagari.ttf", "/usr/share/fonts/truetype/tlwg/Garuda.ttf"]
        var original = Theme(), copied = Theme()
        original.fallbackFonts = fonts
        copied.fallbackFonts = []
        for font in fonts {
            let copy = directory + "/" + (font as NSString).lastPathComponent
            let outcome = try UnhintedFont.write(font, to: copy)
            guard case .unhinted = outcome else {
                Issue.record("\(font): \(outcome)")
                return
            }
            copied.fallbackFonts.append(copy)
        }
        let (a, b) = (TextRenderer(theme: original), TextRenderer(theme: copied))
        for line in ["नमस्ते दुनिया, क्षत्रिय", "สวัสดีชาวโลก ที่นี่"] {
            for size in [12, 20, 33] {
                let (x, y) = (a.render(line, size: size), b.render(line, size: size))
                #expect(x.width > 0 && x.missingGlyphs == 0, "\(line)")
                #expect(x.width == y.width && x.coverageRows == y.coverageRows, "'\(line)' at \(size) px draws differently from the copies")
            }
        }
        #expect(a.shapingProblem == nil && b.shapingProblem == nil)
    }

    /// The check that keeps a copy tells fonts apart: nothing between a font and itself;
    /// a copy with one glyph's advance changed (its metrics, the same glyphs) is caught.
    @Test func theCheckFindsACopyThatDrawsDifferently() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let regular = Self.dejavu + "/DejaVuSans.ttf"
        #expect(UnhintedFont.difference(between: regular, and: regular) == nil)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: regular)))
        func number(_ at: Int, _ count: Int) -> Int { bytes[at..<at + count].reduce(0) { $0 << 8 | Int($1) } }
        // The table directory: 'hmtx' holds each glyph's advance (16 bits) and left side bearing.
        let hmtx = (0..<number(4, 2)).map { 12 + 16 * $0 }.first { bytes[$0..<$0 + 4].elementsEqual("hmtx".utf8) }
        let offset = try #require(hmtx.map { number($0 + 8, 4) }) + 4 * 36
        let advance = number(offset, 2) + 300
        bytes[offset] = UInt8(advance >> 8)
        bytes[offset + 1] = UInt8(advance & 0xff)
        let changed = directory + "/changed.ttf"
        try Data(bytes).write(to: URL(fileURLWithPath: changed))
        #expect(UnhintedFont.difference(between: regular, and: changed) == "the copy draws glyph 36 differently at 11 px: kept whole")
        #expect(UnhintedFont.difference(between: regular, and: Self.dejavu + "/DejaVuSans-Bold.ttf") == "the copy has other glyphs: kept whole")
    }

    @Test func anythingElseIsCopiedByteForByte() throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let notAFont = directory + "/x.ttf"
        try Data("not a font".utf8).write(to: URL(fileURLWithPath: notAFont))
        // A collection (the default theme's CJK fallback).
        let collection = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"
        for (source, reason) in [(notAFont, "not a TrueType font: kept whole"), (collection, "a collection of faces: kept whole")] {
            let copy = directory + "/copy"
            let outcome = try UnhintedFont.write(source, to: copy)
            guard case .whole(let why) = outcome else {
                Issue.record("\(source): \(outcome)")
                continue
            }
            #expect(why == reason)
            #expect(FileManager.default.contents(atPath: copy) == FileManager.default.contents(atPath: source))
        }
        #expect(throws: AssetError.self) { try UnhintedFont.write(directory + "/absent.ttf", to: directory + "/out.ttf") }
        #expect(!FileManager.default.fileExists(atPath: directory + "/out.ttf"))
        #expect(throws: AssetError.self) { try UnhintedFont.write(Self.dejavu + "/DejaVuSans.ttf", to: directory + "/no/such/dir/out.ttf") }
    }
}
