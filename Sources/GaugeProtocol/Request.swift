/// One request line of the native protocol (docs/protocol.md), parsed and validated.
///
/// Grammar: words are separated by one or more spaces (only U+0020); leading spaces
/// before the command word and trailing spaces after a keyword argument are ignored; the
/// command word is lowercase and case-sensitive. A free-text argument (the message of
/// `progress`, `message`, `title`, the message of `state`, the failure screen's texts,
/// the path of `snapshot`) is
/// everything after the *one* space that ends the word before it, kept verbatim: further
/// spaces belong to the text, so every text, including one that starts or ends with
/// spaces, round-trips through `encoded` (a snapshot path, which must start with `/`,
/// may follow any number of spaces). No control character other than tab may
/// appear anywhere in a line.
package enum Request: Equatable, Sendable {
    case progress(Double, message: String?)
    /// Sets the message line; an empty text clears it.
    case message(String)
    case title(String)
    /// A named point of the work reached: during a boot, what systemd sends for each unit
    /// it starts (Plymouth's `update --status`). In boot mode it refines the estimated
    /// bar, and shows on the message line unless a client has set a message.
    case step(String)
    /// `describe UNIT TEXT`: how a step named UNIT reads on the screen (its unit's
    /// Description, which `gaugectl systemd --waits` reads from systemd). The step keeps
    /// its name in the boot history. Root and the daemon's own user only.
    /// (Indirect: two texts inline would make every request larger.)
    indirect case describe(unit: String, text: String)
    /// How far the boot is by its init system's own count, 0...100: systemd's `Progress`,
    /// the share of its jobs done (`gaugectl systemd --boot-estimate` sends it). Only the
    /// boot estimate uses it, and only where it has no history to follow; unlike
    /// `progress` it leaves the estimate running.
    case jobs(Double)
    case mode(DisplayMode)
    case state(RunState, message: String?)
    case theme([ThemeSetting])
    /// `failure [TITLE]`: puts up the failure screen, new, with TITLE (empty:
    /// `FailureReport.defaultTitle`), and the bar in the failure state.
    case failure(title: String)
    /// `failure-summary TEXT`: the failure screen's summary line (empty clears it).
    case failureSummary(String)
    /// `failure-line TEXT`: one more detail line on the failure screen (the oldest go
    /// past `Limits.maxFailureLines` or `Limits.maxFailureBytes`).
    case failureLine(String)
    /// `failure-clear`: takes the failure screen down (back to the progress screen).
    case failureClear
    case reload
    case show
    case hide
    /// A display manager takes over (Plymouth's `deactivate`): stop drawing and release
    /// the display and the VT switching, but leave the console in graphics mode (no
    /// text flashes up before the display manager's first frame). Only `reactivate`
    /// draws again.
    case deactivate
    case reactivate
    /// The real root is mounted at `path` (an absolute directory): the daemon moves its
    /// root and working directory there, so its later file lookups happen in the real
    /// root (Plymouth's `update-root-fs --new-root-dir`). Root peers only.
    case newRoot(path: String)
    case ping
    case status
    case wait
    /// Waits for Enter or R on the keyboards (the failure screen's ways out): answered
    /// `ok enter` or `ok r` at the next press. Root and the daemon's own user only.
    case waitKey
    /// PNG of the current frame to an absolute path (root and the daemon's own user only).
    case snapshot(path: String)
    /// `snapshot -`: PNG of the current frame into the file whose descriptor came with the
    /// line (SCM_RIGHTS); the client opened it with its own rights.
    case snapshotToPassedFile
    /// Stops the daemon; `retain` leaves the last frame on the display.
    case quit(retain: Bool)

    /// The command words, in the order help texts list them.
    package static let commandWords = [
        "progress", "message", "title", "step", "describe", "jobs", "mode", "state", "theme",
        "failure", "failure-summary", "failure-line", "failure-clear", "reload", "show", "hide",
        "deactivate", "reactivate", "newroot", "ping", "status", "wait", "wait-key", "snapshot", "quit",
    ]

    /// A line break inside a message: U+2028 LINE SEPARATOR, which a line may hold (a
    /// newline ends the request). The screen shows a message of two lines; a third and
    /// further lines join the second.
    package static let lineBreak: Unicode.Scalar = "\u{2028}"

    /// Whether a step names one of Gauge's own systemd units (`gauged.service`,
    /// `gauged-poweroff.service`, `gauged-ask-password.path` ...): never shown.
    package static func isGaugeUnit(_ name: String) -> Bool {
        guard name == "gauged" || name.hasPrefix("gauged.") || name.hasPrefix("gauged-") else { return false }
        return [".service", ".path", ".socket", ".target"].contains { name.hasSuffix($0) }
    }

    /// The range a progress value must lie in.
    package static let progressRange: ClosedRange<Double> = 0...100

    package static func parse(_ line: String) -> Result<Request, ProtocolError> {
        if let error = controlCharacterError(in: line) { return .failure(error) }
        var parser = RequestParser(Array(line.utf8))
        do {
            return .success(try parser.request())
        } catch {
            return .failure(error)
        }
    }

    /// Reads a progress value: a plain decimal (`42`, `42.5`, `.5`) in 0...100.
    /// Not a number → `syntax`; a number outside the range → `range`.
    package static func parseProgressValue<S: StringProtocol>(_ word: S) -> Result<Double, ProtocolError> {
        guard let value = PlainDecimal.parse(word) else {
            return .failure(ProtocolError(.syntax, "progress value '\(Abbreviated(word))' is not a decimal number"))
        }
        guard progressRange.contains(value) else {
            return .failure(ProtocolError(.range, "progress value \(Abbreviated(word)) is outside 0...100"))
        }
        return .success(value)
    }

    /// The first character a line may not hold (C0 controls but tab, DEL, C1 controls),
    /// as a `syntax` error.
    package static func controlCharacterError<S: StringProtocol>(in text: S) -> ProtocolError? {
        for scalar in text.unicodeScalars where isForbiddenControl(scalar) {
            return ProtocolError(.syntax, "control character \(hexName(scalar)) in line")
        }
        return nil
    }

    /// Whether `scalar` may not appear in a line: C0 controls but tab, DEL, C1 controls.
    package static func isForbiddenControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09: return false
        case 0x00...0x1F, 0x7F...0x9F: return true
        default: return false
        }
    }

    private static func hexName(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// The request as its wire line, without the trailing newline.
    package var encoded: String {
        switch self {
        case .progress(let value, let message):
            let number = "progress " + PlainDecimal.format(value)
            return message.map { number + " " + $0 } ?? number
        case .message(let text):
            return text.isEmpty ? "message" : "message " + text
        case .title(let text):
            return "title " + text
        case .step(let name):
            return "step " + name
        case .describe(let unit, let text):
            return "describe " + unit + " " + text
        case .jobs(let value):
            return "jobs " + PlainDecimal.format(value)
        case .mode(let mode):
            return "mode " + mode.rawValue
        case .state(let state, let message):
            let head = "state " + state.rawValue
            return message.map { head + " " + $0 } ?? head
        case .theme(let settings):
            return (["theme"] + settings.map { $0.encoded }).joined(separator: " ")
        case .failure(let title): return title.isEmpty ? "failure" : "failure " + title
        case .failureSummary(let text): return "failure-summary " + text
        case .failureLine(let text): return "failure-line " + text
        case .failureClear: return "failure-clear"
        case .reload: return "reload"
        case .show: return "show"
        case .hide: return "hide"
        case .deactivate: return "deactivate"
        case .reactivate: return "reactivate"
        case .newRoot(let path): return "newroot " + path
        case .ping: return "ping"
        case .status: return "status"
        case .wait: return "wait"
        case .waitKey: return "wait-key"
        case .snapshot(let path): return "snapshot " + path
        case .snapshotToPassedFile: return "snapshot -"
        case .quit(let retain): return retain ? "quit retain" : "quit"
        }
    }
}

