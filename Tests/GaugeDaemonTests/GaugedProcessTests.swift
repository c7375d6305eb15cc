import Foundation
import GaugeProtocol
import GaugeRender
import Glibc
import Testing
import GaugeTestSupport

// Every request of the protocol (docs/protocol.md) against the real gauged on a temporary socket with the
// memory display: its reply, and the `status` that follows.

@Suite struct GaugedProcessTests {
    @Test func binariesAreBuilt() {
        #expect(BuiltBinary.gauged != nil, "gauged not found; run `swift build --build-tests`")
        #expect(BuiltBinary.gaugectl != nil, "gaugectl not found; run `swift build --build-tests`")
    }

    /// `--version` on either name prints GaugeVersion, the one version the Debian package
    /// (tools/package) is built under, and nothing else; a value given to it is a usage error.
    @Test func bothNamesPrintTheOneVersion() throws {
        let gauged = try BuiltBinary.require(BuiltBinary.gauged, "gauged")
        let gaugectl = try BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl")
        let daemon = try runProgram(gauged, ["--version"])
        #expect(daemon.status == 0 && daemon.stderr.isEmpty, "\(daemon.stderr)")
        #expect(daemon.stdout == "gauged \(GaugeVersion.current)\n")
        let client = try runProgram(gaugectl, ["--version"])
        #expect(client.status == 0 && client.stdout == "gaugectl \(GaugeVersion.current)\n")
        let bad = try runProgram(gauged, ["--version=2"])
        #expect(bad.status == 2 && bad.stdout.isEmpty)
        #expect(bad.stderr.contains("--version takes no value"), "\(bad.stderr)")
    }

    /// A second daemon on the same socket says why it stops, naming the path once.
    @Test func aSecondDaemonSaysWhyOnceAndExitsOne() throws {
        let first = try GaugedProcess()
        let gauged = try BuiltBinary.require(BuiltBinary.gauged, "gauged")
        let second = try runProgram(gauged, ["--display", "none", "--socket", first.socketPath])
        #expect(second.status == 1)
        let line = "gauged: cannot listen: another daemon is already listening on \(first.socketPath)\n"
        #expect(second.stderr.hasSuffix(line), "\(second.stderr)")
        #expect(second.stderr.components(separatedBy: first.socketPath).count == 2, "\(second.stderr)")
    }

