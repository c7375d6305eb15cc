import GaugeDaemon
import GaugeDisplay
import GaugeProtocol
import GaugeRender
import Testing

/// The connector's panel orientation turns the picture so it is upright on the panel as
/// mounted, and the theme's rotation turns it further.
@Suite struct PanelOrientationTests {
    @Test("the kernel's names: the turn that shows the picture upright")
    func names() {
        #expect(Rotation(panelOrientation: "Normal") == Rotation.none)
        #expect(Rotation(panelOrientation: "Upside Down") == .half)
        #expect(Rotation(panelOrientation: "Left Side Up") == .threeQuarters)
        #expect(Rotation(panelOrientation: "Right Side Up") == .quarter)
        #expect(Rotation(panelOrientation: "Sideways") == nil)
        #expect(Rotation.quarter.then(.threeQuarters) == Rotation.none && Rotation.half.then(.quarter) == .threeQuarters)
    }

    /// Where the bar's fill is on the panel: its colour's pixels' bounding box.
    private func fillBox(_ panel: MemoryDisplay) -> Rect {
        var box = Rect.zero
        for y in 0..<panel.height {
            for x in 0..<panel.width {
                let p = panel.pixel(x: x, y: y)
                if p.r > 150, p.b < 80, p.g > 60, p.g < 170 { box = box.union(Rect(x: x, y: y, width: 1, height: 1)) }
            }
        }
        return box
    }

    @Test("a left-side-up panel shows the splash turned a quarter counter-clockwise, the theme's rotation on top")
    func leftSideUp() throws {
        let panel = try MemoryDisplay(width: 480, height: 800)
        panel.panelOrientation = try #require(Rotation(panelOrientation: "Left Side Up"))
        var theme = Theme()
        theme.flat = true
        theme.animate = false
        let screen = ProgressScreen(theme: theme, display: panel, scale: 1, log: { _ in })
        // Upright for the person holding it: a landscape picture on the portrait panel.
        #expect(screen.display?.width == 800 && screen.display?.height == 480)
        screen.setProgress(50, message: "Sideways", at: 0)
        screen.renderFrame(at: 10)
        // The bar, horizontal in the picture and low in it, runs along the panel near its
        // right edge (the picture's bottom is the panel's right once turned
        // counter-clockwise; the panel's left edge is the device's top).
        let fill = fillBox(panel)
        #expect(fill.height > fill.width * 4 && fill.x > 240, "fill on the panel: \(fill)")
        // The theme's quarter turn clockwise on top undoes it: the picture as drawn, the
        // bar across the panel low down.
        try screen.applyTheme([ThemeSetting(key: "rotation", value: "90")])
        #expect(screen.display?.width == 480 && screen.display?.height == 800)
        screen.renderFrame(at: 20)
        let turned = fillBox(panel)
        #expect(turned.width > turned.height * 4 && turned.y > 400, "fill after the theme's turn: \(turned)")
    }
}
