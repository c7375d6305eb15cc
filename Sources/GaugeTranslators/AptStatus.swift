import GaugeProtocol

/// One line of APT's status stream (`apt-get -o APT::Status-Fd=N`) or of dpkg's
/// (`dpkg --status-fd N`), as apt 2.6 and dpkg 1.21 write them:
///
/// | line | event |
/// |---|---|
/// | `dlstatus:ITEM:PERCENT:TEXT` (PERCENT of the bytes to fetch) | `download` |
/// | `pmstatus:PACKAGE:PERCENT:TEXT` (`Unpacking hello (amd64)`, `Configuring hello (amd64)`) | `install` |
/// | `pmerror:PACKAGE:PERCENT:MESSAGE`, `status: PACKAGE : error : MESSAGE` | `error` |
/// | `pmconffile:CONFFILE:PERCENT:'old' 'new' useredited distedited`, `status: CONFFILE : conffile-prompt : ...` | `conffile` |
/// | `media-change: MEDIUM:DRIVE:TEXT` | `mediaChange` |
/// | `processing: ACTION: PACKAGE` | `processing` |
/// | `status: PACKAGE: STATE` | `state` |
package enum AptStatusEvent: Equatable, Sendable {
    case download(percent: Double, text: String)
    case install(package: String, percent: Double, text: String)
    case error(package: String, message: String)
    /// A question about a configuration file, asked in the terminal apt or dpkg runs in.
    case conffile(path: String)
    case mediaChange(text: String)
    case processing(action: String, package: String)
    case state(package: String, state: String)
}

