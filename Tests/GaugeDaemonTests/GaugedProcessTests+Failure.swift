import Foundation
import GaugeDisplay
import GaugeProtocol
import GaugeRender
import Glibc
import Testing

// `gaugectl failure` against the real gauged: a producer's log with bytes that are not
// UTF-8 and escape sequences, through the protocol to the screen's pixels.

@Suite struct GaugedProcessFailureTests {
    /// What the details file below must show as, line by line.
    static let shownLines = [
        "first line", "\u{FFFD}\u{FFFD} not UTF-8", "red text", "after the title", "a       b", "100%", "last, without a newline",
    ]

    static func writeDetails(to path: String) throws {
        var bytes = Array("first line\n".utf8)
        bytes += [0xFF, 0xFE] + Array(" not UTF-8\n".utf8)
        bytes += Array("\u{1B}[1;31mred\u{1B}[0m text\n".utf8)
        bytes += Array("\u{1B}]0;a window title\u{07}after the title\n".utf8)
        bytes += Array("a\tb\n".utf8)
        bytes += Array("progress 10%\r100%\n".utf8)
        bytes += Array("last, without a newline".utf8)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test func gaugectlFailurePutsUpTheBoxWithCleanLines() throws {
        let daemon = try GaugedProcess(display: "memory:640x480")
        let socket = ["--socket", daemon.socketPath, "--timeout", "5"]
        let details = daemon.directory.appending("install.log")
        try Self.writeDetails(to: details)

        var run = try gaugectl(socket + ["failure", "--title", "Update failed", "--details", details, "dpkg", "returned", "1"])
        #expect(run.status == 0 && run.stdout == "" && run.stderr == "", "\(run.status) \(run.stderr)")
        run = try gaugectl(socket + ["status", "--json"])
        let status = try #require(Status.parse(json: String(run.stdout.dropLast())))
        #expect(status.failure == Status.Failure(title: "Update failed", summary: "dpkg returned 1", lines: 7, dropped: 0, boot: thisBoot))
        #expect(status.state == .failure)
        #expect(run.stdout.contains(#""failure":{"title":"Update failed","summary":"dpkg returned 1","lines":7,"dropped":0,"boot":"\#(thisBoot)"}"#))
        // Still: nothing moves, so the daemon arms no timer.
        #expect(try daemon.waitForStatus { !$0.animating }.failure != nil)

        // The snapshot is the frame an in-process scene draws for the lines as cleaned.
        let shot = daemon.directory.appending("failure.png")
        run = try gaugectl(socket + ["snapshot", shot])
        #expect(run.status == 0, "\(run.stderr)")
        let image = try PNG.read(shot)
        var model = ScreenModel()
        model.state = .failure
        var report = FailureReport(title: "Update failed")
        report.summary = "dpkg returned 1"
        for line in Self.shownLines { report.append(line) }
        model.failure = report
        let theme = Theme()
        #expect(differingPixels(image, try renderedFrame(model, theme: theme, width: 640, height: 480)) == 0)
        // Where the layout puts the box: its top band in the failure colour, and the title's
        // glyphs in it too; without the box, none of that colour there.
        let scene = Scene(theme: theme, width: 640, height: 480)
        scene.update(model, at: 0)
        let box = scene.failureRect
        #expect(!box.isEmpty && box.maxY <= scene.barRect.y)
        let accent = rgb(theme.failureColor)
        #expect(near(pixel(image, box.x + box.width / 2, box.y + 1), accent))
        let title = scene.failureTextRects[0]
        #expect(count(image, in: title) { near($0, accent) } > 20)

        // Taken down: the progress screen again, the state kept.
        run = try gaugectl(socket + ["send", "failure-clear"])
        #expect(run.status == 0, "\(run.stderr)")
        let cleared = try daemon.status()
        #expect(cleared.failure == nil && cleared.state == .failure)
        run = try gaugectl(socket + ["snapshot", shot])
        #expect(count(try PNG.read(shot), in: box) { near($0, accent) } == 0)

        // A line without a failure screen: err state, exit 1.
        run = try gaugectl(socket + ["send", "failure-line", "x"])
        #expect(run.status == 1 && run.stderr.hasPrefix("gaugectl: state: no failure screen is up"), "\(run.stderr)")
    }

    @Test func exitStatusesAndDefaults() throws {
        let daemon = try GaugedProcess(display: "memory:320x240")
        let socket = ["--socket", daemon.socketPath, "--timeout", "5"]
        // No title: the default; stdin (here /dev/null) for the details: none.
        var run = try gaugectl(socket + ["failure", "--details", "-"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try daemon.status().failure == Status.Failure(title: "Something went wrong", summary: "", lines: 0, dropped: 0, boot: thisBoot))
        run = try gaugectl(socket + ["failure", "--details", daemon.directory.appending("absent.log")])
        #expect(run.status == 1 && run.stderr.hasPrefix("gaugectl: failure: cannot open "), "\(run.stderr)")
        run = try gaugectl(socket + ["failure", "--details"])
        #expect(run.status == 2, "\(run.stderr)")
        run = try gaugectl(["--socket", daemon.directory.appending("absent.sock"), "--no-wait", "failure", "x"])
        #expect(run.status == 3, "\(run.stderr)")
    }

    /// The lines go in one write; a daemon that refuses the connection (one `err`, then
    /// closed) is still heard: its words and exit 1, not a lost reply.
    @Test func aRefusedBatchReportsTheDaemonsWords() throws {
        let daemon = try GaugedProcess(["--max-clients", "1"], display: "memory:320x240")
        // The one place, once the start's own ping has let it go.
        var held = try LineConnection(path: daemon.socketPath)
        for _ in 0..<100 where try held.request("ping") != "ok" {
            held.close()
            usleep(20_000)
            held = try LineConnection(path: daemon.socketPath)
        }
        defer { held.close() }
        #expect(try held.request("ping") == "ok")
        let log = daemon.directory.appending("long.log")
        try Data((1...150).map { "line \($0) of a long log\n" }.joined().utf8).write(to: URL(fileURLWithPath: log))
        let run = try gaugectl(["--socket", daemon.socketPath, "--timeout", "5", "failure", "--details", log, "It failed"])
        #expect(run.status == 1 && run.stderr == "gaugectl: io: too many clients\n", "\(run.status) \(run.stderr)")
    }
}

private func rgb(_ c: Color) -> (UInt8, UInt8, UInt8) {
    func byte(_ v: Double) -> UInt8 { UInt8((min(max(v, 0), 1) * 255).rounded()) }
    return (byte(c.red), byte(c.green), byte(c.blue))
}

/// Within 2 in each channel: pixman rounds a solid colour its own way.
private func near(_ a: (UInt8, UInt8, UInt8), _ b: (UInt8, UInt8, UInt8)) -> Bool {
    abs(Int(a.0) - Int(b.0)) <= 2 && abs(Int(a.1) - Int(b.1)) <= 2 && abs(Int(a.2) - Int(b.2)) <= 2
}

private func pixel(_ image: PNG.Image, _ x: Int, _ y: Int) -> (UInt8, UInt8, UInt8) {
    let i = (y * image.width + x) * 4
    return (image.rgba[i], image.rgba[i + 1], image.rgba[i + 2])
}

private func count(_ image: PNG.Image, in area: Rect, where test: ((UInt8, UInt8, UInt8)) -> Bool) -> Int {
    var n = 0
    for y in area.y..<area.maxY {
        for x in area.x..<area.maxX where test(pixel(image, x, y)) { n += 1 }
    }
    return n
}
