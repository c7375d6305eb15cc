import GaugeProtocol

/// The bar and message line while an update tool installs under Plymouth's update modes
/// (`plymouth change-mode --updates`, `--system-upgrade`): one honest bar for the whole
/// update, from the mode's start to its end. One per daemon, like the message list: each
/// `plymouth` call is a connection of its own.
///
/// PackageKit's `pk-offline-update` (systemd's `system-update.target`) sends, each call a
/// `plymouth` process started without waiting for the last:
///
/// | wire | sent | Gauge |
/// |---|---|---|
/// | `C updates` | once, before the transaction | the title; the bar back to 0 (the boot's bar ends there); the line names the prepared packages and says not to turn the computer off |
/// | `M` "Installing updates; this could take a while..." | once | the line: that text, then the warning |
/// | `u N` | every percentage of PackageKit's *current* count: it counts 0-100 again for each transaction (the simulation, the real one) and phase | folded: each new count (a drop of more than `lateArrival`) covers half of the bar still left, so the bar only rises and stops short of full |
/// | `M` "Installing Updates — N%" | the same percentage, above 10 | not shown: it is the count's percentage, not the update's (the bar is) |
/// | `C reboot` / `C shutdown` | at the end, after a failure's 10 s pause too | success (the bar full) or failure with PackageKit's own error, read from its results file, only when the file changed during the update |
/// | `M` "Rebooting after installing updates…" | then | the line: the outcome, then that text |
///
/// No `u` or `M` for `stallSeconds` (a PackageKit that hangs: pk-offline-update's unit has no
/// time limit) turns the bar indeterminate and the line says so (`stalled`, called by the
/// daemon's timer); the next word from the tool turns it back.
///
/// The package names and the outcome are not on the wire: PackageKit keeps them in
/// `prepared-update` and `offline-update-competed` (sic) under /var/lib/PackageKit, which
/// `read` fetches (the daemon's reader; none in tests and fuzzing).
package struct PlymouthUpdates: Equatable, Sendable {
    /// The modes whose title says updates are being installed.
    package static let modes: Set<String> = ["updates", "system-upgrade"]
    package static let warning = "Do not turn off the computer."
    /// PackageKit's list of the packages the update installs.
    package static let preparedPath = "/var/lib/PackageKit/prepared-update"
    /// PackageKit's outcome of the last offline update (the name is PackageKit's spelling).
    package static let resultsPath = "/var/lib/PackageKit/offline-update-competed"
    /// A value at most this much lower than the last is a call that arrived late (each
    /// `plymouth` call is a process of its own, started without waiting), not a new count.
    static let lateArrival = 5
    /// Seconds without progress or a message after which the screen says the update is quiet.
    package static let stallSeconds = 120.0

    /// Reads one of PackageKit's files (nil: none, or not readable).
    package typealias Reader = @Sendable (String) -> [UInt8]?

    private let read: Reader
    /// Whether an update mode is on.
    package private(set) var isActive = false
    /// The bar's value last sent (0...100).
    package private(set) var shown: Double = 0
    private var last: Int?
    private var base: Double = 0
    private var span: Double = 50
    private var intro = ""
    private var toolText = ""
    /// What the last update came to, put before the tool's messages after it.
    private var outcome: String?
    private var resultsAtStart: [UInt8]?
    /// Whether the bar was turned indeterminate for a stall.
    package private(set) var isStalled = false
    /// Counts the words from the tool in an update mode (its start, `u`, `M`): the daemon
    /// restarts its stall timer when it changes.
    package private(set) var activity = 0

    package init(read: @escaping Reader = { _ in nil }) {
        self.read = read
    }

    /// Equal when in the same state (whatever their readers).
    package static func == (a: PlymouthUpdates, b: PlymouthUpdates) -> Bool {
        (a.isActive, a.shown, a.last, a.base, a.span) == (b.isActive, b.shown, b.last, b.base, b.span)
            && (a.intro, a.toolText, a.outcome, a.resultsAtStart) == (b.intro, b.toolText, b.outcome, b.resultsAtStart)
            && (a.isStalled, a.activity) == (b.isStalled, b.activity)
    }

    /// `change-mode MODE`: entering an update mode starts the bar at 0; leaving it ends it.
    /// `showing`: the message the list shows now (the tool's first may come first).
    mutating func changeMode(_ mode: String, showing: String?) -> [Request] {
        if Self.modes.contains(mode) {
            guard !isActive else { return [] }
            isActive = true
            activity &+= 1
            (shown, last, base, span, outcome, isStalled) = (0, nil, 0, 50, nil, false)
            toolText = showing.flatMap { Self.isPercentage($0) ? nil : $0 } ?? ""
            resultsAtStart = read(Self.resultsPath)
            intro = PackageKitFiles.preparedNames(read(Self.preparedPath) ?? []).map(Self.introduce) ?? ""
            return [.progress(0, message: line())]
        }
        guard isActive else { return [] }
        isActive = false
        let resumed = resume()
        let results = read(Self.resultsPath)
        guard let results, results != resultsAtStart, let result = PackageKitFiles.result(results) else { return resumed }
        outcome = result.success ? "Updates installed." : "The update failed: \(result.error)"
        return resumed + [.state(result.success ? .success : .failure, message: outcome)]
    }

    /// No word from the tool for `stallSeconds`: the bar indeterminate, and the line says so.
    package mutating func stalled() -> [Request] {
        guard isActive, !isStalled else { return [] }
        isStalled = true
        let minutes = Int(Self.stallSeconds / 60)
        return [.mode(.indeterminate), .message(line(quiet: "No progress reported for \(minutes) minutes."))]
    }

    private mutating func resume() -> [Request] {
        guard isStalled else { return [] }
        isStalled = false
        return [.mode(.determinate), .message(line())]
    }

    /// `system-update --progress=N` in an update mode, folded into the one bar.
    mutating func progress(_ value: Int) -> [Request] {
        let value = min(max(value, 0), 100)
        activity &+= 1
        let resumed = resume()
        if let last, value + Self.lateArrival < last {
            base = shown
            span = (100 - base) / 2
        } else if let last, value < last {
            return resumed
        }
        last = value
        // Cut down to tenths; never full while the tool runs (only success fills the bar).
        let next = min(Double(Int((base + span * Double(value) / 100) * 10 + 1e-7)) / 10, 99.9)
        guard next > shown else { return resumed }
        shown = next
        return resumed + [.progress(next, message: nil)]
    }

    /// The message line for what the message list now shows, in an update mode or after one.
    mutating func message(_ requests: [Request]) -> [Request] {
        guard isActive || outcome != nil else { return requests }
        if isActive { activity &+= 1 }
        let resumed = isActive ? resume() : []
        return resumed + requests.compactMap { request in
            guard case .message(let text) = request else { return request }
            if isActive {
                if Self.isPercentage(text) { return nil }
                toolText = text
                return .message(line())
            }
            guard let outcome else { return request }
            return .message(text.isEmpty ? outcome : "\(outcome) \(text)")
        }
    }

    private func line(quiet: String = "") -> String {
        [toolText, intro, quiet, Self.warning].filter { !$0.isEmpty }.joined(separator: " ")
    }

    private static func introduce(_ names: [String]) -> String {
        let shown = names.prefix(3).joined(separator: ", ")
        let more = names.count > 3 ? " and \(names.count - 3) more" : ""
        return names.count == 1 ? "Installing \(shown)." : "Installing \(names.count) updates: \(shown)\(more)."
    }

    /// PackageKit's "Installing Updates — 69%": a count's percentage restated.
    static func isPercentage(_ text: String) -> Bool {
        guard text.hasSuffix("%") else { return false }
        let digits = text.utf8.dropLast().reversed().prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        return !digits.isEmpty
    }
}

