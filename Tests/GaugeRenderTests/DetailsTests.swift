import Foundation
import GaugeRender
import Testing

@Suite("The details view")
struct DetailsTests {
    private var logoTheme: Theme {
        var theme = Theme()
        theme.logo = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../data/gauge-logo.png").standardized.path
        return theme
    }

    private func lines(_ count: Int) -> [String] {
        (1...count).map { "Started unit-\($0).service" }
    }

    @Test("the messages, top left in the message colour, in place of the logo; hidden again, the frame is as before")
    func toggles() throws {
        let screen = try Screen(width: 800, height: 480, theme: logoTheme)
        let plain = model(42, message: "Unlocking disks", title: "Gauge")
        screen.render(plain)
        let before = screen.image
        let logoLit = litPixels(before, in: Rect(x: 0, y: 0, width: 800, height: screen.scene.titleRect.y))
        #expect(logoLit > 500, "the theme's logo is on screen")

        var details = plain
        details.details = ["Reached target sysinit.target", "Started systemd-udevd.service"]
        screen.render(details)
        let shown = screen.image
        let area = screen.scene.detailsRect
        #expect(area.x > 0 && area.x < 20 && area.y < 20, "top left: \(area)")
        #expect(area.maxY <= screen.scene.titleRect.y)
        // Text in the message colour inside the view; the logo gone from outside it.
        let theme = Theme()
        let message = (UInt8((theme.messageColor.red * 255).rounded()), UInt8((theme.messageColor.green * 255).rounded()),
                       UInt8((theme.messageColor.blue * 255).rounded()))
        #expect(pixels(shown, in: area) { $0 == message } > 100)
        var outside = Rect(x: 0, y: area.maxY, width: 800, height: screen.scene.titleRect.y - area.maxY)
        #expect(litPixels(shown, in: outside) == 0, "nothing of the logo under the view")
        outside = Rect(x: 0, y: screen.scene.titleRect.y, width: 800, height: 480 - screen.scene.titleRect.y)
        #expect(difference(shown, before, tolerance: 0, within: outside).count == 0, "the bar, title and message stay")

        screen.render(plain)
        #expect(screen.scene.detailsRect.isEmpty)
        #expect(difference(screen.image, before, tolerance: 0).count == 0)
    }

    @Test("only the newest lines that fit above the title, the newest last")
    func newestFit() throws {
        func render(_ lines: [String]) throws -> (PNG.Image, Rect) {
            let screen = try Screen(width: 800, height: 480)
            var m = model(42, message: "Unlocking disks", title: "Gauge")
            m.details = lines
            screen.render(m)
            #expect(screen.scene.detailsRect.maxY <= screen.scene.titleRect.y)
            return (screen.image, screen.scene.detailsRect)
        }
        let all = lines(200)
        let (full, area) = try render(all)
        let (newest, _) = try render(Array(all.suffix(60)))
        #expect(difference(full, newest, tolerance: 0).count == 0, "older lines than fit change nothing")
        let (fewer, fewerArea) = try render(Array(all.suffix(3)))
        #expect(fewerArea.height < area.height / 3)
        #expect(difference(full, fewer, tolerance: 0).count > 0)
    }
}

private func pixels(_ image: PNG.Image, in area: Rect, where test: ((UInt8, UInt8, UInt8)) -> Bool) -> Int {
    var count = 0
    for y in area.y..<area.maxY {
        for x in area.x..<area.maxX {
            let i = (y * image.width + x) * 4
            if test((image.rgba[i], image.rgba[i + 1], image.rgba[i + 2])) { count += 1 }
        }
    }
    return count
}

private func litPixels(_ image: PNG.Image, in area: Rect) -> Int {
    pixels(image, in: area) { max($0.0, $0.1, $0.2) > 24 }
}
