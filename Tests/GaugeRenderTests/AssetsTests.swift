import Foundation
import GaugeDisplay
import GaugeRender
import GaugeSystem
import Glibc
import Testing

/// Logos and fonts: read as regular files only, decoded from memory, and loaded once.
@Suite("Assets")
struct AssetsTests {
    private static func writeLogo(_ path: String, red: UInt8) throws {
        var rgba: [UInt8] = []
        for _ in 0..<(16 * 12) { rgba += [red, 0, 0, 255] }
        try PNG.write(PNG.Image(width: 16, height: 12, rgba: rgba), to: path)
    }

    @Test("a logo is decoded once for any number of scenes, and again when its file changes")
    func logoCache() throws {
        let path = "/tmp/gauge-assets-logo-\(getpid()).png"
        defer { unlink(path) }
        try Self.writeLogo(path, red: 255)
        var theme = Theme()
        theme.logo = path
        let assets = Assets()
        for _ in 0..<5 {
            let scene = Scene(theme: theme, width: 320, height: 240, assets: assets)
            #expect(scene.logoProblem == nil)
        }
        #expect(assets.logoDecodes == 1)
        _ = Scene(theme: theme, width: 320, height: 240, scale: 2, assets: assets)
        #expect(assets.logoDecodes == 2, "another scale is another image")

        // A new file in the same place (a new inode) is seen.
        let replacement = path + ".new"
        try Self.writeLogo(replacement, red: 10)
        rename(replacement, path)
        let display = try MemoryDisplay(width: 320, height: 240)
        let scene = Scene(theme: theme, width: 320, height: 240, assets: assets)
        scene.render(model(0), at: 0, into: display.framebuffer)
        #expect(assets.logoDecodes == 3)
        let logo = scene.logoRect
        #expect(display.pixel(x: logo.x + logo.width / 2, y: logo.y + logo.height / 2).r == 10)
    }

    @Test("an oversized PNG is refused from its header, without decoding")
    func oversizedLogo() throws {
        // 8192x8192 RGBA would be 256 MiB decoded; this file holds the header only.
        let path = "/tmp/gauge-assets-huge-\(getpid()).png"
        defer { unlink(path) }
        try Data(pngHeader(width: 8192, height: 8192)).write(to: URL(fileURLWithPath: path))
        var theme = Theme()
        theme.logo = path
        let scene = Scene(theme: theme, width: 320, height: 240)
        #expect(scene.logoProblem?.contains("8192x8192, larger than 4096x4096") == true, "\(scene.logoProblem ?? "")")

        // 4096x4096 is allowed at scale 1 but would be 8192x8192 shown at scale 2.
        try Data(pngHeader(width: 4096, height: 4096)).write(to: URL(fileURLWithPath: path))
        let scaled = Scene(theme: theme, width: 320, height: 240, scale: 2)
        #expect(scaled.logoProblem?.contains("4096x4096, larger than 2048x2048") == true, "\(scaled.logoProblem ?? "")")
    }

    @Test("devices and FIFOs are refused at once, not read")
    func notRegularFiles() throws {
        let fifo = "/tmp/gauge-assets-fifo-\(getpid())"
        defer { unlink(fifo) }
        try #require(mkfifo(fifo, 0o600) == 0)
        for path in [fifo, "/dev/ptmx", "/dev/zero", "/tmp"] {
            #expect(throws: RegularFile.Error.self) { try RegularFile.read(path, maxBytes: 1 << 20) }
            var theme = Theme()
            theme.logo = path
            theme.font = path
            let scene = Scene(theme: theme, width: 320, height: 240)
            #expect(scene.logoProblem?.contains("not a regular file") == true, "\(path): \(scene.logoProblem ?? "")")
            #expect(scene.fontProblem(path)?.contains("not a regular file") == true)
        }
    }

    @Test("fallback fonts are read the first time a character needs them")
    func lazyFallbacks() throws {
        let assets = Assets()
        let text = TextRenderer(theme: Theme(), assets: assets)
        #expect(assets.fontReads == 2, "the regular and bold fonts")
        _ = text.render("Installing 42%", size: 16)
        _ = text.render("Installing", size: 16, bold: true)
        #expect(assets.fontReads == 2, "no fallback read for text the main font has")
        let cjk = text.render("安装", size: 16)
        #expect(cjk.missingGlyphs == 0)
        #expect(assets.fontReads == 3, "the first fallback that exists")
        _ = text.render("系统", size: 16, bold: true)
        #expect(assets.fontReads == 3, "regular and bold share the fallbacks")
    }
}

extension AssetsTests {
    /// Descriptors this process has open on one of `paths`.
    private static func descriptors(on paths: [String]) throws -> Int {
        let fds = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        return fds.filter { fd in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")).map(paths.contains) ?? false
        }.count
    }

    @Test("a font is read as glyphs need it: one truncated after it opened fails new glyphs, not the process")
    func fontReadWhileUsed() throws {
        let path = "/tmp/gauge-assets-font-\(getpid()).ttf"
        defer { unlink(path) }
        try FileManager.default.copyItem(atPath: Theme().font, toPath: path)
        var theme = Theme()
        theme.font = path
        theme.fallbackFonts = []
        let text = TextRenderer(theme: theme, assets: Assets())
        let before = text.render("Installing", size: 16)
        #expect(before.width > 0 && before.missingGlyphs == 0)
        #expect(truncate(path, 4096) == 0)
        // Glyphs drawn before are kept; the others' outlines are past the file's end now.
        #expect(text.render("Installing", size: 16).width == before.width)
        let after = text.render("Wxyz", size: 32)
        #expect(after.width >= 0)
    }

    @Test("a bounded number of font files (Assets.maxCachedFonts) stays open for later scenes")
    func openFontsBounded() throws {
        let paths = (0..<(Assets.maxCachedFonts + 6)).map { "/tmp/gauge-assets-font-\(getpid())-\($0).ttf" }
        defer { for path in paths { unlink(path) } }
        for path in paths { try FileManager.default.copyItem(atPath: Theme().font, toPath: path) }
        let assets = Assets()
        for path in paths {
            var theme = Theme()
            theme.font = path
            theme.boldFont = path
            theme.fallbackFonts = []
            _ = TextRenderer(theme: theme, assets: assets).render("42%", size: 16)
        }
        #expect(assets.fontReads == paths.count)
        #expect(try Self.descriptors(on: paths) == Assets.maxCachedFonts)
    }
}

/// A PNG that is a signature, an IHDR for `width`x`height` 8-bit RGBA, a stub IDAT and
/// IEND: its size can be read, its pixels not.
func pngHeader(width: UInt32, height: UInt32) -> [UInt8] {
    func bigEndian(_ value: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8((value >> $0) & 0xff) } }
    func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        var crc: UInt32 = 0xffff_ffff
        for byte in body {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? 0xedb8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return bigEndian(UInt32(data.count)) + body + bigEndian(~crc)
    }
    let header = bigEndian(width) + bigEndian(height) + [8, 6, 0, 0, 0]
    return [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] + chunk("IHDR", header) + chunk("IDAT", [0x78, 0x9c, 3, 0])
        + chunk("IEND", [])
}
