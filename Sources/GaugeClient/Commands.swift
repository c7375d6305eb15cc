import CGaugeLinux
import GaugeProtocol
import GaugeSystem
import GaugeTranslators

/// An option of one command.
struct OptionSpec: Sendable {
    var name: String
    var alias: String?
    /// The placeholder of its value (`TEXT`); nil for a flag.
    var valueName: String?
    var help: String
}

/// How to show an `ok` reply.
enum ReplyOutput: Sendable {
    /// Print the payload, if any, as it came.
    case payload
    /// Print the status JSON as text, or verbatim with `json: true`.
    case status(json: Bool)
    /// Print the active theme (`theme` alone) as theme-file lines.
    case theme
}

/// `theme` alone's answer as a theme file: which file, then each setting over the defaults.
func themeText(_ payload: String) -> String? {
    guard let json = JSONValue.parse(payload), case .object(let members)? = json["settings"] else { return nil }
    var text = json["file"]?.stringValue.map { "# theme file \($0), then changes at run time; the rest as by default" }
        ?? "# no theme file: the defaults, with these changes at run time"
    for member in members {
        text += "\n\(member.key) = \(member.value.stringValue ?? "")"
    }
    return text
}

/// The line to send and how to show its reply.
struct OutgoingRequest: Sendable {
    var line: String
    var output: ReplyOutput = .payload
    /// After an `ok`, wait (within the timeout) until the daemon closes the connection:
    /// `quit` returns once the daemon has given the console back and gone.
    var awaitsClose = false
    /// Succeed only when no daemon answers (`ping --absent`): exit 0 for no daemon, 1
    /// for any reply.
    var succeedsWhenAbsent = false
    /// Whether to wait for a daemon that is not listening yet; nil follows `--no-wait`.
    var waitsForDaemon: Bool? = nil
    /// A file gaugectl opens for writing, as the user running it, and passes with the
    /// line (`snapshot -`): the daemon writes into it and never opens the path itself.
    var fileToPass: String? = nil
}

/// One `gaugectl` command: its name, help and how it becomes a request line.
struct CommandSpec: Sendable {
    var name: String
    /// What follows the name in the usage line: `N [--message TEXT]`.
    var argumentsSynopsis: String
    var summary: String
    var details: String = ""
    var options: [OptionSpec] = []
    var positionals: ClosedRange<Int> = 0...0
    /// Whether every argument after the name is taken as is (`send`).
    var takesRawArguments = false
    /// Whether `--` ends the options with a command to run (`bootc`, `gauge`).
    var runsCommand = false
    /// For a command that is more than one request (`gauge`, `swupdate`): what to do.
    var makeAction: (@Sendable (CommandArguments) throws(UsageError) -> Invocation.Action)? = nil
    var makeRequest: @Sendable (CommandArguments) throws(UsageError) -> OutgoingRequest

    var usage: String {
        argumentsSynopsis.isEmpty ? name : name + " " + argumentsSynopsis
    }

    func build(_ arguments: CommandArguments) throws(UsageError) -> OutgoingRequest {
        try namingCommand { () throws(UsageError) in try makeRequest(arguments) }
    }

    /// What the command line asks for: the command's own action, or its one request.
    func action(_ arguments: CommandArguments) throws(UsageError) -> Invocation.Action {
        guard let makeAction else { return .send(try build(arguments)) }
        return try namingCommand { () throws(UsageError) in try makeAction(arguments) }
    }

    /// `body`'s result; a usage error that names no command is given this one.
    private func namingCommand<T>(_ body: () throws(UsageError) -> T) throws(UsageError) -> T {
        do {
            return try body()
        } catch {
            var error = error
            error.command = error.command ?? self
            throw error
        }
    }

    static func named(_ word: String) throws(UsageError) -> CommandSpec {
        guard let command = all.first(where: { $0.name == word }) else {
            throw UsageError("unknown command '\(word)'\(Nearest.hint(for: word, in: all.map { $0.name }))")
        }
        return command
    }

