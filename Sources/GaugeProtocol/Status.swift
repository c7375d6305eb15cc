/// The whole state of the daemon, as the `status` reply carries it (one line of JSON).
package struct Status: Equatable, Sendable {
    /// The display the daemon draws on. With no display open the daemon reports
    /// `name: "none"`, 0×0 and format `""`.
    package struct Display: Equatable, Sendable {
        package var name: String
        package var width: Int
        package var height: Int
        package var format: String

        package init(name: String, width: Int, height: Int, format: String) {
            self.name = name
            self.width = width
            self.height = height
            self.format = format
        }

        package static let none = Display(name: "none", width: 0, height: 0, format: "")
    }

    /// The percentage the bar moves to (0...100).
    package var target: Double
    /// The percentage on screen now (mid-transition it lags behind `target`).
    package var shown: Double
    package var message: String
    package var title: String
    package var mode: DisplayMode
    package var state: RunState
    /// Whether the daemon holds the display (`show` / `hide`).
    package var visible: Bool
    package var display: Display
    package var fps: Int
    /// Whether anything moves (a transition, stripes, an indeterminate animation).
    package var animating: Bool
    /// Clients connected now.
    package var clients: Int
    /// Frames presented on the display since the daemon started (0 without a display).
    /// It advances exactly when a changed picture reaches the display, so a client can
    /// tell when an update has been shown. Optional in JSON: older daemons lack it.
    package var frames: Int
    /// The theme's `stall_time` (seconds, 0: never), which the commands that follow an
    /// update tool use; nil from a daemon older than it, which leaves it out.
    package var stallTime: Double?
    /// The theme's `wait_notice` (seconds, 0: never): how long a boot's start job runs
    /// before the screen says what it waits for (`gaugectl systemd --waits`); nil from a
    /// daemon older than it.
    package var waitNotice: Double?
    /// The failure screen while it is up (`failure`); nil otherwise, and from a daemon
    /// older than it, which leaves the key out.
    package var failure: Failure?

    /// What `status` tells of the failure screen: its title as shown, its summary, and
    /// how many detail lines it keeps and has dropped (the oldest, past the limits).
    package struct Failure: Equatable, Sendable {
        package var title: String
        package var summary: String
        package var lines: Int
        package var dropped: Int
        /// The boot's identifier its QR code carries ("" where none, when the key is left out).
        package var boot: String

        package init(title: String, summary: String, lines: Int, dropped: Int, boot: String = "") {
            self.title = title
            self.summary = summary
            self.lines = lines
            self.dropped = dropped
            self.boot = boot
        }

        /// `boot` only where known.
        var jsonValue: JSONValue {
            var members: [JSONValue.Member] = [
                .init("title", .string(title)), .init("summary", .string(summary)),
                .init("lines", .number(Double(lines))), .init("dropped", .number(Double(dropped))),
            ]
            if !boot.isEmpty { members.append(.init("boot", .string(boot))) }
            return .object(members)
        }

        init?(_ value: JSONValue) {
            guard let title = value["title"]?.stringValue, let summary = value["summary"]?.stringValue,
                let lines = value["lines"]?.intValue, let dropped = value["dropped"]?.intValue
            else { return nil }
            self.init(title: title, summary: summary, lines: lines, dropped: dropped, boot: value["boot"]?.stringValue ?? "")
        }
    }

    package init(
        target: Double = 0, shown: Double = 0, message: String = "", title: String = "",
        mode: DisplayMode = .determinate, state: RunState = .running, visible: Bool = true,
        display: Display = .none, fps: Int = 60, animating: Bool = false, clients: Int = 0, frames: Int = 0,
        stallTime: Double? = nil, waitNotice: Double? = nil, failure: Failure? = nil
    ) {
        self.target = target
        self.shown = shown
        self.message = message
        self.title = title
        self.mode = mode
        self.state = state
        self.visible = visible
        self.display = display
        self.fps = fps
        self.animating = animating
        self.clients = clients
        self.frames = frames
        self.stallTime = stallTime
        self.waitNotice = waitNotice
        self.failure = failure
    }

    /// The JSON object, keys in a fixed order.
    var jsonValue: JSONValue {
        .object([
            .init("target", .number(Self.twoDecimals(target))),
            .init("shown", .number(Self.twoDecimals(shown))),
            .init("message", .string(message)),
            .init("title", .string(title)),
            .init("mode", .string(mode.rawValue)),
            .init("state", .string(state.rawValue)),
            .init("visible", .bool(visible)),
            .init(
                "display",
                .object([
                    .init("name", .string(display.name)),
                    .init("width", .number(Double(display.width))),
                    .init("height", .number(Double(display.height))),
                    .init("format", .string(display.format)),
                ])),
            .init("fps", .number(Double(fps))),
            .init("animating", .bool(animating)),
            .init("clients", .number(Double(clients))),
            .init("frames", .number(Double(frames))),
        ] + (stallTime.map { [.init("stall_time", .number(Self.twoDecimals($0)))] } ?? [])
            + (waitNotice.map { [.init("wait_notice", .number(Self.twoDecimals($0)))] } ?? [])
            + [.init("failure", failure?.jsonValue ?? .null)])
    }

    /// One line of JSON, e.g.
    /// `{"target":42.5,"shown":40,"message":"Copying","title":"",...,"clients":1}`.
    package func json() -> String {
        jsonValue.encoded
    }

    /// Reads what `json()` writes. Keys may come in any order and unknown keys are
    /// ignored (a newer daemon may add some); a missing or mistyped known key is an error,
    /// except `frames` and `stall_time`, which a daemon older than them leaves out (read
    /// as 0 and nil), and `failure` (read as nil, as `null` is).
    package static func parse(json text: String) -> Status? {
        guard let root = JSONValue.parse(text) else { return nil }
        return Status(root)
    }

    package init?(_ root: JSONValue) {
        guard let target = root["target"]?.doubleValue,
            let shown = root["shown"]?.doubleValue,
            let message = root["message"]?.stringValue,
            let title = root["title"]?.stringValue,
            let mode = root["mode"]?.stringValue.flatMap(DisplayMode.init(rawValue:)),
            let state = root["state"]?.stringValue.flatMap(RunState.init(rawValue:)),
            let visible = root["visible"]?.boolValue,
            let display = root["display"],
            let name = display["name"]?.stringValue,
            let width = display["width"]?.intValue,
            let height = display["height"]?.intValue,
            let format = display["format"]?.stringValue,
            let fps = root["fps"]?.intValue,
            let animating = root["animating"]?.boolValue,
            let clients = root["clients"]?.intValue
        else { return nil }
        let frames: Int
        switch root["frames"] {
        case nil: frames = 0
        case let value?:
            guard let count = value.intValue else { return nil }
            frames = count
        }
        var stallTime: Double?
        if let value = root["stall_time"] {
            guard let seconds = value.doubleValue else { return nil }
            stallTime = seconds
        }
        var waitNotice: Double?
        if let value = root["wait_notice"] {
            guard let seconds = value.doubleValue else { return nil }
            waitNotice = seconds
        }
        var failure: Failure?
        if let value = root["failure"], value != .null {
            guard let read = Failure(value) else { return nil }
            failure = read
        }
        // The values are hundredths, as `json()` writes them: a finer one read (a hand-made
        // or foreign reply) is rounded the same way, so it writes and reads back as itself.
        self.init(
            target: Self.twoDecimals(target), shown: Self.twoDecimals(shown), message: message, title: title, mode: mode,
            state: state, visible: visible,
            display: Display(name: name, width: width, height: height, format: format),
            fps: fps, animating: animating, clients: clients, frames: frames, stallTime: stallTime.map(Self.twoDecimals),
            waitNotice: waitNotice.map(Self.twoDecimals), failure: failure)
    }

    /// What `gaugectl status` prints: one `label: value` per line, no trailing newline.
    /// Each fact once: the display's size and format only where its name lacks them, and
    /// `visible` says no, with the reason, when there is no display to be seen on.
    package var humanReadable: String {
        let hasDisplay = display.name != Display.none.name
        var displayText = hasDisplay ? display.name : "none"
        if hasDisplay {
            let words = display.name.split(separator: " ")
            for detail in ["\(display.width)x\(display.height)", display.format]
            where !detail.isEmpty && !words.contains(Substring(detail)) {
                displayText += " " + detail
            }
        }
        let visibleText = !visible ? "no (hidden)" : hasDisplay ? "yes" : "no (no display; shown once one appears)"
        let rows: [(String, String)] = [
            ("progress", Self.percent(target) + (Self.twoDecimals(shown) == Self.twoDecimals(target) ? "" : " (shown \(Self.percent(shown)))")),
            ("state", state.rawValue),
            ("mode", mode.rawValue),
            ("title", Self.quoted(title)),
            ("message", Self.quoted(message)),
            ("visible", visibleText),
            ("display", displayText),
            ("fps", String(fps)),
            ("animating", animating ? "yes" : "no"),
            ("clients", String(clients)),
            ("frames", String(frames)),
        ] + (failure.map { [("failure", Self.quoted($0.title) + " (\($0.lines) detail lines)")] } ?? [])
        let width = rows.map { $0.0.count }.max() ?? 0
        return rows.map { label, value in
            label + ":" + String(repeating: " ", count: width - label.count + 1) + value
        }.joined(separator: "\n")
    }

    /// `42.5%`: at most two decimals.
    private static func percent(_ value: Double) -> String {
        PlainDecimal.format(twoDecimals(value)) + "%"
    }

    /// `value` rounded to two decimals (half away from zero): what a percentage on a
    /// screen can mean, so `status` reports 0.05 rather than 0.0005365532495279185.
    package static func twoDecimals(_ value: Double) -> Double {
        // Rounded by hand: `rounded()` needs libm, which this module does not link.
        let scaled = value * 100
        guard scaled.isFinite, scaled.magnitude < 1e15 else { return value }
        let hundredths = Int(scaled + (scaled < 0 ? -0.5 : 0.5))
        return Double(hundredths) / 100
    }

    /// The text in JSON string notation, so that control characters stay visible and
    /// one field stays on one line; `(none)` when empty.
    private static func quoted(_ text: String) -> String {
        guard !text.isEmpty else { return "(none)" }
        var out = ""
        JSONValue.writeString(text, to: &out)
        return out
    }
}