/// Splits a status stream into events, line by line, within bounded memory: a line longer
/// than `maxLineBytes` is dropped with a problem, as is a line that is neither APT's nor
/// dpkg's or lacks what its kind needs (a percentage outside 0...100, for one).
package struct AptStatusReader: Sendable {
    package enum Item: Equatable, Sendable {
        case event(AptStatusEvent)
        /// Something to log; reading goes on.
        case problem(String)
    }

    /// Far more than apt's longest line (a dpkg error message naming a file).
    package static let maxLineBytes = 16384

    private var splitter = LineSplitter(maxLineBytes: AptStatusReader.maxLineBytes)

    package init() {}

    package var pendingByteCount: Int { splitter.pendingByteCount }

    package mutating func consume<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> [Item] {
        var pieces: [LineSplitter.Piece] = []
        splitter.split(bytes) { pieces.append($0) }
        return pieces.compactMap(Self.item)
    }

    /// The end of the stream: a last line without its newline counts (apt ends a failed
    /// run's `pmerror` so).
    package mutating func finish() -> [Item] {
        splitter.finish().flatMap(Self.item).map { [$0] } ?? []
    }

    private static func item(_ piece: LineSplitter.Piece) -> Item? {
        guard case .line(let bytes) = piece else {
            return .problem("a status line longer than \(maxLineBytes) bytes skipped")
        }
        var line = bytes[...]
        while let last = line.last, last == 0x0D || last == 0x20 || last == 0x09 { line = line.dropLast() }
        guard !line.isEmpty else { return nil }
        let text = CompatText.clean(line)
        if let event = event(text) { return .event(event) }
        return .problem("a status line that is not APT's or dpkg's skipped: \(CompatText.quoted(text))")
    }

    /// The event `line` is; nil when it is none.
    static func event(_ line: String) -> AptStatusEvent? {
        let fields = line.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        switch fields[0] {
        case "dlstatus", "pmstatus", "pmerror", "pmconffile":
            // ITEM may hold colons (a package's architecture): the percentage is the first
            // number after it.
            guard let at = (2..<max(fields.count - 1, 2)).first(where: { percentage(fields[$0]) != nil }),
                let percent = percentage(fields[at])
            else { return nil }
            let item = fields[1..<at].joined(separator: ":")
            let text = trimmed(fields[(at + 1)...].joined(separator: ":"))
            switch fields[0] {
            case "dlstatus": return .download(percent: percent, text: text)
            case "pmstatus": return item.isEmpty ? nil : .install(package: item, percent: percent, text: text)
            case "pmerror": return .error(package: item, message: text)
            default: return item.isEmpty ? nil : .conffile(path: item)
            }
        case "media-change":
            guard fields.count >= 4 else { return nil }
            return .mediaChange(text: trimmed(fields[3...].joined(separator: ":")))
        case "processing":
            guard fields.count >= 3 else { return nil }
            let action = trimmed(fields[1])
            let package = trimmed(fields[2...].joined(separator: ":"))
            return action.isEmpty || package.isEmpty ? nil : .processing(action: action, package: package)
        case "status":
            return dpkgStatus(trimmed(fields[1...].joined(separator: ":")))
        default:
            return nil
        }
    }

    /// dpkg's `status:` line after its keyword.
    private static func dpkgStatus(_ rest: String) -> AptStatusEvent? {
        let fields = rest.split(separator: ":", omittingEmptySubsequences: false)
        if let at = fields.indices.dropFirst().first(where: { fields[$0] == " error " || fields[$0] == " conffile-prompt " }) {
            let subject = trimmed(fields[..<at].joined(separator: ":"))
            guard !subject.isEmpty else { return nil }
            return fields[at] == " error "
                ? .error(package: subject, message: trimmed(fields[(at + 1)...].joined(separator: ":")))
                : .conffile(path: subject)
        }
        guard let colon = rest.lastIndex(of: ":") else { return nil }
        let package = trimmed(String(rest[..<colon]))
        let state = trimmed(String(rest[rest.index(after: colon)...]))
        guard !package.isEmpty, !state.isEmpty, !state.contains(" ") else { return nil }
        return .state(package: package, state: state)
    }

    /// A percentage as apt writes it (`44.4444`), nil outside 0...100.
    private static func percentage(_ text: String) -> Double? {
        guard let value = PlainDecimal.parse(text), value.isFinite, value >= 0, value <= 100 else { return nil }
        return value
    }

    private static func trimmed(_ text: String) -> String {
        String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}

/// What the screen shows for an APT or dpkg run: one `HonestBar` from the start of the
/// command to its end.
///
/// - apt: a download (`dlstatus`, its percentage by bytes) takes the first half of the
///   bar, the package work after it (`pmstatus`) the rest, or the whole bar when nothing
///   is fetched; apt counts each phase from 0 again, and a count that goes back within a
///   phase holds the bar. The message is apt's own text: `Unpacking hello (amd64)`.
/// - dpkg: its stream has no percentages. Each `processing: ACTION: PACKAGE` starts one
///   of `expectedSteps` equal steps (a package given to `--install` is two: unpacking and
///   configuring), and the package's state at the step's end (`unpacked`, `installed`,
///   `not-installed`, `config-files`) finishes it; more steps than expected hold the bar.
///   Without an expected count the bar takes the indeterminate style, the message naming
///   each step.
/// - `pmerror` (dpkg's `error`) ends the bar in the failure state with apt's words,
///   `PACKAGE: MESSAGE`, at once: apt goes on with other packages, but the run has failed.
/// - A conffile question or a media change says on the message line that the terminal
///   waits for an answer.
/// - Only the command's end fills the bar: `finish` with its outcome.
package struct AptStatusTranslator: Sendable {
    package static let successMessage = "Done"

    private var bar: HonestBar
    /// dpkg's steps to expect; nil: unknown (the indeterminate style).
    private let expectedSteps: Int?
    private let indeterminate: Bool
    private var downloaded = false
    private var installing = false
    private var dpkgSteps = 0
    /// apt's words for the first error, once one came.
    package private(set) var failure: String?

    /// `dpkgSteps`: what `AptCommandLine` learnt from a dpkg command line (nil for apt,
    /// whose stream has percentages, and for a dpkg run whose count is unknown).
    package init(settings: HonestBar.Settings = HonestBar.Settings(), dpkg: Bool = false, dpkgSteps: Int? = nil) {
        bar = HonestBar(settings: settings)
        expectedSteps = dpkgSteps.flatMap { $0 > 0 ? $0 : nil }
        indeterminate = dpkg && expectedSteps == nil
    }

    /// The command starts: the bar at 0, running, with `message` (the command's name).
    package mutating func start(message: String, at now: UInt64) -> [Request] {
        bar.start(message: CompatText.clean(message), at: now) + (indeterminate ? [.mode(.indeterminate)] : [])
    }

    package mutating func requests(for event: AptStatusEvent, at now: UInt64) -> [Request] {
        guard failure == nil else { return [] }
        switch event {
        case .download(let percent, let text):
            guard !installing else { return [] }
            downloaded = true
            let position = StepWeights.position(weights: [1, 1], step: 0, fraction: percent / 100)
            return report(position.value, checkpoint: position.checkpoint, message: text, at: now)
        case .install(_, let percent, let text):
            installing = true
            let base = downloaded ? 50.0 : 0
            return report(base + (100 - base) * percent / 100, message: text, at: now)
        case .error(let package, let message):
            let words = package.isEmpty ? message : package + ": " + message
            failure = CompatText.clean(words)
            return end(.failure, message: failure)
        case .conffile(let path):
            return report(nil, message: "Waiting for an answer about \(path) in the terminal", at: now)
        case .mediaChange(let text):
            return report(nil, message: text, at: now)
        case .processing(let action, let package):
            let message = Self.describe(action, package)
            guard let total = expectedSteps else { return report(nil, message: message, at: now) }
            let step = Double(dpkgSteps)
            dpkgSteps += 1
            return report(step / Double(total) * 100, checkpoint: (step + 1) / Double(total) * 100, message: message, at: now)
        case .state(_, let state):
            guard let total = expectedSteps, dpkgSteps > 0,
                ["unpacked", "installed", "not-installed", "config-files"].contains(state)
            else { return [] }
            return report(Double(dpkgSteps) / Double(total) * 100, message: nil, at: now)
        }
    }

    /// The command ended: success (`failure` nil) fills the bar; a failure shows apt's
    /// words of its first error if it gave any (they are on screen already), else
    /// `failure`, the command's own end (`apt-get failed (exit status 100)`).
    package mutating func finish(failure end: String?) -> [Request] {
        guard let end else { return self.end(.success, message: Self.successMessage) }
        if failure != nil { return [] }
        failure = CompatText.clean(end)
        return self.end(.failure, message: failure)
    }

    /// A note on the message line (gaugectl waits for a command it asked to stop).
    package mutating func note(_ message: String, at now: UInt64) -> [Request] {
        guard failure == nil else { return [] }
        return report(nil, message: message, at: now)
    }

    package mutating func tick(at now: UInt64) -> [Request] {
        indeterminate || failure != nil ? [] : bar.tick(at: now)
    }

    package func nextTick(after now: UInt64) -> UInt64? {
        indeterminate || failure != nil ? nil : bar.nextTick(after: now)
    }

    /// `value` nil: only the message (the bar stays).
    private mutating func report(_ value: Double?, checkpoint: Double? = nil, message: String?, at now: UInt64) -> [Request] {
        let text = message.map { CompatText.clean($0) }.flatMap { $0.isEmpty ? nil : $0 }
        guard value != nil || text != nil else { return [] }
        return bar.report(value ?? bar.shown, checkpoint: value == nil ? nil : checkpoint, message: text, at: now)
    }

    private mutating func end(_ state: RunState, message: String?) -> [Request] {
        (indeterminate ? [.mode(.determinate)] : []) + bar.finish(state, message: message)
    }

    /// dpkg's action as the message line says it.
    static func describe(_ action: String, _ package: String) -> String {
        switch action {
        case "install": "Unpacking \(package)"
        case "upgrade": "Unpacking \(package) (upgrade)"
        case "configure": "Configuring \(package)"
        case "remove": "Removing \(package)"
        case "purge": "Purging \(package)"
        case "trigproc": "Processing triggers for \(package)"
        case "disappear": "Removing \(package) (replaced)"
        default: "\(action) \(package)"
        }
    }
}

/// The command line `gaugectl apt` runs: the status descriptor's option put after the
/// first word that is apt or dpkg (so `chroot /target apt-get ...` works too), and for
/// dpkg the steps its arguments announce.
package struct AptCommandLine: Equatable, Sendable {
    package var arguments: [String]
    /// The apt or dpkg word's name (`apt-get`), as messages call the command.
    package var name: String
    /// The command's descriptor the status stream goes to.
    package var descriptor: Int32
    package var isDpkg: Bool
    /// dpkg's steps (see `AptStatusTranslator`); nil for apt or when unknown.
    package var dpkgSteps: Int?

    /// The programs that take `-o APT::Status-Fd=N`.
    static let aptPrograms: Set<String> = ["apt-get", "apt", "aptitude"]

    /// dpkg's options whose value may be the next argument.
    static let dpkgValueOptions: Set<String> = [
        "--root", "--admindir", "--instdir", "--status-fd", "--status-logger", "--log", "--path-exclude",
        "--path-include", "--ignore-depends", "--pre-invoke", "--post-invoke", "--abort-after", "--verify-format",
    ]

    /// Nil when no word of `command` is apt-get, apt, aptitude or dpkg.
    package init?(_ command: [String], descriptor: Int32) {
        let names = command.map { $0.split(separator: "/").last.map(String.init) ?? $0 }
        guard let index = names.firstIndex(where: { Self.aptPrograms.contains($0) || $0 == "dpkg" }) else { return nil }
        name = names[index]
        self.descriptor = descriptor
        isDpkg = name == "dpkg"
        let option = isDpkg ? ["--status-fd", "\(descriptor)"] : ["-o", "APT::Status-Fd=\(descriptor)"]
        arguments = Array(command[...index]) + option + Array(command[(index + 1)...])
        dpkgSteps = isDpkg ? Self.dpkgSteps(Array(command[(index + 1)...])) : nil
    }

    /// Steps for dpkg's `arguments`: each package or .deb named, twice for `--install`
    /// (unpacking, configuring); nil for `--pending`, `--recursive` or no package named.
    static func dpkgSteps(_ arguments: [String]) -> Int? {
        var perPackage: Int?
        var packages = 0
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let word = arguments[index]
            index += 1
            if optionsEnded || !word.hasPrefix("-") || word == "-" {
                packages += 1
                continue
            }
            switch word {
            case "--": optionsEnded = true
            case "-i", "--install": perPackage = 2
            case "--unpack", "--configure", "-r", "--remove", "-P", "--purge", "--triggers-only": perPackage = 1
            case "-a", "--pending", "-R", "--recursive": return nil
            default:
                if dpkgValueOptions.contains(word) { index += 1 }
            }
        }
        guard let perPackage, packages > 0 else { return nil }
        return packages * perPackage
    }
}
