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
        CommandSpec(
            name: "theme", argumentsSynopsis: "[KEY=VALUE...] | --list | [--set NAME] [--rebuild-initramfs]",
            summary: "Change theme keys at run time; alone, print the theme in use; choose the installed theme",
            details: """
                Without KEY=VALUE, prints the theme in use: its file and every setting over the
                defaults (the file's, then run-time changes), as theme-file lines. A relative
                path (logo, logo_fallback, font, bold_font, fallback_fonts) is taken from this
                directory; logo=firmware is the firmware's logo where it drew it (ACPI BGRT);
                font and bold_font may name a family instead: 'font=DejaVu Sans:Bold'.
                Example: gaugectl theme fill_color=#ff8800 font=/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf
                The installed theme, with no daemon involved (as plymouth-set-default-theme):
                --list lists the themes in /usr/share/gauge/themes (env GAUGE_THEMES), the one
                chosen marked '*'; --set NAME makes /etc/gauge/gauge.theme (env GAUGE_THEME)
                name it on its base line, keeping its other lines, whose keys apply over it;
                --rebuild-initramfs then runs update-initramfs -u (or dracut -f where dracut
                builds it), so the next boot shows it, and exits 1 if that fails.
                Example: sudo gaugectl theme --set box --rebuild-initramfs
                """,
            options: [
                OptionSpec(name: "--list", alias: "-l", valueName: nil, help: "List the installed themes, the chosen one marked '*'"),
                OptionSpec(name: "--set", valueName: "NAME", help: "Choose the theme NAME in /etc/gauge/gauge.theme"),
                OptionSpec(
                    name: "--rebuild-initramfs", alias: "-R", valueName: nil,
                    help: "Rebuild the initramfs (update-initramfs -u, or dracut -f) so the boot shows the theme"),
            ],
            positionals: 0...Int.max,
            makeAction: { arguments throws(UsageError) in
                let choice = ThemeChoice.Request(
                    list: arguments.flags.contains("--list"), set: arguments.values["--set"],
                    rebuildInitramfs: arguments.flags.contains("--rebuild-initramfs"))
                guard choice.list || choice.set != nil || choice.rebuildInitramfs else { return .send(try themeRequest(arguments)) }
                guard arguments.positionals.isEmpty else {
                    throw UsageError("KEY=VALUE changes the daemon's theme, --list, --set and --rebuild-initramfs the installed one: not both")
                }
                if choice.list, choice.set != nil || choice.rebuildInitramfs { throw UsageError("--list goes alone") }
                if let name = choice.set, !ThemeBase.isName(name) {
                    throw UsageError("--set needs a theme's name (letters, digits, _ and -), not '\(name)'")
                }
                return .run { _ in ThemeChoice.run(choice) }
            },
            makeRequest: themeRequest),
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
        CommandSpec(
            name: "gauge", argumentsSynopsis: "[--title TEXT] [--message TEXT] [--on-eof success|quit|keep] [-- CMD...]",
            summary: "Read a dialog/whiptail --gauge stream from stdin (or COMMAND) and show it",
            details: """
                A number per line moves the bar; XXX, a number, text lines, XXX sets the number
                and the message (dialog's format; \\n in the text is a line break, and two
                lines show). Runs until EOF, then does what --on-eof says: success (the
                default) fills the bar and shows the success mark, as the work is done when
                dialog's gauge closes; quit stops the daemon (returning once it has given the
                display back); keep leaves the screen as the stream left it (more phases to
                come). One connection; an err reply is reported and reading goes on; a lost
                daemon is reported, its updates dropped and reconnection tried each second
                (a new daemon gets the title and message again), and stdin is always read to
                EOF, so the writer never gets SIGPIPE. Exit status: 0 all ok, 1 an err reply,
                3 an update not delivered.

                With -- COMMAND [ARG...], gaugectl runs COMMAND and reads what it writes to its
                standard output instead of stdin; when the stream ends COMMAND's exit status
                decides: 0 does what --on-eof says, anything else (or a COMMAND that cannot be
                started) shows failure naming it, and gaugectl exits with COMMAND's status
                (127 not found, 128+N killed by signal N), which a pipeline's first command
                cannot give. Example:
                  gaugectl gauge --title Installing -- ./install.sh
                """,
            options: [
                OptionSpec(name: "--title", alias: "-t", valueName: "TEXT", help: "Set the title first"),
                OptionSpec(name: "--message", alias: "-m", valueName: "TEXT", help: "Set the message first"),
                OptionSpec(name: "--on-eof", valueName: "success|quit|keep", help: "What to do at the end of the stream (default success)"),
                BarRange.option,
            ],
            runsCommand: true,
            makeAction: { arguments throws(UsageError) in
                var first: [Request] = []
                if let title = arguments.values["--title"] { first.append(.title(title)) }
                if let message = arguments.values["--message"] { first.append(.message(lineBreaks(message))) }
                for request in first { _ = try validated(request) }
                let word = arguments.values["--on-eof"] ?? GaugeCommand.EndOfStream.success.rawValue
                guard let atEnd = GaugeCommand.EndOfStream(rawValue: word) else {
                    throw UsageError("--on-eof must be success, quit or keep, not '\(word)'")
                }
                return .gauge(first: first, atEnd: atEnd, command: arguments.command, range: try BarRange.parse(arguments))
            },
            makeRequest: { _ throws(UsageError) in throw UsageError("gauge is not one request") }),
        CommandSpec(
            name: "swupdate", argumentsSynopsis: "[--progress-socket PATH] [--layout auto|packed|aligned]",
            summary: "Show SWUpdate's progress (its progress socket) until killed",
            details: """
                Connects to SWUpdate's progress socket (progress API 2.x) and turns its messages
                into progress, message and success/failure states. When SWUpdate is not there
                or goes away, it tries again every second. --progress-socket is SWUpdate's;
                gauged's socket is --socket, before the command. --layout: how SWUpdate lays
                out progress_msg (aligned: up to 2025.05 on 64-bit/ARM; packed: later releases
                and 32-bit x86); auto tells them apart from the stream.
                """ + "\n" + ProgressTicks.swupdateDetails,
            options: [
                OptionSpec(
                    name: "--progress-socket", valueName: "PATH",
                    help: "SWUpdate's progress socket (default \(SWUpdateCommand.defaultSocketPath))"),
                OptionSpec(name: "--layout", valueName: "auto|packed|aligned", help: "The progress_msg layout (default auto)"),
            ] + ProgressTicks.options,
            makeAction: { arguments throws(UsageError) in
                let path = arguments.values["--progress-socket"] ?? SWUpdateCommand.defaultSocketPath
                guard !path.isEmpty else { throw UsageError("--progress-socket needs a path") }
                let layout: SWUpdateProgressMessage.Layout?
                switch arguments.values["--layout"] ?? "auto" {
                case "auto": layout = nil
                case let word:
                    guard let chosen = SWUpdateProgressMessage.Layout(rawValue: word) else {
                        throw UsageError("--layout must be auto, packed or aligned, not '\(word)'")
                    }
                    layout = chosen
                }
                return .swupdate(progressSocket: path, layout: layout, bar: try ProgressTicks.settings(arguments))
            },
            makeRequest: { _ throws(UsageError) in throw UsageError("swupdate is not one request") }),
        CommandSpec(
            name: "console-reset", argumentsSynopsis: "[--tty PATH] [--pid-file PATH|none]",
            summary: "Give the text console back after gauged died uncleanly",
            details: """
                Gives the console sane line settings (as stty sane: line editing, echo, signals)
                and, on a VT, text mode (KD_TEXT) and automatic VT switching, as gauged does on
                every exit it sees. For the one it cannot see (SIGKILL, a crash): gauged.service
                runs it after the daemon stops. It also removes Plymouth's pid file
                when it names no running gauged or plymouthd, so systemd's console password agent
                asks on the console again. Talks to the console, not to gauged; exit 1 when the
                console cannot be reset (a pty or serial line has no console mode: only its line
                settings are reset).
                """,
            options: [
                OptionSpec(name: "--tty", valueName: "PATH", help: "The console (default /dev/tty0, the active VT)"),
                OptionSpec(
                    name: "--pid-file", valueName: "PATH",
                    help: "The pid file gauged --ask creates (default /run/plymouth/pid; none leaves it alone)"),
            ],
            makeAction: { arguments throws(UsageError) in
                let tty = arguments.values["--tty"] ?? "/dev/tty0"
                guard !tty.isEmpty else { throw UsageError("--tty needs a path") }
                let pidFile = arguments.values["--pid-file"] ?? "/run/plymouth/pid"
                guard pidFile.hasPrefix("/") || pidFile == "none" else {
                    throw UsageError("--pid-file takes an absolute path or none")
                }
                return .consoleReset(tty: tty, pidFile: pidFile == "none" ? nil : pidFile)
            },
            makeRequest: { _ throws(UsageError) in throw UsageError("console-reset is not a request") }),
        CommandSpec(
            name: "failure", argumentsSynopsis: "[--title TITLE] [--details FILE|-] [SUMMARY...]",
            summary: "Put up the failure screen: what failed, in words, with the details",
            details: """
                Shows a box above the bar saying what failed: TITLE (default "\(FailureReport.defaultTitle)"),
                SUMMARY (several words are joined with single spaces), and the lines of FILE
                (- for stdin), read to their end first: the newest that fit show, and the box
                says how many older ones do not. Bytes that are not UTF-8 show as U+FFFD, escape
                sequences and control characters are left out, a tab becomes spaces, a carriage
                return starts its line over, and each line is cut at \(Limits.maxFailureTextBytes) bytes; gauged keeps the newest \(Limits.maxFailureLines)
                lines. The bar takes the failure state. 'gaugectl send failure-clear' takes
                the screen down again.
                """,
            options: [
                OptionSpec(name: "--title", alias: "-t", valueName: "TITLE", help: "The box's title"),
                OptionSpec(name: "--details", alias: "-d", valueName: "FILE|-", help: "Detail lines from FILE, or stdin for -"),
            ],
            positionals: 0...Int.max,
            makeAction: { arguments throws(UsageError) in
                let details = arguments.values["--details"]
                if details?.isEmpty == true { throw UsageError("--details needs a file, or - for stdin") }
                let settings = FailureCommand.Settings(
                    title: arguments.values["--title"] ?? "", summary: arguments.positionals.isEmpty ? nil : text(arguments),
                    details: details)
                return .run { FailureCommand.run(settings, $0) }
            },
            makeRequest: { _ throws(UsageError) in throw UsageError("failure is more than one request") }),
        CommandSpec(
            name: "help", argumentsSynopsis: "[COMMAND]",
            summary: "Show help for gaugectl or one command",
            positionals: 0...1,
            makeRequest: { _ throws(UsageError) in throw UsageError("help is not a request") }),
    ] + sourceCommands

    private static func simpleCommand(
        _ name: String, _ request: Request, summary: String, details: String = ""
    ) -> CommandSpec {
        CommandSpec(
            name: name, argumentsSynopsis: "", summary: summary, details: details,
            makeRequest: { _ throws(UsageError) in try validated(request) })
    }

    private static func stateCommand(_ state: RunState, summary: String) -> CommandSpec {
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
private func text(_ arguments: CommandArguments) -> String {
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
private func validated(_ request: Request) throws(UsageError) -> OutgoingRequest {
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

/// `theme` with KEY=VALUE settings, or alone (the theme in use): the daemon's request.
@Sendable private func themeRequest(_ arguments: CommandArguments) throws(UsageError) -> OutgoingRequest {
    if arguments.positionals.isEmpty { return OutgoingRequest(line: "theme", output: .theme) }
    var settings: [ThemeSetting] = []
    for argument in arguments.positionals {
        guard let equals = argument.firstIndex(of: "=") else {
            throw UsageError("theme expects KEY=VALUE, not '\(argument)'")
        }
        let key = String(argument[..<equals])
        guard ThemeSetting.isValidKey(key) else {
            throw UsageError("bad theme key '\(key)' (letters, digits, _ - . only)")
        }
        var value = String(argument[argument.index(after: equals)...])
        let named = (key == "logo" && value == ThemeSetting.firmwareLogo)
            || ((key == "font" || key == "bold_font") && ThemeSetting.isFontFamily(value))
        if ThemeSetting.fileKeys.contains(key), !named { value = try absolutePaths(value, list: key == "fallback_fonts") }
        settings.append(ThemeSetting(key: key, value: value))
    }
    return try validated(.theme(settings))
}

/// A theme value naming files (one, or a comma-separated list) with each relative path
/// made absolute against this directory: the daemon's is not the caller's.
private func absolutePaths(_ value: String, list: Bool) throws(UsageError) -> String {
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
private func absolutePath(_ path: String) throws(UsageError) -> String {
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