/// Reads one request line word by word (see `Request` for the grammar).
private struct RequestParser {
    private static let space = UInt8(ascii: " ")
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func request() throws(ProtocolError) -> Request {
        guard let command = nextWord() else {
            throw ProtocolError(.syntax, "empty line")
        }
        switch command {
        case "progress":
            guard let word = nextWord() else {
                throw ProtocolError(.syntax, "progress needs a value 0...100")
            }
            let value = try Request.parseProgressValue(word).get()
            return .progress(value, message: optionalText())
        case "message":
            return .message(optionalText() ?? "")
        case "title":
            guard let text = optionalText() else {
                throw ProtocolError(.syntax, "title needs a text")
            }
            return .title(text)
        case "step", "describe": return try step(command)
        case "jobs": return .jobs(try jobsShare())
        case "mode":
            let word = try keyword(of: "mode", expecting: DisplayMode.allCases.map { $0.rawValue })
            try end(of: "mode")
            return .mode(DisplayMode(rawValue: word)!)
        case "state":
            let word = try keyword(of: "state", expecting: RunState.allCases.map { $0.rawValue })
            return .state(RunState(rawValue: word)!, message: optionalText())
        case "theme":
            return .theme(try ThemeSetting.parseList(bytes[position...]).get())
        case "failure", "failure-summary", "failure-line", "failure-clear": return try failure(command)
        case "reload": try end(of: command); return .reload
        case "show": try end(of: command); return .show
        case "hide": try end(of: command); return .hide
        case "deactivate": try end(of: command); return .deactivate
        case "reactivate": try end(of: command); return .reactivate
        case "newroot": return .newRoot(path: try absolutePath(of: command))
        case "ping": try end(of: command); return .ping
        case "status": try end(of: command); return .status
        case "wait": try end(of: command); return .wait
        case "wait-key": try end(of: command); return .waitKey
        case "snapshot":
            while position < bytes.count, bytes[position] == Self.space { position += 1 }
            if bytes[position...].elementsEqual("-".utf8) { return .snapshotToPassedFile }
            return .snapshot(path: try absolutePath(of: command))
        case "quit":
            guard let word = nextWord() else { return .quit(retain: false) }
            guard word == "retain" else {
                throw ProtocolError(.syntax, "quit takes only 'retain', not '\(Abbreviated(word))'")
            }
            try end(of: command)
            return .quit(retain: true)
        default:
            throw ProtocolError(.unknown, "unknown command '\(Abbreviated(command))'\(Nearest.hint(for: command, in: Request.commandWords))")
        }
    }