    static let all: [CommandSpec] = [
        CommandSpec(
            name: "progress", argumentsSynopsis: "N [--message TEXT]",
            summary: "Move the bar to N percent (0-100, decimals allowed)",
            details: "The bar eases from the value it shows to N; with --message the message line changes too.",
            options: [OptionSpec(name: "--message", alias: "-m", valueName: "TEXT", help: "Also set the message line")],
            positionals: 1...1,
            makeRequest: { arguments throws(UsageError) in
                let value: Double
                switch Request.parseProgressValue(arguments.positionals[0]) {
                case .success(let number): value = number
                case .failure(let error): throw UsageError(error.message)
                }
                return try validated(.progress(value, message: arguments.values["--message"].map(lineBreaks)))
            }),
        CommandSpec(
            name: "message", argumentsSynopsis: "[TEXT...]",
            summary: "Set the message line (no text clears it)",
            details: "Several words are joined with single spaces; a newline or \\n in TEXT breaks the line (two lines show), as in dialog's text.",
            positionals: 0...Int.max,
            makeRequest: { arguments throws(UsageError) in
                try validated(.message(lineBreaks(text(arguments))))
            }),
        CommandSpec(
            name: "title", argumentsSynopsis: "TEXT...",
            summary: "Set the title (an empty TEXT clears it)",
            details: "Several words are joined with single spaces.",
            positionals: 1...Int.max,
            makeRequest: { arguments throws(UsageError) in
                try validated(.title(text(arguments)))
            }),
        CommandSpec(
            name: "mode", argumentsSynopsis: "determinate|indeterminate",
            summary: "Show a known fraction, or animate work of unknown length",
            positionals: 1...1,
            makeRequest: { arguments throws(UsageError) in
                guard let mode = DisplayMode(rawValue: arguments.positionals[0]) else {
                    throw UsageError("mode must be determinate or indeterminate, not '\(arguments.positionals[0])'")
                }
                return try validated(.mode(mode))
            }),
        stateCommand(.success, summary: "Show that the work succeeded, with an optional final message"),
        stateCommand(.running, summary: "Go back to the running state, with an optional message"),
        theme,
        simpleCommand("reload", .reload, summary: "Re-read the theme file"),
        simpleCommand("show", .show, summary: "Take the display and show the screen"),
        simpleCommand("hide", .hide, summary: "Release the display (the daemon keeps running)"),
        simpleCommand(
            "deactivate", .deactivate, summary: "Hand the display to a display manager (stop drawing, keep running)",
            details: """
                As Plymouth's deactivate: the daemon stops drawing, drops DRM master and VT
                switching, and leaves the console in graphics mode so no text shows before the
                display manager's first frame. Only 'reactivate' draws again ('show' does not).
                """),
        simpleCommand("reactivate", .reactivate, summary: "Take the display back after deactivate"),
        CommandSpec(
            name: "newroot", argumentsSynopsis: "DIR",
            summary: "Tell the daemon the real root is mounted at DIR (root only)",
            details: """
                The daemon moves its root and working directory to DIR, so theme reloads and
                other file lookups happen in the real root after switch_root (Plymouth's
                update-root-fs --new-root-dir). The initramfs scripts send it.
                """,
            positionals: 1...1,
            makeRequest: { arguments throws(UsageError) in
                try validated(.newRoot(path: try absolutePath(arguments.positionals[0])))
            }),
        CommandSpec(
            name: "status", argumentsSynopsis: "[--json]",
            summary: "Print the daemon's state",
            options: [OptionSpec(name: "--json", valueName: nil, help: "Print the one-line JSON as the daemon sent it")],
            makeRequest: { arguments throws(UsageError) in
                OutgoingRequest(line: Request.status.encoded, output: .status(json: arguments.flags.contains("--json")))
            }),
        CommandSpec(
            name: "ping", argumentsSynopsis: "[--absent]",
            summary: "Check that the daemon answers",
            details: """
                Like every request, waits for a daemon that is starting (see wait-ready).
                With --absent the question is about this moment and the outcome is turned
                around: exit 0 at once when nothing listens on the socket (no waiting), or when
                a daemon listening does not answer within the timeout; 1 when one answers.
                For a unit's ExecCondition=, which skips the unit on 1: start a daemon only
                where none runs, without delaying a boot that has none. Nothing is ever
                started by a ping.
                """,
            options: [OptionSpec(name: "--absent", valueName: nil, help: "Exit 0 only when no daemon answers now")],
            makeRequest: { arguments throws(UsageError) in
                var request = try validated(.ping)
                if arguments.flags.contains("--absent") {
                    request.succeedsWhenAbsent = true
                    request.waitsForDaemon = false
                }
                return request
            }),
        CommandSpec(
            name: "wait-ready", argumentsSynopsis: "",
            summary: "Return once a daemon answers on the socket (waiting up to --timeout)",
            details: """
                For scripts that start gauged and want the wait as a step of its own:
                gauged ... & gaugectl wait-ready. Every other request waits the same way
                unless --no-wait is given; wait-ready waits even then. Exit 3 once the
                timeout has passed with no daemon answering.
                """,
            makeRequest: { _ throws(UsageError) in
                var request = try validated(.ping)
                request.waitsForDaemon = true
                return request
            }),
        simpleCommand(
            "wait", .wait, summary: "Return once the bar shows its target and nothing moves",
            details: "Uses the --timeout like every call; --timeout 0 waits without limit. In indeterminate mode there is no value to wait for: an error at once."),
        simpleCommand(
            "wait-key", .waitKey, summary: "Wait for Enter or R on the keyboards and print which (enter, r)",
            details: "The failure screen's ways out (root only). Uses the --timeout like every call; --timeout 0 waits without limit."),
        CommandSpec(
            name: "snapshot", argumentsSynopsis: "FILE",
            summary: "Write the current frame to FILE as PNG",
            details: "gaugectl opens FILE with your rights and passes it to the daemon, which writes the PNG into it.",
            positionals: 1...1,
            makeRequest: { arguments throws(UsageError) in
                let path = arguments.positionals[0]
                guard !path.isEmpty else { throw UsageError("snapshot needs a file name") }
                return OutgoingRequest(line: Request.snapshotToPassedFile.encoded, fileToPass: path)
            }),
        CommandSpec(
            name: "quit", argumentsSynopsis: "[--retain]",
            summary: "Stop the daemon",
            details: "Returns once the daemon has given the display back and gone (within the --timeout).",
            options: [OptionSpec(name: "--retain", valueName: nil, help: "Leave the last frame on the display")],
            makeRequest: { arguments throws(UsageError) in
                var request = try validated(.quit(retain: arguments.flags.contains("--retain")))
                request.awaitsClose = true
                return request
            }),
        CommandSpec(
            name: "send", argumentsSynopsis: "RAW-LINE...",
            summary: "Send a protocol line as is and print the reply payload",
            details: "Words are joined with single spaces; the line is not checked, so the daemon's own errors show.",
            positionals: 1...Int.max,
            takesRawArguments: true,
            makeRequest: { arguments throws(UsageError) in
                let line = arguments.positionals.joined(separator: " ")
                guard !line.utf8.contains(UInt8(ascii: "\n")) else {
                    throw UsageError("a line cannot contain a newline (one request per call)")
                }
                return OutgoingRequest(line: line)
            }),
        gauge,
        swupdate,
        consoleReset,
        copyFont,
        failure,
        help,
    ] + sourceCommands

