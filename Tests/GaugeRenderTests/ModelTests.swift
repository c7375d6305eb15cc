import GaugeProtocol
import GaugeRender
import Testing

@Suite("Model, easing, theme")
struct ModelTests {
    @Test("easings start at 0, end at 1 and ease-in-out is symmetric", arguments: Easing.allCases)
    func easing(e: Easing) {
        #expect(e(0) == 0)
        #expect(e(1) == 1)
        #expect(e(-1) == 0 && e(2) == 1)
        if e == .easeInOut { #expect(abs(e(0.25) + e(0.75) - 1) < 1e-12) }
    }

    @Test("a new value eases in; retargeting mid-way starts from where the bar is")
    func transition() {
        var m = ScreenModel()
        m.setTarget(0)
        m.setTarget(100, at: 10, duration: 1, easing: .linear)
        #expect(m.shown(at: 10) == 0)
        #expect(m.shown(at: 10.5) == 50)
        #expect(!m.isSettled(at: 10.5))
        m.setTarget(20, at: 10.5, duration: 1, easing: .linear)
        #expect(m.shown(at: 10.5) == 50)
        #expect(m.shown(at: 11) == 35)
        #expect(m.shown(at: 12) == 20 && m.isSettled(at: 12))
        m.setTarget(150)
        #expect(m.target == 100)
    }

    @Test("label formats")
    func labelFormat() {
        #expect(LabelFormat.text("{percent}%", value: 42, max: 100) == "42%")
        #expect(LabelFormat.text("{percent}%", value: 99.5, max: 100) == "99%")
        #expect(LabelFormat.text("{percent}%", value: 100, max: 100) == "100%")
        #expect(LabelFormat.text("Step {value} of {max}", value: 3, max: 7) == "Step 3 of 7")
        #expect(LabelFormat.text("{odd} {percent", value: 3, max: 7) == "{odd} {percent")
    }

    @Test("colours parse and print")
    func colors() {
        #expect(Color(parsing: "#ff8000") == Color(red: 1, green: 128.0 / 255, blue: 0))
        #expect(Color(parsing: "#fff")?.description == "#ffffff")
        #expect(Color(parsing: "0.5, 0.5, 0.5, 0.2")?.alpha == 0.2)
        #expect(Color(parsing: "#12345") == nil)
        #expect(Color(parsing: "1,2,3") == nil)
        #expect(Color(red: 0.87, green: 0.55, blue: 0.09).isLight)
        #expect(!Color(red: 0.1, green: 0.1, blue: 0.4).isLight)
    }

    @Test("theme keys set values and reject bad ones with a reason")
    func theme() throws {
        var t = Theme()
        try t.set("fill_color", "#0000ff")
        try t.set("flat", "true")
        try t.set("bar_height", "30")
        #expect(t.fillColor == Color(red: 0, green: 0, blue: 1) && t.flat && t.barHeight == 30)
        #expect(throws: ThemeError.unknownKey("nope")) { try t.set("nope", "1") }
        #expect(throws: ThemeError.self) { try t.set("bar_height", "NaN") }
        do {
            try t.set("flat", "maybe")
            Issue.record("accepted flat=maybe")
        } catch {
            #expect(error.description.contains("flat"))
        }
    }
}

/// The label reads against the fill of every state as well as on the running bar: its
/// colour, blended at its opacity over the fill, keeps WCAG AA's contrast for bold text.
@Suite struct LabelContrastTests {
    @Test(arguments: [RunState.begin, .running, .success, .failure])
    func theLabelContrastsWithEveryStatesFill(state: RunState) {
        let theme = Theme()
        let fill = theme.fillColor(for: state)
        let ink = fill.textColor(alpha: theme.labelAlpha)
        let shown = fill.mix(with: ink.withAlpha(1), amount: ink.alpha)
        #expect(Color.contrast(shown, fill) >= Color.labelContrast, "\(state): \(Color.contrast(shown, fill))")
        // The old rule (luma over 0.5, white else, at the theme's opacity) for the failure
        // fill: white at 0.6 over red, 2.5:1.
        if state == .failure {
            let old = Color.white.withAlpha(theme.labelAlpha)
            #expect(Color.contrast(fill.mix(with: .white, amount: old.alpha), fill) < Color.labelContrast)
        }
    }
}