    @Test func everyRequestRepliesAndStatusFollows() throws {
        let daemon = try GaugedProcess(["--fps", "30"], display: "memory:400x300")
        let c = try daemon.connect()

        var status = try c.status()
        #expect(status.target == 0 && status.shown == 0)
        #expect(status.message == "" && status.title == "")
        #expect(status.mode == .determinate && status.state == .begin, "nothing reported yet")
        #expect(status.visible)
        #expect(status.display == Status.Display(name: "memory 400x300 XRGB8888", width: 400, height: 300, format: "XRGB8888"))
        #expect(status.fps == 30)
        #expect(!status.animating, "an empty bar has no stripes to move")
        #expect(status.clients == 1)

        #expect(try c.request("theme transition_duration=0") == "ok")
        #expect(try c.request("progress 42.5 Copying files") == "ok")
        status = try c.status()
        #expect(status.target == 42.5 && status.shown == 42.5)
        #expect(status.message == "Copying files")
        #expect(status.state == .running, "the first progress ends the begin state")
        #expect(status.animating, "stripes move while the bar is shown")

        #expect(try c.request("progress 50") == "ok")
        status = try c.status()
        #expect(status.target == 50 && status.message == "Copying files", "a progress without text keeps the message")

        #expect(try c.request("message hello  world ") == "ok")
        #expect(try c.status().message == "hello  world ")
        #expect(try c.request("message") == "ok")
        #expect(try c.status().message == "", "an empty message clears it")
        #expect(try c.request("title Installing Gauge") == "ok")
        #expect(try c.status().title == "Installing Gauge")

        #expect(try c.request("mode indeterminate") == "ok")
        #expect(try c.status().mode == .indeterminate)
        #expect(try c.request("mode determinate") == "ok")
        #expect(try c.status().mode == .determinate)
        #expect(try c.request("mode sideways").hasPrefix("err syntax "))

        #expect(try c.request("state failure Disk full") == "ok")
        status = try c.status()
        #expect(status.state == .failure && status.message == "Disk full" && status.target == 50)
        #expect(try c.request("state running") == "ok")
        status = try c.status()
        #expect(status.state == .running && status.message == "Disk full", "a state without text keeps the message")
        #expect(try c.request("mode indeterminate") == "ok")
        #expect(try c.request("state success Done") == "ok")
        status = try c.status()
        #expect(status.state == .success && status.message == "Done")
        #expect(status.target == 100 && status.mode == .determinate, "success fills the bar")
        #expect(try c.request("state paused").hasPrefix("err syntax "))

        #expect(try c.request("theme animate=false fill_color=#3366cc") == "ok")
        #expect(try c.status().animating == false, "settled and not animated: nothing moves")
        #expect(try c.request("theme no_such_key=1").hasPrefix("err unknown "))
        #expect(try c.request("theme animate=maybe").hasPrefix("err range "))
        #expect(try c.request("theme stripe_width=1").hasPrefix("err range "))
        #expect(try c.request("theme animate=true no_such_key=1").hasPrefix("err unknown "))
        #expect(try c.status().animating == false, "a theme request with a bad key changes nothing")
        #expect(try c.request("theme animate").hasPrefix("err syntax "))

        #expect(try c.request("hide") == "ok")
        status = try c.status()
        #expect(!status.visible && !status.animating)
        #expect(try c.request("show") == "ok")
        #expect(try c.status().visible)
        // Each build names the screen's owner in the log (the embedded one once printed a placeholder).
        #expect(daemon.log.contains("screen: gauge → console\n") && daemon.log.contains("screen: console → gauge\n"),
                "the log: \(daemon.log)")

        // No theme file: reload goes back to the defaults, so the stripes move again
        // (while running: once the work has succeeded they stand still).
        #expect(try c.request("reload") == "ok")
        #expect(try c.status().animating == false)
        #expect(try c.request("state running") == "ok")
        #expect(try c.status().animating)

        #expect(try c.request("ping") == "ok")
        #expect(try c.request("wait") == "ok")
        #expect(try c.request("snapshot frame.png").hasPrefix("err syntax "))
        #expect(try c.request("snapshot \(daemon.directory.path)/missing/frame.png").hasPrefix("err io "))
        #expect(try c.request("quit now").hasPrefix("err syntax "))