    /// The commands that follow an update tool's own progress reports and drive the bar
    /// (`HonestBar`) with them.
    static let sourceCommands: [CommandSpec] = [bootc, apt, run, systemd, rauc, fwupd, PackageKitCommand.spec]

    static func simpleCommand(
        _ name: String, _ request: Request, summary: String, details: String = ""
    ) -> CommandSpec {
        CommandSpec(
            name: name, argumentsSynopsis: "", summary: summary, details: details,
            makeRequest: { _ throws(UsageError) in try validated(request) })
    }

    static func stateCommand(_ state: RunState, summary: String) -> CommandSpec {
        CommandSpec(
            name: state.rawValue, argumentsSynopsis: "[TEXT...]", summary: summary,
            details: "Sends 'state \(state.rawValue) [TEXT]'; several words are joined with single spaces, a newline breaks the line.",
            positionals: 0...Int.max,
            makeRequest: { arguments throws(UsageError) in
                try validated(.state(state, message: arguments.positionals.isEmpty ? nil : lineBreaks(text(arguments))))
            })
    }
}

/// The positionals joined with single spaces.
func text(_ arguments: CommandArguments) -> String {
    arguments.positionals.joined(separator: " ")
}

/// `text` with each newline (or CR LF), and each `\n` written out as dialog's text has it,
/// as the protocol's line break: one rule for every message gaugectl sends (`message`,
/// `--message`, `success`/`failure` texts and `gauge`'s stream alike). `\\n` keeps a
/// backslash and an n.
func lineBreaks(_ text: String) -> String {
    let scalars = Array(text.unicodeScalars)
    var out = String.UnicodeScalarView()
    var i = 0
    while i < scalars.count {
        let next = i + 1 < scalars.count ? scalars[i + 1] : nil
        switch scalars[i] {
        case "\r" where next == "\n":
            break
        case "\n":
            out.append(Request.lineBreak)
        case "\\" where next == "\\" && i + 2 < scalars.count && scalars[i + 2] == "n":
            out.append(contentsOf: ["\\", "n"])
            i += 2
        case "\\" where next == "n":
            out.append(Request.lineBreak)
            i += 1
        default:
            out.append(scalars[i])
        }
        i += 1
    }
    return String(out)
}

