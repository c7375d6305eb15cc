import Foundation
import GaugeDisplay
import GaugeProtocol
import GaugeRender
import Testing

/// The failure screen's box (`failure`): where it goes, what it shows, and that it
/// collides with nothing at the sizes a splash meets.
@Suite("The failure screen")
struct FailureScreenTests {
    private static var logoTheme: Theme {
        var theme = Theme()
        theme.logo = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../data/gauge-logo.png").standardized.path
        return theme
    }

    static func report(lines: Int, longLine: Bool = false) -> FailureReport {
        var report = FailureReport(title: "Update failed")
        report.summary = "dpkg could not configure linux-image-6.1.0-28-amd64"
        for n in 1...max(1, lines) where lines > 0 { report.append("E: step \(n) of the install went wrong") }
        if longLine { report.append(String(repeating: "0123456789", count: 50)) }
        return report
    }

    static func failedModel(_ report: FailureReport) -> ScreenModel {
        var m = model(63, message: "Installing updates", title: "Gauge OS")
        m.state = .failure
        m.failure = report
        return m
    }

    /// The title, the summary and the texts apart, inside the box; the box apart from the
    /// splash's own elements and inside the safe area; the logo gone.
    private func checkApart(_ scene: Scene, _ what: String) {
        let box = scene.failureRect
        #expect(!box.isEmpty, "\(what): the box is shown")
        #expect(box.intersection(scene.safeRect) == box, "\(what): box \(box) leaves the safe area \(scene.safeRect)")
        let texts = scene.failureTextRects
        #expect(texts.count >= 2, "\(what): the title and the summary at least, \(texts)")
        for (i, a) in texts.enumerated() {
            #expect(a.intersection(box) == a, "\(what): text \(a) outside the box \(box)")
            for b in texts[(i + 1)...] { #expect(!a.intersects(b), "\(what): text \(a) overlaps \(b)") }
        }
        for (name, rect) in [("bar", scene.barRect), ("title", scene.titleRect), ("message", scene.messageRect),
                             ("mark", scene.markRect), ("label", scene.labelRect), ("badge", scene.badgeRect),
                             ("logo", scene.logoRect), ("question", scene.entryRect)] {
            #expect(!rect.intersects(box), "\(what): the box \(box) overlaps the \(name) \(rect)")
        }
        #expect(scene.logoRect.isEmpty, "\(what): the logo gives the box its room")
        let code = scene.failureCodeRect
        guard !code.isEmpty else { return }
        #expect(code.intersection(scene.safeRect) == code, "\(what): QR code \(code) leaves the safe area \(scene.safeRect)")
        for (name, rect) in [("box", box), ("bar", scene.barRect), ("title", scene.titleRect), ("message", scene.messageRect),
                             ("mark", scene.markRect), ("label", scene.labelRect), ("badge", scene.badgeRect),
                             ("logo", scene.logoRect), ("question", scene.entryRect)] {
            #expect(!rect.intersects(code), "\(what): the QR code \(code) overlaps the \(name) \(rect)")
        }
    }

    @Test("the box collides with nothing, at small panels and at 4K, in both styles", arguments: [
        (240, 320, 1.0), (480, 272, 1.0), (1280, 800, 1.0), (3840, 2160, 1.0), (3840, 2160, 2.0),
    ], [ScreenStyle.plain, .box])
    func apart(size: (Int, Int, Double), style: ScreenStyle) throws {
        var theme = Self.logoTheme
        theme.style = style
        let display = try MemoryDisplay(width: size.0, height: size.1)
        let scene = Scene(theme: theme, width: size.0, height: size.1, scale: size.2)
        for (lines, long) in [(0, false), (3, false), (300, true)] {
            scene.render(Self.failedModel(Self.report(lines: lines, longLine: long)), at: 10, into: display.framebuffer)
            checkApart(scene, "\(size.0)x\(size.1)@\(size.2) \(style.rawValue) \(lines) lines")
        }
    }

    /// 300 lines and a line of 500 characters: the newest that fit, one line saying how
    /// many older ones are left out, each cut at the box's width, no crash.
    @Test("300 lines and a 500-character line: the newest that fit, the rest counted")
    func manyLines() throws {
        let screen = try Screen(width: 1280, height: 800, theme: Self.logoTheme)
        let report = Self.report(lines: 300, longLine: true)
        #expect(report.lines.count == Limits.maxFailureLines && report.dropped == 101)
        screen.render(Self.failedModel(report))
        let texts = screen.scene.failureTextRects
        // Title, summary, the note, and some lines: fewer than were sent.
        #expect(texts.count > 4 && texts.count < 3 + Limits.maxFailureLines, "\(texts.count) texts")
        let box = screen.scene.failureRect
        #expect(texts.allSatisfy { $0.maxX <= box.maxX }, "the 500-character line is cut inside the box")
        #expect(texts.last!.width > box.width / 2, "the newest line, the long one, is last and fills the width")
        checkApart(screen.scene, "1280x800, 300 lines")

        // Without the dropped lines and with few lines: no note, every line shown.
        let few = Self.report(lines: 3)
        screen.render(Self.failedModel(few))
        #expect(screen.scene.failureTextRects.count == 2 + 3)
    }

    /// The box: the failure colour in a band along its top and in the title, the box
    /// colour behind the text; taken down, the frame is as before.
    @Test("the accent, the box's colour, and the frame as before once cleared")
    func pixels() throws {
        let theme = Self.logoTheme
        let screen = try Screen(width: 800, height: 480, theme: theme)
        var plain = Self.failedModel(Self.report(lines: 3))
        plain.failure = nil
        screen.render(plain)
        let before = screen.image
        screen.render(Self.failedModel(Self.report(lines: 3)), at: 1)
        let image = screen.image
        let box = screen.scene.failureRect
        let accent = rgb(theme.failureColor)
        let boxColor = rgb(theme.boxColor.over(theme.background))
        // The middle of the top band is the failure colour, exactly.
        #expect(near(at(image, box.x + box.width / 2, box.y + 1), accent))
        // The title's glyphs are drawn in it too.
        let title = screen.scene.failureTextRects[0]
        #expect(count(image, in: title) { near($0, accent) } > 20)
        // The box's colour between the lines of text.
        #expect(count(image, in: box) { near($0, boxColor) } > box.width * box.height / 3)
        // Outside the box, the bar and the splash's texts are unchanged.
        let below = Rect(x: 0, y: box.maxY, width: 800, height: 480 - box.maxY)
        #expect(difference(image, before, tolerance: 0, within: below).count == 0)
        #expect(!screen.scene.isAnimating(Self.failedModel(Self.report(lines: 3)), at: 100), "a still failure screen makes no wakeups")

        screen.render(plain, at: 2)
        #expect(screen.scene.failureRect.isEmpty)
        #expect(difference(screen.image, before, tolerance: 0).count == 0, "cleared, the frame is as before")
    }

    /// The QR code beside the box, read back from the frame by a real decoder (zbarimg):
    /// the title, the summary, the boot's ID, how many lines it leaves out, and the newest
    /// lines, byte for byte, as many as version 20 holds.
    @Test("the QR code carries the title, the summary, the boot ID and the newest lines, as zbarimg reads them", arguments: [
        (1280, 800, 1.0), (1920, 1080, 1.0), (3840, 2160, 2.0),
    ])
    func codeReadBack(size: (Int, Int, Double)) throws {
        let display = try MemoryDisplay(width: size.0, height: size.1)
        let scene = Scene(theme: Self.logoTheme, width: size.0, height: size.1, scale: size.2)
        var report = FailureReport(title: "This system could not start")
        report.summary = "Local File Systems \u{2190} /data \u{2190} /dev/disk/by-uuid/158f35fd-150d-40cd-a785-e33d5518e11a"
        report.bootID = "3f2a9c1e"
        for n in 1...60 { report.append("[\(n).5] systemd[1]: unit-\(n).service: Main process exited, code=exited, status=1/FAILURE") }
        scene.render(Self.failedModel(report), at: 10, into: display.framebuffer)
        checkApart(scene, "\(size.0)x\(size.1)@\(size.2) with its QR code")
        let code = try #require(scene.failureCode, "a QR code at \(size.0)x\(size.1): \(scene.failureCodeProblem ?? "room")")
        #expect(!scene.failureCodeRect.isEmpty)
        let text = String(decoding: code.payload, as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(Array(lines.prefix(3)) == [report.title, report.summary, "Boot 3f2a9c1e"])
        let carried = Array(lines.dropFirst(4))
        #expect(carried.count >= 5 && carried.count < 60, "\(carried.count) lines carried")
        #expect(lines[3] == "... \(60 - carried.count) earlier lines not in this code", "it says how many it leaves out")
        #expect(carried == Array(report.lines.suffix(carried.count)), "the newest lines, in order")
        // One line more would not fit in the version the room allows.
        #expect(code.width <= 17 + 4 * QRCode.maxVersion)

        let path = FileManager.default.temporaryDirectory.appendingPathComponent("gauge-qr-\(size.0)-\(getpid()).png").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try PNG.write(PNG.image(of: display.framebuffer), to: path)
        let zbar = Process()
        zbar.executableURL = URL(fileURLWithPath: "/usr/bin/zbarimg")
        // QR codes only: its other decoders take stripes of the screen for bar codes.
        zbar.arguments = ["--raw", "-q", "-Sdisable", "-Sqrcode.enable", path]
        let out = Pipe()
        zbar.standardOutput = out
        try zbar.run()
        let decoded = out.fileHandleForReading.readDataToEndOfFile()
        zbar.waitUntilExit()
        #expect(zbar.terminationStatus == 0, "zbarimg found a code")
        // Its --raw output: the text, then a line feed.
        #expect(String(decoding: decoded, as: UTF8.self) == text + "\n")
    }

    /// The code's note counts every line not in it, those the daemon dropped too, and is
    /// there only when a line is left out.
    @Test("the QR code says how many lines it leaves out, and only then")
    func codeNote() throws {
        func lines(of report: FailureReport) throws -> [String] {
            guard case .code(let code) = QRCode.failureReport(report, maxVersion: QRCode.maxVersion) else {
                throw CodeMissing()
            }
            return String(decoding: code.payload, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        }
        var few = FailureReport(title: "Update failed")
        few.summary = "hello: subprocess installed post-installation script returned error exit status 1"
        for n in 1...3 { few.append("line \(n)") }
        #expect(try lines(of: few) == [few.title, few.summary, "line 1", "line 2", "line 3"])
        few.bootID = "00112233"
        #expect(try lines(of: few) == [few.title, few.summary, "Boot 00112233", "line 1", "line 2", "line 3"])

        var many = FailureReport(title: "Update failed")
        for n in 1...(Limits.maxFailureLines + 5) { many.append("line \(n)") }
        #expect(many.dropped == 5)
        let all = try lines(of: many)
        let carried = Array(all.dropFirst(2))
        #expect(all[0] == many.title && !carried.isEmpty && carried.count < Limits.maxFailureLines)
        #expect(carried == Array(many.lines.suffix(carried.count)))
        #expect(all[1] == "... \(Limits.maxFailureLines + 5 - carried.count) earlier lines not in this code")
    }
    private struct CodeMissing: Error {}

    /// Where the room beside the box cannot hold a code a phone reads (three pixels a
    /// module, version 5), none: the words alone.
    @Test("no QR code where there is no room for one", arguments: [(240, 320), (480, 272), (800, 480)])
    func noRoomNoCode(size: (Int, Int)) throws {
        let screen = try Screen(width: size.0, height: size.1, theme: Self.logoTheme)
        screen.render(Self.failedModel(Self.report(lines: 3)))
        #expect(screen.scene.failureCodeRect.isEmpty && screen.scene.failureCode == nil)
        #expect(!screen.scene.failureRect.isEmpty)
    }

    /// A failure screen without detail lines yet (a failed boot's first request) has no
    /// code: the box says all it would; the first line brings it.
    @Test("no QR code before the first detail line")
    func noLinesNoCode() throws {
        let screen = try Screen(width: 1280, height: 800, theme: Self.logoTheme)
        var report = FailureReport(title: "This system could not start")
        report.summary = "The boot stopped in emergency mode"
        screen.render(Self.failedModel(report))
        #expect(screen.scene.failureCode == nil && screen.scene.failureCodeRect.isEmpty && !screen.scene.failureRect.isEmpty)
        report.append("[15.5] systemd[1]: Dependency failed for local-fs.target - Local File Systems.")
        screen.render(Self.failedModel(report), at: 1)
        #expect(screen.scene.failureCode != nil && !screen.scene.failureCodeRect.isEmpty)
    }

    /// A failure screen takes the details view's place while it shows.
    @Test("the details view gives way to the failure screen")
    func detailsGiveWay() throws {
        let screen = try Screen(width: 800, height: 480)
        var m = Self.failedModel(Self.report(lines: 1))
        m.details = ["Started a.service", "Started b.service"]
        screen.render(m)
        #expect(screen.scene.detailsRect.isEmpty)
        #expect(!screen.scene.failureRect.isEmpty)
        m.failure = nil
        screen.render(m, at: 1)
        #expect(!screen.scene.detailsRect.isEmpty)
    }
}

private func rgb(_ c: Color) -> (UInt8, UInt8, UInt8) {
    func byte(_ v: Double) -> UInt8 { UInt8((min(max(v, 0), 1) * 255).rounded()) }
    return (byte(c.red), byte(c.green), byte(c.blue))
}

/// Within 2 in each channel: pixman rounds a solid colour its own way.
func near(_ a: (UInt8, UInt8, UInt8), _ b: (UInt8, UInt8, UInt8)) -> Bool {
    abs(Int(a.0) - Int(b.0)) <= 2 && abs(Int(a.1) - Int(b.1)) <= 2 && abs(Int(a.2) - Int(b.2)) <= 2
}

private func at(_ image: PNG.Image, _ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8) {
    let i = (y * image.width + x) * 4
    return (image.rgba[i], image.rgba[i + 1], image.rgba[i + 2])
}

private func count(_ image: PNG.Image, in area: Rect, where test: ((UInt8, UInt8, UInt8)) -> Bool) -> Int {
    var n = 0
    for y in area.y..<area.maxY {
        for x in area.x..<area.maxX where test(at(image, x, y)) { n += 1 }
    }
    return n
}
