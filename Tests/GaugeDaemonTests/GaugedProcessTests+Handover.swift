import GaugeProtocol
import GaugeTranslators
import GaugeRender
import Glibc
import Testing
import GaugeTestSupport

// The hand-over from a finished operation to the next, as `gaugectl rauc`, `fwupd`,
// `swupdate` ... send it (HonestBar.start: `progress 0`, then `state running` a moment
// later): what the screen shows, not only the target.

extension GaugedProcessTests {
    /// Pixels of exactly `color` (opaque) in a snapshot.
    private func count(_ color: (UInt8, UInt8, UInt8), in image: PNG.Image) -> Int {
        var n = 0
        for y in 0..<image.height {
            for x in 0..<image.width {
                let p = image.pixel(x: x, y: y)
                if (p.r, p.g, p.b) == color { n += 1 }
            }
        }
        return n
    }

    /// A running bar never visibly goes back: the finished operation's full bar does not
    /// ease down to the new operation's 0 in the running colour. Sampled during what would
    /// be the ease (a long transition, so the samples fall inside it): every `status` in
    /// the running state shows the new value, and a snapshot has no pixel of the running
    /// fill.
    @Test(arguments: ["success", "failure"])
    func aNewOperationNeverShowsARunningBarGoingBack(end: String) throws {
        let daemon = try GaugedProcess(display: "memory:400x300")
        let c = try daemon.connect()
        #expect(try c.request("theme animate=false flat=true outline=false fill_color=#ff0000 transition_duration=0") == "ok")
        #expect(try c.request("progress 90 Installing") == "ok")
        #expect(try c.request("state \(end) Done") == "ok")
        #expect(try c.request("wait") == "ok")
        #expect(try c.request("theme transition_duration=3") == "ok")
        let started = monotonicNow()
        // As HonestBar.start sends them: one connection, one after the other.
        try c.send("progress 0\nstate running Installing update\n")
        #expect(try c.readLine() == "ok")
        #expect(try c.readLine() == "ok")
        var samples: [Double] = []
        while monotonicNow() - started < 1.0 {
            let status = try c.status()
            #expect(status.state == .running)
            samples.append(status.shown)
            usleep(50_000)
        }
        #expect(samples.count > 3)
        #expect(samples.allSatisfy { $0 == 0 }, "a running bar shown going back: \(samples.prefix(8))")
        let path = daemon.directory.appending("handover.png")
        #expect(try c.request("snapshot \(path)") == "ok")
        #expect(monotonicNow() - started < 3, "the snapshot falls inside what would be the ease")
        let image = try PNG.read(path)
        #expect(count((255, 0, 0), in: image) == 0, "the running fill is drawn over the old bar")

        // Not trivially empty: the next progress shows in the running colour.
        #expect(try c.request("theme transition_duration=0") == "ok")
        #expect(try c.request("progress 50") == "ok")
        #expect(try c.request("snapshot \(path)") == "ok")
        #expect(count((255, 0, 0), in: try PNG.read(path)) > 100)
    }
}

extension GaugedProcessTests {
    /// Gauge's own units are no step to show: systemd reports `gauged-poweroff.service`
    /// (the power-off screen itself) and `gauged-ask-password.service` (a question taken
    /// to the splash) to Plymouth's socket like any unit; the message line keeps the
    /// boot's own step, and the title ("Powering off") stays.
    @Test func gaugesOwnUnitsAreNoStepsOnTheMessageLine() throws {
        let daemon = try GaugedProcess(["--title", "Powering off"])
        #expect(try daemon.request("step systemd-journald.service") == "ok")
        #expect(try daemon.status().message == "systemd-journald.service", "a unit of the system shows")
        for own in ["gauged-poweroff.service", "gauged-ask-password.service", "gauged.service", "gauged-quit.service"] {
            #expect(try daemon.request("step \(own)") == "ok")
            let status = try daemon.status()
            #expect(status.message == "systemd-journald.service", "\(own) shown as a step")
            #expect(status.title == "Powering off")
        }
        #expect(try daemon.request("step gauged-like-unit-of-someone-else.mount") == "ok")
        #expect(try daemon.status().message == "gauged-like-unit-of-someone-else.mount", "only Gauge's own units are left out")
    }
}