/// The request's line, after checking that the daemon would accept it (so a newline in
/// a message or a bad theme key is a usage error here, not a broken request there).
func validated(_ request: Request) throws(UsageError) -> OutgoingRequest {
    let line = request.encoded
    if let control = line.unicodeScalars.first(where: Request.isForbiddenControl) {
        let hex = String(control.value, radix: 16, uppercase: true)
        let name = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        throw UsageError("arguments cannot contain control characters such as newlines (found \(name))")
    }
    if case .failure(let error) = Request.parse(line) {
        throw UsageError(error.message)
    }
    return OutgoingRequest(line: line)
}

/// A theme value naming files (one, or a comma-separated list) with each relative path
/// made absolute against this directory: the daemon's is not the caller's.
func absolutePaths(_ value: String, list: Bool) throws(UsageError) -> String {
    guard !value.isEmpty else { return value }
    guard list else { return try absolutePath(value) }
    var paths: [String] = []
    for part in value.split(separator: ",") {
        let trimmed = String(String(part).drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
        paths.append(trimmed.isEmpty ? trimmed : try absolutePath(trimmed))
    }
    return paths.joined(separator: ", ")
}

/// `path` made absolute against the current directory.
func absolutePath(_ path: String) throws(UsageError) -> String {
    if path.hasPrefix("/") { return path }
    guard var directory = try? Syscall.currentDirectory() else {
        throw UsageError("cannot read the current directory; give an absolute path")
    }
    var relative = Substring(path)
    while relative.hasPrefix("./") {
        relative = relative.dropFirst(2).drop { $0 == "/" }
    }
    if relative == "." { relative = "" }
    if !directory.hasSuffix("/") { directory += "/" }
    return directory + relative
}

/// A message given on the command line, checked as the daemon would check it.
func oneLine(_ text: String) throws(UsageError) -> String {
    guard case .success = Request.parse(Request.message(text).encoded) else {
        throw UsageError("a message cannot contain control characters such as newlines")
    }
    return text
}
