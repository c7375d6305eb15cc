import Foundation
import GaugeRender
import Testing

/// Fonts named by family in a theme: found by the names inside the files (FreeType), not
/// by fontconfig and not by file names.
@Suite struct FontFinderTests {
    private static let dejavu = "/usr/share/fonts/truetype/dejavu"

    @Test func aFamilyIsItsRegularFaceAndTheBoldFontsBoldOne() throws {
        #expect(try FontFinder.find("DejaVu Sans", bold: false) == Self.dejavu + "/DejaVuSans.ttf")
        #expect(try FontFinder.find("DejaVu Sans", bold: true) == Self.dejavu + "/DejaVuSans-Bold.ttf")
        #expect(try FontFinder.find("dejavu sans:Bold", bold: false) == Self.dejavu + "/DejaVuSans-Bold.ttf")
        #expect(try FontFinder.find("DejaVu Serif:style=Italic", bold: false) == Self.dejavu + "/DejaVuSerif-Italic.ttf")
    }

    @Test func theFileIsFoundByTheNamesInsideIt() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fonts-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory + "/deep/er", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.copyItem(atPath: Self.dejavu + "/DejaVuSans-Bold.ttf", toPath: directory + "/deep/er/a.ttf")
        try FileManager.default.copyItem(atPath: Self.dejavu + "/DejaVuSans.ttf", toPath: directory + "/DejaVuSans-Bold.ttf")
        #expect(try FontFinder.find("DejaVu Sans:Bold", bold: false, directories: [directory]) == directory + "/deep/er/a.ttf")
        #expect(throws: AssetError("font: no font of family 'DejaVu Serif' in style 'Regular' under \(directory)")) {
            try FontFinder.find("DejaVu Serif", bold: false, directories: [directory])
        }
    }

    @Test func aThemeFileNamesFontsByFamilyAndAnUnknownOneIsItsFileAndLine() {
        var theme = Theme()
        let problems = ThemeFile.apply("[text]\nfont = DejaVu Serif\nbold_font = \"DejaVu Serif\"\n\nfont = Nope Sans:Bold\n", to: &theme,
                                       path: "/etc/gauge/gauge.theme")
        #expect(theme.font == Self.dejavu + "/DejaVuSerif.ttf")
        #expect(theme.boldFont == Self.dejavu + "/DejaVuSerif-Bold.ttf")
        #expect(problems.map(\.description) == [
            "/etc/gauge/gauge.theme:5: font: no font of family 'Nope Sans' in style 'Bold' under /usr/share/fonts, /usr/local/share/fonts",
        ])
        // A file's name is a path still (relative to the theme), never a family.
        let relative = ThemeFile.apply("font = DejaVuSans.ttf\n", to: &theme, path: Self.dejavu + "/x.theme")
        #expect(relative.isEmpty && theme.font == Self.dejavu + "/DejaVuSans.ttf", "\(relative)")
    }
}