/// The two of PackageKit's key files the update screen reads (GLib key files: `[group]`,
/// `key=value`, lists separated by `,`, `\n`-style escapes).
package enum PackageKitFiles {
    package struct Result: Equatable, Sendable {
        package var success: Bool
        /// PackageKit's `ErrorDetails` (else its `ErrorCode`) on failure.
        package var error: String
    }

    /// The names of the packages in `prepared-update` (`prepared_ids`, each
    /// `name;version;arch;data`); nil when there are none.
    package static func preparedNames(_ bytes: [UInt8]) -> [String]? {
        guard let ids = value("prepared_ids", in: "update", bytes) else { return nil }
        let names = ids.split(separator: ",").compactMap { $0.split(separator: ";").first.map { CompatText.clean(String($0)) } }
        return names.isEmpty ? nil : names
    }

    /// The outcome in `offline-update-competed`; nil when the file says none.
    package static func result(_ bytes: [UInt8]) -> Result? {
        let group = "PackageKit Offline Update Results"
        guard let success = value("Success", in: group, bytes) else { return nil }
        if success == "true" { return Result(success: true, error: "") }
        let error = value("ErrorDetails", in: group, bytes) ?? value("ErrorCode", in: group, bytes) ?? ""
        return Result(success: false, error: error.isEmpty ? "PackageKit gave no reason" : CompatText.clean(error))
    }

    /// The value of `key` in `[group]`, its escapes undone.
    static func value(_ key: String, in group: String, _ bytes: [UInt8]) -> String? {
        var inGroup = false
        for raw in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let line = raw.drop { $0 == " " || $0 == "\t" }
            if line.hasPrefix("[") {
                inGroup = line == "[\(group)]"
            } else if inGroup, let equals = line.firstIndex(of: "="),
                line[..<equals].trimmingSuffix(" ") == key
            {
                return unescaped(line[line.index(after: equals)...].drop { $0 == " " })
            }
        }
        return nil
    }

    private static func unescaped(_ text: Substring) -> String {
        var out = ""
        var escaping = false
        for character in text {
            if escaping {
                let map: [Character: String] = ["n": " ", "t": " ", "r": " ", "s": " ", "\\": "\\"]
                out += map[character] ?? String(character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                out.append(character)
            }
        }
        return out
    }
}

extension Substring {
    fileprivate func trimmingSuffix(_ character: Character) -> Substring {
        var text = self
        while text.last == character { text = text.dropLast() }
        return text
    }
}