        #expect(try c.request("quit") == "ok")
        let exit = daemon.waitForExit(seconds: 30)
        #expect(exit.flatMap(exitCode) == 0, "quit exits 0")
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath), "the socket file is removed on exit")
    }

    @Test func quitRetainExitsZeroLeavingTheFrame() throws {
        let daemon = try GaugedProcess()
        #expect(try daemon.request("quit retain") == "ok")
        let exit = daemon.waitForExit(seconds: 30)
        #expect(exit.flatMap(exitCode) == 0)
        #expect(daemon.log.contains("leaving the last frame on screen"), "\(daemon.log)")
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
    }

    @Test func statusReportsTheDisplayFormatAndNone() throws {
        let rgb565 = try GaugedProcess(display: "memory:320x200:RGB565")
        let status = try rgb565.status()
        #expect(status.display == Status.Display(name: "memory 320x200 RGB565", width: 320, height: 200, format: "RGB565"))
        #expect(status.fps == 60, "the default frame rate")

        let headless = try GaugedProcess(display: "none")
        #expect(try headless.status().display == .none)
        let c = try headless.connect()
        let start = monotonicNow()
        #expect(try c.request("progress 10") == "ok", "without a display the daemon still serves")
        #expect(try c.request("wait") == "ok")
        #expect(monotonicNow() - start >= 0.4, "wait follows the transition without a display too")
        #expect(try c.request("hide") == "ok")
        #expect(try c.request("progress 20") == "ok")
        #expect(try c.request("wait") == "ok")
        #expect(try c.status().shown == 20, "and while hidden")
    }

    @Test func waitReturnsOnlyAfterTheTransition() throws {
        let daemon = try GaugedProcess()
        let c = try daemon.connect()
        // Already settled: at once.
        var start = monotonicNow()
        #expect(try c.request("wait") == "ok")
        #expect(monotonicNow() - start < 0.2)

        start = monotonicNow()
        #expect(try c.request("progress 100") == "ok")
        // Mid-transition, another client sees the bar lag behind the target and is
        // served while the first one waits.
        let other = try daemon.connect()
        let during = try other.status()
        #expect(during.target == 100 && during.shown < 100 && during.animating)

        try c.send("wait\nping\n")
        let waited = try #require(try c.readLine())
        let elapsed = monotonicNow() - start
        #expect(waited == "ok")
        #expect(try other.request("ping") == "ok")
        #expect(try c.readLine() == "ok", "the ping queued behind wait is answered after it")
        #expect(elapsed >= 0.4, "wait returned \(elapsed) s after a 0.4 s transition began")
        #expect(elapsed < 0.4 + 0.5, "wait took \(elapsed) s for a 0.4 s transition")
        let after = try c.status()
        #expect(after.shown == 100 && after.target == 100)

        // Retargeting while waiting: wait covers the new transition too.
        try c.send("progress 20\n")
        #expect(try c.readLine() == "ok")
        start = monotonicNow()
        try c.send("wait\n")
        usleep(100_000)
        #expect(try other.request("progress 60") == "ok")
        #expect(try c.readLine() == "ok")
        #expect(monotonicNow() - start >= 0.1 + 0.4 - 0.01, "wait must cover a transition started while waiting")
        #expect(try c.status().shown == 60)
    }

    @Test func framesCountWhatReachesTheDisplayAndStopWhenStill() throws {
        let daemon = try GaugedProcess()
        let c = try daemon.connect()
        #expect(try c.status().frames >= 1, "the first frame is presented at start")
        #expect(try c.request("theme animate=false transition_duration=0") == "ok")
        #expect(try c.request("progress 50") == "ok")
        #expect(try c.request("wait") == "ok")
        let settled = try c.status().frames
        usleep(150_000)
        #expect(try c.status().frames == settled, "nothing changes, nothing is presented")
        #expect(try c.request("progress 60") == "ok")
        try daemon.waitForStatus { $0.frames > settled }
        usleep(150_000)
        #expect(try c.status().frames == settled + 1, "one change without a transition is one frame")

        // Stripes at 60 fps for 0.5 s: about 30 frames (fewer on a loaded machine).
        #expect(try c.request("theme animate=true") == "ok")
        let moving = try c.status().frames
        usleep(500_000)
        let moved = try c.status().frames - moving
        #expect(moved > 5 && moved <= 33, "\(moved) frames in 0.5 s at 60 fps")
    }

    @Test func waitRepliesOnceTheSettledFrameIsPresented() throws {
        let daemon = try GaugedProcess()
        let c = try daemon.connect()
        #expect(try c.request("theme animate=false transition_duration=0") == "ok")
        #expect(try c.request("wait") == "ok")
        for value in [10, 20, 30] {
            let before = try c.status().frames
            // No transition: the model is settled at once, but the frame holding the
            // value is drawn on the next tick; wait must not reply before it.
            try c.send("progress \(value)\nwait\n")
            #expect(try c.readLine() == "ok")
            #expect(try c.readLine() == "ok")
            #expect(try c.status().frames > before, "wait replied before the frame with \(value)% was presented")
        }
    }

    @Test func aStillScreenSleeps() throws {
        let daemon = try GaugedProcess()
        let c = try daemon.connect()
        #expect(try c.request("theme animate=false transition_duration=0.1") == "ok")
        #expect(try c.request("progress 40") == "ok")
        #expect(try c.request("wait") == "ok")
        #expect(try c.status().animating == false)
        usleep(50_000)
        let before = try #require(daemon.procStatus("voluntary_ctxt_switches"))
        usleep(600_000)
        let after = try #require(daemon.procStatus("voluntary_ctxt_switches"))
        #expect(after == before, "\(after - before) wakeups in 0.6 s with nothing moving")
    }

    @Test("an indicator wakes the daemon once per frame it presents, not at --fps", arguments: ["circles", "ring"])
    func anIndicatorWakesOncePerFrame(style: String) throws {
        let daemon = try GaugedProcess()
        let c = try daemon.connect()
        #expect(try c.request("theme indeterminate_style=\(style) transition_duration=0") == "ok")
        #expect(try c.request("mode indeterminate") == "ok")
        usleep(100_000)
        let frames = try c.status().frames
        let before = try #require(daemon.procStatus("voluntary_ctxt_switches"))
        usleep(600_000)
        let after = try #require(daemon.procStatus("voluntary_ctxt_switches"))
        let presented = try c.status().frames - frames
        // 50 frames a second; ticks at 60 fps would add a sixth more wakeups than frames.
        #expect(presented >= 10, "\(presented) frames in 0.6 s")
        #expect(after - before <= presented + 2, "\(after - before) wakeups for \(presented) frames")
    }

    @Test func waitOfAClientThatLeavesIsDropped() throws {
        let daemon = try GaugedProcess()
        do {
            let c = try daemon.connect()
            try c.send("progress 90\nwait\n")
            #expect(try c.readLine() == "ok")
        }
        usleep(500_000)
        #expect(try daemon.request("ping") == "ok")
        try daemon.waitForStatus { $0.clients == 1 }
    }

    @Test(arguments: [
        ("memory:400x300", PixelFormat.xrgb8888),
        ("memory:300x200:RGB565", PixelFormat.rgb565),
        ("memory:256x160:BGR888", PixelFormat.bgr888),
    ])
    func snapshotEqualsAnInProcessRender(display: String, format: PixelFormat) throws {
        let daemon = try GaugedProcess(display: display)
        let c = try daemon.connect()
        let size = try c.status().display
        #expect(try c.request("theme animate=false transition_duration=0") == "ok")
        #expect(try c.request("progress 42 Copying files") == "ok")
        #expect(try c.request("title Installing") == "ok")
        #expect(try c.request("wait") == "ok")
        let path = daemon.directory.appending("frame.png")
        #expect(try c.request("snapshot \(path)") == "ok")
        let snapshot = try PNG.read(path)
        #expect(snapshot.width == size.width && snapshot.height == size.height)

        var theme = Theme()
        theme.animate = false
        theme.transitionDuration = 0
        let expected = try renderedFrame(
            settledModel(42, message: "Copying files", title: "Installing"), theme: theme,
            width: size.width, height: size.height, format: format)
        #expect(differingPixels(snapshot, expected) == 0)
        // Not trivially equal: a different value draws a different frame.
        let other = try renderedFrame(
            settledModel(43, message: "Copying files", title: "Installing"), theme: theme,
            width: size.width, height: size.height, format: format)
        #expect(differingPixels(snapshot, other) > 0)

        // Indeterminate and failed, with a runtime fill colour.
        #expect(try c.request("theme fill_color=#3366cc") == "ok")
        #expect(try c.request("mode indeterminate") == "ok")
        #expect(try c.request("state failure It broke") == "ok")
        #expect(try c.request("snapshot \(path)") == "ok")
        theme.fillColor = try #require(Color(parsing: "#3366cc"))
        let failed = try renderedFrame(
            settledModel(42, message: "It broke", title: "Installing", mode: .indeterminate, state: .failure),
            theme: theme, width: size.width, height: size.height, format: format)
        #expect(differingPixels(try PNG.read(path), failed) == 0)
    }
}
