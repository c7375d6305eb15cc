import GaugeDaemon
import GaugeDisplay
import GaugeProtocol
import GaugeRender
import Glibc
import Testing

/// What the daemon logs about a screen's layout: what happened, once, for the screen shown.
@Suite struct LayoutLogTests {
    /// A 160x100 opaque logo.
    static func logo(_ name: String) throws -> String {
        let path = "/tmp/gauge-layout-log-\(name)-\(getpid()).png"
        try PNG.write(PNG.Image(width: 160, height: 100, rgba: [UInt8](repeating: 200, count: 160 * 100 * 4)), to: path)
        return path
    }

    @Test("480x272 box with a logo: one line for the scale, the logo's shrinking; a question's cost only once one shows")
    func boxOnASmallPanel() throws {
        var theme = Theme()
        theme.style = .box
        theme.logo = try Self.logo("box")
        defer { unlink(theme.logo) }
        var logged: [String] = []
        let screen = ProgressScreen(theme: theme, display: try MemoryDisplay(width: 480, height: 272), log: { logged.append($0) })
        #expect(logged == ["drawn at scale 0.85 instead of 1, gaps narrowed, to fit 480x272", "logo shrunk from 160x100 to 128x80 to fit 480x272"])
        #expect(screen.drawnScale == 0.85 && screen.scale == 1)
        logged = []
        screen.setTitle("Installing system updates")
        screen.setProgress(42, message: "Unpacking", at: 0)
        screen.renderFrame(at: 1)
        #expect(logged.isEmpty, "\(logged)")
        let question = ScreenModel.Entry(prompt: "Passphrase:", field: .hidden(count: 0), capsLock: false)
        screen.setEntry(question)
        screen.setEntry(nil)
        screen.setEntry(question)
        #expect(logged == ["logo hidden while a question shows: no room for both on 480x272"])
        // A new theme laid out the same way says nothing again; one with wider gaps, drawn
        // smaller, says only that (the logo's line is the same).
        logged = []
        theme.fillColor = Color(parsing: "#2f7fdf")!
        screen.replaceTheme(theme)
        #expect(logged.isEmpty, "\(logged)")
        theme.textGap = 40
        screen.replaceTheme(theme)
        #expect(logged == ["drawn at scale 0.72 instead of 1, gaps narrowed, to fit 480x272"])
    }

    @Test("a screen with room for everything logs nothing about its layout, question or not")
    func roomForEverything() throws {
        var theme = Theme()
        theme.logo = try Self.logo("plain")
        defer { unlink(theme.logo) }
        var logged: [String] = []
        let screen = ProgressScreen(theme: theme, display: try MemoryDisplay(width: 1280, height: 800), log: { logged.append($0) })
        screen.setEntry(ScreenModel.Entry(prompt: "Passphrase:", field: .hidden(count: 0), capsLock: false))
        #expect(logged.isEmpty, "\(logged)")
        #expect(screen.drawnScale == screen.scale)
    }
}