    /// The failure screen's requests: `failure [TITLE]`, `failure-summary TEXT`,
    /// `failure-line TEXT` (an empty TEXT after the space is a blank line), `failure-clear`.
    private mutating func failure(_ command: String) throws(ProtocolError) -> Request {
        switch command {
        case "failure": return .failure(title: optionalText() ?? "")
        case "failure-clear":
            try end(of: command)
            return .failureClear
        default:
            guard let text = optionalText() else {
                throw ProtocolError(.syntax, "\(command) needs a text (empty after the space for none)")
            }
            return command == "failure-line" ? .failureLine(text) : .failureSummary(text)
        }
    }

    /// `step NAME` (the rest of the line) and `describe UNIT TEXT` (a word, then the rest).
    private mutating func step(_ command: String) throws(ProtocolError) -> Request {
        if command == "step" {
            guard let name = optionalText(), !name.isEmpty else { throw ProtocolError(.syntax, "step needs a name") }
            return .step(name)
        }
        guard let unit = nextWord(), let text = optionalText(), !text.isEmpty else {
            throw ProtocolError(.syntax, "describe needs a unit name and its description")
        }
        return .describe(unit: unit, text: text)
    }

    /// `jobs`' one argument: the share of jobs done, 0...100, and nothing after it.
    private mutating func jobsShare() throws(ProtocolError) -> Double {
        guard let word = nextWord() else {
            throw ProtocolError(.syntax, "jobs needs the share of jobs done, 0...100")
        }
        let value = try Request.parseProgressValue(word).get()
        try end(of: "jobs")
        return value
    }

    /// The rest of the line as an absolute path. An absolute path cannot start with a
    /// space, so any run of them separates it from the command.
    private mutating func absolutePath(of command: String) throws(ProtocolError) -> String {
        while position < bytes.count, bytes[position] == Self.space { position += 1 }
        let path = String(decoding: bytes[position...], as: UTF8.self)
        guard !path.isEmpty else {
            throw ProtocolError(.syntax, "\(command) needs an absolute path")
        }
        guard path.utf8.first == UInt8(ascii: "/") else {
            throw ProtocolError(.syntax, "\(command) path '\(Abbreviated(path))' is not absolute")
        }
        return path
    }

    /// Skips spaces and returns the next word, or nil at the end of the line.
    private mutating func nextWord() -> String? {
        while position < bytes.count, bytes[position] == Self.space { position += 1 }
        guard position < bytes.count else { return nil }
        let start = position
        while position < bytes.count, bytes[position] != Self.space { position += 1 }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    /// The rest of the line after the one space that ends the previous word, verbatim;
    /// nil when the line ends right after that word.
    private mutating func optionalText() -> String? {
        guard position < bytes.count else { return nil }
        position += 1  // the separating space
        defer { position = bytes.count }
        return String(decoding: bytes[position...], as: UTF8.self)
    }

    private mutating func keyword(of command: String, expecting choices: [String]) throws(ProtocolError) -> String {
        let list = choices.joined(separator: "|")
        guard let word = nextWord() else {
            throw ProtocolError(.syntax, "\(command) needs one of \(list)")
        }
        guard choices.contains(word) else {
            throw ProtocolError(.syntax, "\(command) must be one of \(list), not '\(Abbreviated(word))'")
        }
        return word
    }

    private mutating func end(of command: String) throws(ProtocolError) {
        if let extra = nextWord() {
            throw ProtocolError(.syntax, "unexpected '\(Abbreviated(extra))' after \(command)")
        }
    }
}
