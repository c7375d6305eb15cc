import GaugeProtocol
import GaugeTranslators

/// What one `gaugectl` command line asks for, after parsing and validation.
struct Invocation {
    enum Action {
        /// Help for one command, or for `gaugectl` when nil.
        case help(CommandSpec?)
        case version
        /// Send `request.line` and show the reply as `request.output` says.
        case send(OutgoingRequest)
        /// Send `first`, then read a dialog --gauge stream from stdin; `atEnd` at its end;
        /// its values drawn in `range` of the bar.
        case gauge(first: [Request], atEnd: GaugeCommand.EndOfStream, command: [String]?, range: BarRange?)
        /// Follow SWUpdate's progress socket.
        case swupdate(progressSocket: String, layout: SWUpdateProgressMessage.Layout?, bar: HonestBar.Settings)
        /// A command that runs on its own (the tools' progress sources): it gets the
        /// parsed global options and ends the process.
        case run((Invocation) -> Never)
        /// Put a console left in graphics mode back in text mode, and remove a pid file a
        /// dead daemon left (no daemon involved).
        case consoleReset(tty: String, pidFile: String?)
    }

    var socketPath: String
    /// Seconds the whole call may take; nil means no limit (`--timeout 0`).
    var timeout: Double?
    /// Whether a daemon that is not listening yet is waited for, within the timeout
    /// (the default), or reported at once (`--no-wait`).
    var waitsForDaemon = true
    var action: Action
}

/// A command line `gaugectl` cannot make sense of; exit status 2.
struct UsageError: Error {
    var message: String
    /// The command the mistake is in, for the "try ... --help" hint.
    var command: CommandSpec?

    init(_ message: String, command: CommandSpec? = nil) {
        self.message = message
        self.command = command
    }
}

/// The arguments after a command word, split into options and positionals.
struct CommandArguments {
    var positionals: [String] = []
    /// Values of options that take one, by the option's long name (`--message`).
    var values: [String: String] = [:]
    /// Options without a value that were given, by long name (`--json`).
    var flags: Set<String> = []
    /// What follows `--` for a command that runs one (`bootc -- COMMAND ARGS`); nil: none.
    var command: [String]?
}

/// The command-line parser: `gaugectl [GLOBAL OPTIONS] COMMAND [ARGUMENTS]`.
///
/// Global options (`--socket`, `--timeout`, `--no-wait`, `--help`, `--version`) come before the
/// command; each command has its own options and `--help`. `--name=value` and
/// `--name value` both work; `--` ends the options; a word that looks like a negative
/// number (`-1`, `-.5`) is an argument, not an option.
enum ArgumentParser {
    static let defaultSocketPath = "/run/gauge/gauged.sock"
    static let defaultTimeout = 5.0

    static func parse(_ arguments: [String], environment: (String) -> String?) throws(UsageError) -> Invocation {
        var socketPath: String?
        var timeout: Double? = defaultTimeout
        var waitsForDaemon = true
        var index = 0

        func value(for name: String, inline: String?) throws(UsageError) -> String {
            if let inline { return inline }
            index += 1
            guard index < arguments.count else { throw UsageError("\(name) needs a value") }
            return arguments[index]
        }

        func resolvedSocket() -> String {
            if let socketPath { return socketPath }
            if let fromEnvironment = environment("GAUGE_SOCKET"), !fromEnvironment.isEmpty {
                return fromEnvironment
            }
            return defaultSocketPath
        }

        while index < arguments.count {
            let argument = arguments[index]
            let (name, inline) = splitOption(argument)
            switch name {
            case "-h", "--help":
                return Invocation(socketPath: resolvedSocket(), timeout: timeout, action: .help(nil))
            case "--version":
                return Invocation(socketPath: resolvedSocket(), timeout: timeout, action: .version)
            case "--socket":
                let path = try value(for: name, inline: inline)
                guard !path.isEmpty else { throw UsageError("--socket needs a path") }
                socketPath = path
            case "--timeout":
                timeout = try parseTimeout(try value(for: name, inline: inline))
            case "--no-wait":
                guard inline == nil else { throw UsageError("--no-wait takes no value") }
                waitsForDaemon = false
            default:
                if argument.hasPrefix("-"), argument != "-" {
                    throw UsageError("unknown option '\(argument)'")
                }
                let action = try commandAction(argument, Array(arguments[(index + 1)...]))
                return Invocation(
                    socketPath: resolvedSocket(), timeout: timeout, waitsForDaemon: waitsForDaemon, action: action)
            }
            index += 1
        }
        throw UsageError("no command given")
    }

