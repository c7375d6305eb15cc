import GaugeRender
import Testing

/// Every numeric theme key and colour component reads numbers the way the wire does:
/// plain decimals only (no hex floats, exponents, `inf` or `nan`).
@Suite("Theme numbers")
struct ThemeNumberTests {
    static let numericKeys = [
        "corner_radius", "stripe_width", "stripe_duration", "bar_width", "bar_height", "bar_center", "label_size",
        "title_size", "message_size", "text_gap", "logo_center", "box_radius", "indicator_size", "indicator_period",
        "transition_duration", "stall_time", "failure_timeout",
    ]

    @Test("hex floats, exponents and non-numbers are refused by every numeric key", arguments: numericKeys)
    func refused(key: String) {
        for text in ["0x1p-1", "0x10", "1e1", "5e-1", "inf", "nan", "0.5.5", " ", "+"] {
            var theme = Theme()
            #expect(throws: ThemeError.self, "\(key)=\(text)") { try theme.set(key, text) }
        }
    }

    @Test("plain decimals are taken")
    func taken() throws {
        var theme = Theme()
        try theme.set("bar_width", "0.5")
        try theme.set("bar_height", "+16.5")
        try theme.set("indicator_period", ".5")
        try theme.set("stall_time", "7.5")
        #expect(theme.barWidth == 0.5 && theme.barHeight == 16.5 && theme.indicatorPeriod == 0.5 && theme.stallTime == 7.5)
        #expect(throws: ThemeError.self) { try theme.set("stall_time", "-1") }
        #expect(throws: ThemeError.self) { try theme.set("stall_time", "86401") }
        try theme.set("failure_timeout", "300")
        try theme.set("failure_timeout_action", "console")
        #expect(theme.failureTimeout == 300 && theme.failureTimeoutAction == .console)
        #expect(Theme().failureTimeout == 0 && Theme().failureTimeoutAction == .restart, "waits for a key unless told")
        #expect(throws: ThemeError.self) { try theme.set("failure_timeout", "-1") }
        #expect(throws: ThemeError.self) { try theme.set("failure_timeout_action", "poweroff") }
    }

    @Test("colour components too")
    func colours() {
        #expect(Color(parsing: "0.5,0,1") != nil)
        #expect(Color(parsing: "0x1p-1,0,1") == nil)
        #expect(Color(parsing: "5e-1,0,1") == nil)
        #expect(Color(parsing: "nan,0,1") == nil)
    }

    /// Found by fuzzing: a bad value was quoted whole in the error, which a `theme`
    /// request sends back as its reply.
    @Test("a long bad value or key is quoted cut short")
    func longValuesAreAbbreviated() {
        var theme = Theme()
        let long = String(repeating: "s", count: 3000)
        for (key, value) in [("circle_colors", long), ("fill_color", long), ("bar_width", long), (long, "1")] {
            do {
                try theme.set(key, value)
                Issue.record("\(key.prefix(20)) took a bad value")
            } catch {
                #expect(error.description.utf8.count < 200, "\(error.description.utf8.count) bytes")
                #expect(error.description.contains(String(repeating: "s", count: 40) + "…"))
            }
        }
    }

    @Test("values are trimmed of spaces and tabs at both ends only, by whole characters")
    func trimming() throws {
        var theme = Theme()
        try theme.set("label_format", " \t Step {value} \t ")
        #expect(theme.labelFormat == "Step {value}")
        // A space carrying a combining mark is a character of its own, not a blank.
        try theme.set("label_format", " \u{301}x ")
        #expect(theme.labelFormat == " \u{301}x")
        try theme.set("label_format", String(repeating: " ", count: 5000))
        #expect(theme.labelFormat == "")
    }
}
