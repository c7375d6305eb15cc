import GaugeDaemon
import GaugeDisplay
import GaugeProtocol
import GaugeRender
import Testing

/// `scale = auto`: each head's scale from its density, by Plymouth's and GNOME's rule.
@Suite struct DeviceScaleTests {
    @Test("small screens: scale 2 above 1.625 x 135 dpi", arguments: [
        // 13.3" 2560x1600 laptop, 227 dpi: 1.68 x 135.
        (2560, 1600, 286, 179, 2.0),
        // 13.3" 1920x1080 laptop, 166 dpi.
        (1920, 1080, 294, 165, 1),
        // 15.6" 4K laptop, 282 dpi.
        (3840, 2160, 344, 194, 2),
        // 8" portrait tablet, 1200x1920, 283 dpi.
        (1200, 1920, 108, 172, 2),
        // 7" 800x480 panel, 133 dpi.
        (800, 480, 154, 86, 1),
        // 14" 2240x1400 laptop: 189 dpi, 1.40 x 135 (the old rule's 190 dpi would be near).
        (2240, 1400, 301, 188, 1),
    ])
    func small(width: Int, height: Int, mmWidth: Int, mmHeight: Int, expected: Double) {
        #expect(DeviceScale.auto(width: width, height: height, millimetres: (mmWidth, mmHeight)) == expected)
    }

    @Test("large screens (20 inches and more): scale 2 above 1.625 x 110 dpi", arguments: [
        // 27" 4K monitor, 163 dpi: 1.48 x 110.
        (3840, 2160, 597, 336, 1.0),
        // 24" 4K monitor, 184 dpi: 1.67 x 110.
        (3840, 2160, 527, 296, 2),
        // 23.8" 1080p monitor, 92 dpi.
        (1920, 1080, 527, 296, 1),
        // 32" 5K-wide panel, 183 dpi.
        (5120, 2880, 708, 398, 2),
    ])
    func large(width: Int, height: Int, mmWidth: Int, mmHeight: Int, expected: Double) {
        #expect(DeviceScale.auto(width: width, height: height, millimetres: (mmWidth, mmHeight)) == expected)
    }

    @Test("the threshold: just under and just over 1.625 times the target")
    func threshold() {
        // A 10" diagonal (254 mm, 3:4 sides 152.4 x 203.2 mm) at 1.6 and 1.65 x 135 dpi.
        for (factor, expected) in [(1.6, 1.0), (1.65, 2.0)] {
            let diagonal = 10 * 135 * factor
            let w = Int((diagonal * 0.6).rounded()), h = Int((diagonal * 0.8).rounded())
            #expect(DeviceScale.auto(width: w, height: h, millimetres: (152, 203)) == expected, "\(factor)")
        }
    }

    @Test("unknown and implausible sizes: scale 1")
    func unknown() {
        #expect(DeviceScale.auto(width: 3840, height: 2160, millimetres: nil) == 1)
        #expect(DeviceScale.auto(width: 3840, height: 2160, millimetres: (0, 0)) == 1)
        // EDIDs that carry the aspect ratio in place of the size.
        for mm in [(160, 90), (160, 100), (16, 9), (16, 10)] {
            #expect(DeviceScale.auto(width: 3840, height: 2160, millimetres: mm) == 1, "\(mm)")
        }
    }

    @Test("the screen takes its head's scale unless the theme or --scale says otherwise")
    func chosen() throws {
        let laptop = try MemoryDisplay(width: 2560, height: 1600, physicalSize: (286, 179))
        let screen = ProgressScreen(theme: Theme(), display: laptop, log: { _ in })
        #expect(screen.scale == 2)
        try screen.applyTheme([ThemeSetting(key: "scale", value: "1")])
        #expect(screen.scale == 1)
        try screen.applyTheme([ThemeSetting(key: "scale", value: "auto")])
        #expect(screen.scale == 2)
        let monitor = try MemoryDisplay(width: 1920, height: 1080, physicalSize: (527, 296))
        screen.replaceDisplay(monitor)
        #expect(screen.scale == 1)
        let forced = ProgressScreen(theme: Theme(), display: monitor, scale: 2, log: { _ in })
        try forced.applyTheme([ThemeSetting(key: "scale", value: "1")])
        #expect(forced.scale == 2)
        #expect(throws: ThemeError.self) { var t = Theme(); try t.set("scale", "3") }
    }
}
