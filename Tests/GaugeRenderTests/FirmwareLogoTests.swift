import CPixman
import Foundation
import GaugeDisplay
import GaugeRender
import Testing

/// A BMP file as firmware writes one: `rows` top row first, each pixel (r, g, b); 24 bits a
/// pixel bottom-up, or 32 with bit fields (blue in the high byte, red in the low) top-down.
private func bmp(_ rows: [[(UInt8, UInt8, UInt8)]], bits: Int = 24) -> [UInt8] {
    let width = rows[0].count, height = rows.count
    let stride = (width * bits / 8 + 3) / 4 * 4
    let header = bits == 32 ? 40 + 12 : 40
    let offset = 14 + header
    func le(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
    var bytes = Array("BM".utf8) + le(offset + stride * height, 4) + le(0, 4) + le(offset, 4)
    bytes += le(40, 4) + le(width, 4) + le(bits == 32 ? -height : height, 4) + le(1, 2) + le(bits, 2)
    bytes += le(bits == 32 ? 3 : 0, 4) + le(stride * height, 4) + le(2835, 4) + le(2835, 4) + le(0, 4) + le(0, 4)
    if bits == 32 { bytes += le(0x0000_00FF, 4) + le(0x0000_FF00, 4) + le(0x00FF_0000, 4) }
    for row in (bits == 32 ? Array(rows) : rows.reversed()) {
        var line: [UInt8] = []
        for (r, g, b) in row { line += bits == 32 ? [r, g, b, 0x7F] : [b, g, r] }
        bytes += line + [UInt8](repeating: 0, count: stride - line.count)
    }
    return bytes
}

private func pixel(_ image: PixmanImage, _ x: Int, _ y: Int) -> UInt32 {
    let data = UnsafeRawPointer(pixman_image_get_data(image.raw)!)
    return (data + y * Int(pixman_image_get_stride(image.raw))).assumingMemoryBound(to: UInt32.self)[x]
}

private let picture: [[(UInt8, UInt8, UInt8)]] = [
    [(255, 0, 0), (0, 255, 0), (0, 0, 255)],
    [(1, 2, 3), (250, 128, 7), (255, 255, 255)],
]

@Suite struct FirmwareLogoTests {
    @Test(arguments: [24, 32])
    func bitmapsDecodeOpaqueTheRightWayUp(bits: Int) throws {
        let image = try BMP.decode(bmp(picture, bits: bits), maxSide: 64).get()
        #expect(image.width == 3 && image.height == 2)
        let expected: [[UInt32]] = [[0xFFFF_0000, 0xFF00_FF00, 0xFF00_00FF], [0xFF01_0203, 0xFFFA_8007, 0xFFFF_FFFF]]
        for y in 0..<2 {
            #expect((0..<3).map { pixel(image, $0, y) } == expected[y], "row \(y), \(bits) bits")
        }
    }

    @Test func whatIsNotAReadableBitmapIsSaidSo() {
        func problem(_ bytes: [UInt8], maxSide: Int = 64) -> String? {
            if case .failure(let error) = BMP.decode(bytes, maxSide: maxSide) { return error.description }
            return nil
        }
        let good = bmp(picture)
        #expect(problem(Array("GIF89a".utf8) + good) == "not a BMP image")
        #expect(problem(Array(good.dropLast(3))) == "a BMP's pixels end after its file (75 bytes)")
        var eightBits = good
        eightBits[28] = 8
        #expect(problem(eightBits)?.hasPrefix("a BMP of 8 bits a pixel") == true)
        #expect(problem(good, maxSide: 2) == "a BMP of 3x2 pixels (at most 2 each way)")
    }

    /// A table as the kernel shows it in sysfs: status, type, offsets, the image.
    private func table(status: String = "1\n", x: Int, y: Int, image: [UInt8]) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bgrt-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (name, value) in [("status", status), ("type", "0\n"), ("version", "1\n"), ("xoffset", "\(x)\n"), ("yoffset", "\(y)\n")] {
            try value.write(toFile: directory + "/" + name, atomically: false, encoding: .utf8)
        }
        try Data(image).write(to: URL(fileURLWithPath: directory + "/image"))
        return directory
    }

    @Test func theTableGivesTheLogoAndWhereTheFirmwareDrewIt() throws {
        let directory = try table(x: 638, y: 300, image: bmp(picture))
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let logo = try FirmwareLogo.read(directory: directory)
        #expect(logo.xOffset == 638 && logo.yOffset == 300 && logo.rotation == 0)
        #expect(pixel(logo.image, 1, 1) == 0xFFFA_8007)
        // Drawn at this size (centred across 1280): kept where it was.
        #expect(logo.placement(width: 1280, height: 800) == Rect(x: 638, y: 300, width: 3, height: 2))
        // At another size: centred across, its middle at 38.2% of the height.
        #expect(logo.placement(width: 1920, height: 1080) == Rect(x: 958, y: 412, width: 3, height: 2))
        #expect(logo.placement(width: 2, height: 2) == nil, "larger than the screen")
    }

    @Test func aLogoTheFirmwareDidNotShowIsNotUsed() throws {
        let directory = try table(status: "0\n", x: 0, y: 0, image: bmp(picture))
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(throws: AssetError("firmware logo: the firmware says it did not display it (status 0)")) {
            try FirmwareLogo.read(directory: directory)
        }
        #expect(throws: AssetError.self) { try FirmwareLogo.read(directory: directory + "/none") }
        let rotated = try table(status: "3\n", x: 0, y: 0, image: bmp(picture))
        defer { try? FileManager.default.removeItem(atPath: rotated) }
        #expect(try FirmwareLogo.read(directory: rotated).rotation == 90)
        let signed = try table(status: "+1\n", x: 0, y: 0, image: bmp(picture))
        defer { try? FileManager.default.removeItem(atPath: signed) }
        #expect(throws: AssetError("firmware logo: \(signed)/status holds \"+1\""), "sysfs writes digits only") {
            try FirmwareLogo.read(directory: signed)
        }
    }

    /// OVMF's logo as the boot test's VM shows it: 193x58 at 543,371 on 1280x800, here a
    /// picture whose every pixel differs from its neighbours.
    private static let ovmf: [[(UInt8, UInt8, UInt8)]] = (0..<58).map { y in
        (0..<193).map { x in (UInt8(truncatingIfNeeded: x * 7 + y), UInt8(truncatingIfNeeded: y * 13 + x), UInt8(truncatingIfNeeded: x ^ y)) }
    }

    /// Every pixel of `rect` on `display` against `rows` (top row first); the first that differs.
    private func firstDifference(_ display: MemoryDisplay, _ rect: Rect, _ rows: [[(UInt8, UInt8, UInt8)]]) -> String? {
        for y in 0..<rect.height {
            for x in 0..<rect.width {
                let shown = display.pixel(x: rect.x + x, y: rect.y + y), want = rows[y][x]
                if shown != want { return "at \(x),\(y) of the logo: \(shown), the firmware's \(want)" }
            }
        }
        return nil
    }

    private func firmwareTheme(fallback: String = "") -> Theme {
        var theme = Theme()
        theme.logo = "firmware"
        theme.logoFallback = fallback
        return theme
    }

    @Test(arguments: [ScreenStyle.plain, .box])
    func theSplashShowsTheFirmwaresLogoPixelForPixelWhereItWas(style: ScreenStyle) throws {
        let directory = try table(x: 543, y: 371, image: bmp(Self.ovmf))
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var theme = firmwareTheme()
        theme.style = style
        let display = try MemoryDisplay(width: 1280, height: 800)
        let scene = Scene(theme: theme, width: 1280, height: 800, assets: Assets(firmwareDirectory: directory))
        var m = model(42, message: "Starting the system", title: "Debian")
        scene.render(m, at: 0, into: display.framebuffer)
        let logo = Rect(x: 543, y: 371, width: 193, height: 58)
        #expect(scene.logoProblem == nil)
        #expect(scene.logoRect == logo)
        #expect(firstDifference(display, logo, Self.ovmf) == nil)
        for (name, rect) in [("bar", scene.barRect), ("title", scene.titleRect), ("message", scene.messageRect),
                             ("label", scene.labelRect), ("panel", scene.panelRect)] {
            #expect(!rect.intersects(logo), "\(name) \(rect) over the logo")
        }
        // A question goes between the logo and the splash; the logo stays, untouched.
        m.entry = ScreenModel.Entry(prompt: "Passphrase for disk root:", field: .hidden(count: 0))
        scene.render(m, at: 1, into: display.framebuffer)
        #expect(!scene.entryRect.isEmpty && !scene.entryRect.intersects(logo), "question at \(scene.entryRect)")
        #expect(scene.logoRect == logo)
        #expect(firstDifference(display, logo, Self.ovmf) == nil)
    }

    @Test func onAScreenOfAnotherSizeTheLogoIsCentredUnscaledAndTheLogSaysSo() throws {
        let directory = try table(x: 543, y: 371, image: bmp(Self.ovmf))
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let display = try MemoryDisplay(width: 1920, height: 1080)
        let scene = Scene(theme: firmwareTheme(), width: 1920, height: 1080, scale: 2, assets: Assets(firmwareDirectory: directory))
        scene.render(model(10), at: 0, into: display.framebuffer)
        let logo = Rect(x: 863, y: 384, width: 193, height: 58)
        #expect(scene.logoRect == logo)
        #expect(firstDifference(display, logo, Self.ovmf) == nil)
        #expect(scene.layoutNotes.contains("firmware logo centred on 1920x1080: the firmware drew it at 543,371 on a screen of another size"),
                "\(scene.layoutNotes)")
        let same = Scene(theme: firmwareTheme(), width: 1280, height: 800, assets: Assets(firmwareDirectory: directory))
        #expect(!same.layoutNotes.contains { $0.hasPrefix("firmware logo") })
    }

    @Test func aTurnedPanelsLogoIsDrawnTurnedAsTheFirmwareDrewIt() throws {
        // Status bits 1-2 = 1: turned 90 degrees clockwise; the picture's first column,
        // bottom up, becomes the first row.
        let directory = try table(status: "3\n", x: 638, y: 300, image: bmp(picture))
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let display = try MemoryDisplay(width: 1280, height: 800)
        let scene = Scene(theme: firmwareTheme(), width: 1280, height: 800, assets: Assets(firmwareDirectory: directory))
        scene.render(model(0), at: 0, into: display.framebuffer)
        #expect(scene.logoRect == Rect(x: 638, y: 300, width: 2, height: 3))
        let turned = [[picture[1][0], picture[0][0]], [picture[1][1], picture[0][1]], [picture[1][2], picture[0][2]]]
        #expect(firstDifference(display, scene.logoRect, turned) == nil)
    }

    @Test func withoutAUsableFirmwareLogoTheThemesFallbackShowsAndTheLogSaysWhy() throws {
        let fallback = FileManager.default.temporaryDirectory.appendingPathComponent("fallback-\(UUID().uuidString).png").path
        try PNG.write(PNG.Image(width: 20, height: 10, rgba: (0..<200).flatMap { _ in [0, 200, 0, 255] as [UInt8] }),
                      to: fallback)
        defer { try? FileManager.default.removeItem(atPath: fallback) }
        let notShown = try table(status: "0\n", x: 543, y: 371, image: bmp(Self.ovmf))
        let noImage = try table(x: 543, y: 371, image: [])
        let tooLarge = try table(x: 0, y: 0, image: bmp(Self.ovmf))
        defer { for d in [notShown, noImage, tooLarge] { try? FileManager.default.removeItem(atPath: d) } }
        let cases: [(directory: String, width: Int, height: Int, why: String)] = [
            (notShown, 1280, 800, "the firmware says it did not display it (status 0)"),
            (noImage, 1280, 800, "not a BMP image"),
            (tooLarge, 160, 50, "193x58 is larger than the screen's 160x50"),
            (notShown + "/none", 1280, 800, "No such file"),
        ]
        for c in cases {
            let display = try MemoryDisplay(width: c.width, height: c.height)
            let scene = Scene(theme: firmwareTheme(fallback: fallback), width: c.width, height: c.height,
                              assets: Assets(firmwareDirectory: c.directory))
            scene.render(model(0), at: 0, into: display.framebuffer)
            let problem = scene.logoProblem ?? ""
            #expect(problem.hasPrefix("firmware logo: ") && problem.contains(c.why), "\(problem)")
            #expect(problem.hasSuffix("; showing logo_fallback \(fallback) instead"), "\(problem)")
            let logo = scene.logoRect
            #expect(!logo.isEmpty, "\(c.why): no logo")
            #expect(display.pixel(x: logo.x + logo.width / 2, y: logo.y + logo.height / 2) == (0, 200, 0), "\(c.why)")
        }
        // Without a fallback: no logo, and the log says so.
        let scene = Scene(theme: firmwareTheme(), width: 1280, height: 800, assets: Assets(firmwareDirectory: notShown))
        #expect(scene.logoRect.isEmpty)
        #expect(scene.logoProblem?.hasSuffix("; no logo_fallback, so no logo") == true, "\(scene.logoProblem ?? "")")
    }

    @Test func aThemeFileSaysFirmwareAndNamesItsFallbackBesideIt() throws {
        var theme = Theme()
        let directory = try table(x: 0, y: 0, image: bmp(picture))
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(bmp(picture)).write(to: URL(fileURLWithPath: directory + "/fallback.png"))
        let problems = ThemeFile.apply("[screen]\nlogo = firmware\nlogo_fallback = fallback.png\n", to: &theme, path: directory + "/gauge.theme")
        #expect(problems.isEmpty, "\(problems)")
        #expect(theme.logo == "firmware" && theme.logoFallback == directory + "/fallback.png")
        let missing = ThemeFile.apply("logo_fallback = none.png\n", to: &theme, path: directory + "/gauge.theme")
        #expect(missing.map(\.description) == ["\(directory)/gauge.theme:1: logo_fallback: cannot open \(directory)/none.png: No such file or directory"])
    }
}
