import GaugeRender
import Testing
import GaugeTestSupport

@Suite struct GaugedShapingTests {
    /// A right-to-left title and a mixed message sent to the real daemon are drawn as the
    /// renderer draws them in process: shaped and in their order (check-embedded runs this
    /// against the release build, whose HarfBuzz and FriBidi are loaded the same way).
    @Test func rightToLeftTextIsShapedByTheDaemonAsInProcess() throws {
        let daemon = try GaugedProcess(["--fps", "60"])
        #expect(try daemon.request("theme animate=false transition_duration=0") == "ok")
        let title = "جارٍ تثبيت النظام"
        let message = "מתקין linux-image 6.12 (3 מתוך 12)"
        #expect(try daemon.request("title \(title)") == "ok")
        #expect(try daemon.request("progress 42 \(message)") == "ok")
        _ = try daemon.waitForStatus { $0.target == 42 && $0.message == message }
        let path = daemon.directory.appending("shaped.png")
        #expect(try daemon.request("snapshot \(path)") == "ok")
        var theme = Theme()
        theme.animate = false
        theme.transitionDuration = 0
        let expected = try renderedFrame(settledModel(42, message: message, title: title), theme: theme, width: 320, height: 240)
        #expect(differingPixels(try PNG.read(path), expected) == 0, "the daemon's frame differs from the in-process one")
        #expect(!daemon.log.contains("drawn a glyph per character"), "\(daemon.log)")
    }
}
