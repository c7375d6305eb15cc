import GaugeDaemon
import GaugeDisplay
import GaugeProtocol
import GaugeRender

/// Requests applied to the daemon's screen on a memory display, a frame rendered after
/// each: the theme keys with any value, the model in any state.
extension FuzzTarget {
    static let screen = FuzzTarget(
        name: "screen",
        summary: "request lines applied to a ProgressScreen on a small memory display (any pixel format), "
            + "a frame after each: no crash, error replies bounded, `status` JSON read back equal, "
            + "`snapshot -` a PNG of the screen's size",
        maxLength: 3000,
        dictionary: NativeSamples.dictionary + ["theme ", "mode indeterminate\n", "status\n", "snapshot -\n", "\n", "1000", "0.05", "400", "8000"],
        seeds: {
            [Array((NativeSamples.lines.filter { !$0.hasPrefix("newroot") && !$0.hasPrefix("snapshot /") } + ["status"]).joined(separator: "\n").utf8),
             Array("theme style=box indeterminate_style=circles indicator_size=1000 circle_colors=#fff\nmode indeterminate\nstatus\nsnapshot -\n".utf8),
             Array("theme rotation=90 label_position=left bar_min_width=8000 bar_height=400 label_size=400\nprogress 99.9 x\nsnapshot -\n".utf8),
             Array("theme logo=any font=any\nprogress 50\nstatus\n".utf8)]
        }
    ) { input, probe throws(FuzzFailure) in
        let formats = PixelFormat.allCases
        let format = formats[input.count % formats.count]
        let display: MemoryDisplay
        do {
            display = try MemoryDisplay(width: 96 + input.count % 7, height: 54, format: format)
        } catch {
            throw FuzzFailure("cannot make the display: \(error)")
        }
        let screen = ProgressScreen(theme: Theme(), display: display, scale: input.count % 5 == 0 ? 2 : 1) { _ in }
        var time = 1000.0
        screen.renderFrame(at: time)
        for outcome in ReferenceLines.items(input, maxLineBytes: Limits.maxLineBytes) {
            guard case .line(let line) = outcome else { continue }
            guard case .success(let request) = Request.parse(line) else { continue }
            probe.hit("request", NativeSamples.kind(of: request))
            let reply = try ScreenDriver.apply(request, to: screen, at: time, probe: &probe)
            try FuzzTarget.checkReply(reply)
            time += line.utf8.count % 3 == 0 ? 5 : 0.07
            screen.renderFrame(at: time)
        }
    }
}

/// What the daemon does with a request, as far as the screen goes. Requests that touch
/// the system (newroot, snapshot to a path, quit) are not carried out; file theme keys
/// get one of a few fixed paths.
enum ScreenDriver {
    static let files = [
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
        "/nonexistent/gauge-fuzz.png", "/", "",
    ]

    static func apply(_ request: Request, to screen: ProgressScreen, at time: Double, probe: inout Probe) throws(FuzzFailure) -> Reply {
        switch request {
        case .progress(let value, let message): screen.setProgress(value, message: message, at: time)
        case .message(let text): screen.setMessage(text)
        case .title(let text): screen.setTitle(text)
        case .step(let name): screen.setMessage(name)
        case .jobs, .describe: break
        case .mode(let mode): screen.setMode(mode)
        case .state(let state, let message): screen.setState(state, message: message, at: time)
        case .theme(let settings):
            let safe = settings.map { setting in
                guard ThemeSamples.fileKeys.contains(setting.key) else { return setting }
                let pick = Int(MutationFuzzer.hash(setting.value) % UInt64(files.count))
                return ThemeSetting(key: setting.key, value: files[pick])
            }
            do throws(ProtocolError) {
                try screen.applyTheme(safe)
                probe.hit("theme", "ok")
            } catch {
                probe.hit("theme", error.code.rawValue)
                return .err(error)
            }
            try ThemeSamples.checkValues(of: screen.theme)
        case .failure(let title): screen.showFailure(title: title)
        case .failureSummary(let text): if let error = screen.setFailureSummary(text) { return .err(error) }
        case .failureLine(let text): if let error = screen.addFailureLine(text) { return .err(error) }
        case .failureClear: screen.clearFailure()
        case .show, .reactivate: screen.show()
        case .hide, .deactivate: screen.hide()
        case .status:
            let status = screen.status(at: time, fps: 60, clients: 1)
            let json = status.json()
            let back = Status.parse(json: json)
            try check(back == status, "status \(json) reads back as \(String(describing: back))")
            return .ok(json)
        case .snapshotToPassedFile:
            let bytes: [UInt8]
            do throws(ProtocolError) {
                bytes = try screen.snapshotPNG(at: time)
            } catch {
                throw FuzzFailure("snapshot failed: \(error)")
            }
            let image = PNGSamples.decode(bytes)
            try check(image?.width == screen.display?.width && image?.height == screen.display?.height,
                      "a snapshot of \(String(describing: image.map { ($0.width, $0.height) })) for a \(String(describing: screen.display?.name))")
        case .reload, .newRoot, .ping, .wait, .waitKey, .snapshot, .quit:
            break
        }
        return .ok(nil)
    }
}