    /// What the command `name` with the arguments after it asks for (its help with
    /// `--help`, or `help COMMAND`).
    private static func commandAction(_ name: String, _ rest: [String]) throws(UsageError) -> Invocation.Action {
        let command = try CommandSpec.named(name)
        if command.name == "help" { return .help(try helpTopic(rest)) }
        guard let parsed = try commandArguments(rest, for: command) else { return .help(command) }
        return try command.action(parsed)
    }

    /// `--timeout` value: decimal seconds ≥ 0; 0 means no limit.
    static func parseTimeout(_ text: String) throws(UsageError) -> Double? {
        guard let seconds = PlainDecimal.parse(text), seconds.isFinite, seconds >= 0 else {
            throw UsageError("--timeout needs a number of seconds ≥ 0, not '\(text)'")
        }
        guard seconds <= 31_536_000 else {
            throw UsageError("--timeout of more than a year; use 0 for no limit")
        }
        return seconds == 0 ? nil : seconds
    }

    /// `--name=value` → ("--name", "value"); anything else → (argument, nil).
    private static func splitOption(_ argument: String) -> (String, String?) {
        guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else {
            return (argument, nil)
        }
        return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
    }

    /// `-5` or `-.5` is a value (a negative number), not an option.
    private static func looksLikeNegativeNumber(_ argument: String) -> Bool {
        argument.hasPrefix("-") && PlainDecimal.parse(argument) != nil
    }

    private static func helpTopic(_ rest: [String]) throws(UsageError) -> CommandSpec? {
        guard let word = rest.first else { return nil }
        if word == "-h" || word == "--help" { return try CommandSpec.named("help") }
        guard rest.count == 1 else { throw UsageError("help takes at most one command name") }
        return try CommandSpec.named(word)
    }

    /// The command's options and positionals; nil when `--help` / `-h` asks for its help.
    private static func commandArguments(_ rest: [String], for command: CommandSpec) throws(UsageError) -> CommandArguments? {
        var parsed = CommandArguments()
        if command.takesRawArguments {
            // `send`: everything is the line, except a leading --help or --.
            if let first = rest.first, first == "--help" || first == "-h" { return nil }
            parsed.positionals = rest.first == "--" ? Array(rest.dropFirst()) : rest
            try checkCount(parsed, for: command)
            return parsed
        }
        var wantsHelp = false
        var index = 0
        var optionsEnded = false
        while index < rest.count {
            let argument = rest[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" || looksLikeNegativeNumber(argument) {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" {
                if command.runsCommand {
                    guard index < rest.count else { throw UsageError("-- needs a command to run", command: command) }
                    parsed.command = Array(rest[index...])
                    break
                }
                optionsEnded = true
                continue
            }
            let (name, inline) = splitOption(argument)
            if name == "-h" || name == "--help" {
                wantsHelp = true
                continue
            }
            let option = try commandOption(name, argument, of: command)
            if option.valueName != nil {
                if let inline {
                    parsed.values[option.name] = inline
                } else {
                    guard index < rest.count else {
                        throw UsageError("\(option.name) needs a value", command: command)
                    }
                    parsed.values[option.name] = rest[index]
                    index += 1
                }
            } else {
                guard inline == nil else {
                    throw UsageError("\(option.name) takes no value", command: command)
                }
                parsed.flags.insert(option.name)
            }
        }
        if wantsHelp { return nil }
        try checkCount(parsed, for: command)
        return parsed
    }

    /// The command's option `name` (from `argument`), or why there is none: a global
    /// option given after the command, or an unknown one.
    private static func commandOption(_ name: String, _ argument: String, of command: CommandSpec) throws(UsageError) -> OptionSpec {
        if let option = command.options.first(where: { $0.name == name || $0.alias == name }) { return option }
        if ["--socket", "--timeout", "--no-wait", "--version"].contains(name) {
            let swupdate = name == "--socket" && command.name == "swupdate"
                ? " (SWUpdate's progress socket is --progress-socket)" : ""
            throw UsageError("\(name) must come before the command\(swupdate)", command: command)
        }
        throw UsageError(
            "unknown option '\(argument)' for \(command.name) (use -- before text that starts with '-')",
            command: command)
    }

    private static func checkCount(_ parsed: CommandArguments, for command: CommandSpec) throws(UsageError) {
        if parsed.positionals.count < command.positionals.lowerBound {
            throw UsageError("\(command.name) needs \(command.argumentsSynopsis)", command: command)
        }
        if parsed.positionals.count > command.positionals.upperBound {
            let extra = parsed.positionals[command.positionals.upperBound]
            throw UsageError("unexpected argument '\(extra)' for \(command.name)", command: command)
        }
    }
}
