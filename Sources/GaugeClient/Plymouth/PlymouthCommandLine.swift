import GaugeProtocol

/// One thing `plymouth ARGS` asks the daemon, in the order given.
enum PlymouthAction: Equatable {
    case ping
    case hasActiveVT
    case sysinit
    case showSplash
    case hideSplash
    case quit(retainSplash: Bool)
    case deactivate
    case reactivate
    case update(status: String)
    case changeMode(String)
    case systemUpdate(progress: Int)
    case newRoot(String)
    case displayMessage(String)
    case hideMessage(String)
    case askForPassword(prompt: String?, command: String?, tries: Int, pausesProgress: Bool)
    case askQuestion(prompt: String?, command: String?, pausesProgress: Bool)
    case watchKeystroke(keys: String?, command: String?)
    case ignoreKeystroke(keys: String?)
    case pauseProgress
    case unpauseProgress
    case reportError
}

/// A `plymouth` command line, parsed as Plymouth's client parses it.
struct PlymouthInvocation: Equatable {
    enum Help: Equatable {
        /// `--help`: the usage on standard output, exit 0.
        case requested
        /// No arguments at all: the usage on standard error, exit 0.
        case noArguments
    }

    var help: Help?
    /// `--wait`: once the actions are done, wait until the daemon has gone (at once, 0,
    /// when none runs).
    var waits = false
    var actions: [PlymouthAction] = []
}

/// Plymouth's client command line: global options first (`--ping`, `--wait`, `--quit`,
/// `--show-splash`, `--update=STATUS`, `--newroot=DIR`, ...), then commands, each with its
/// own options (`ask-for-password --prompt=P`, `quit --retain-splash`, ...). An option's
/// value follows `=` or comes as the next argument. Anything it does not know is an error:
/// Plymouth prints its usage on standard error and exits 1.
enum PlymouthCommandLine {
    enum Kind {
        case flag, string, integer
    }

    struct Command {
        var name: String
        var summary: String
        var options: [(name: String, kind: Kind, summary: String)]
    }

    static let globalOptions: [(name: String, kind: Kind, summary: String)] = [
        ("help", .flag, "This help message"),
        ("debug", .flag, "Enable verbose debug logging"),
        ("get-splash-plugin-path", .flag, "Get directory where splash plugins are installed"),
        ("newroot", .string, "Tell boot daemon that new root filesystem is mounted"),
        ("quit", .flag, "Tell boot daemon to quit"),
        ("ping", .flag, "Check of boot daemon is running"),
        ("has-active-vt", .flag, "Check if boot daemon has an active vt"),
        ("sysinit", .flag, "Tell boot daemon root filesystem is mounted read-write"),
        ("show-splash", .flag, "Show splash screen"),
        ("hide-splash", .flag, "Hide splash screen"),
        ("ask-for-password", .flag, "Ask user for password"),
        ("ignore-keystroke", .string, "Remove sensitivity to a keystroke"),
        ("update", .string, "Tell boot daemon an update about boot progress"),
        ("details", .flag, "Tell boot daemon there were errors during boot"),
        ("wait", .flag, "Wait for boot daemon to quit"),
    ]

    static let modes = ["boot-up", "shutdown", "reboot", "updates", "system-upgrade", "firmware-upgrade"]

    static let commands: [Command] = [
        Command(name: "change-mode", summary: "Change the operation mode", options: [
            ("boot-up", .flag, "Starting the system up"), ("shutdown", .flag, "Shutting the system down"),
            ("reboot", .flag, "Rebooting the system"), ("updates", .flag, "Applying updates"),
            ("system-upgrade", .flag, "Upgrading the OS to a new version"),
            ("firmware-upgrade", .flag, "Upgrading firmware to a new version"),
        ]),
        Command(name: "system-update", summary: "Tell the daemon about updates progress", options: [
            ("progress", .integer, "The percentage progress of the updates"),
        ]),
        Command(name: "update", summary: "Tell daemon about boot status changes", options: [
            ("status", .string, "Tell daemon the current boot status"),
        ]),
        Command(name: "update-root-fs", summary: "Tell daemon about root filesystem changes", options: [
            ("new-root-dir", .string, "Root filesystem is about to change"),
            ("read-write", .flag, "Root filesystem is no longer read-only"),
        ]),
        Command(name: "show-splash", summary: "Tell daemon to show splash screen", options: []),
        Command(name: "hide-splash", summary: "Tell daemon to hide splash screen", options: []),
        Command(name: "ask-for-password", summary: "Ask user for password", options: [
            ("command", .string, "Command to send password to via standard input"),
            ("prompt", .string, "Message to display when asking for password"),
            ("number-of-tries", .integer, "Number of times to ask before giving up (requires --command)"),
            ("dont-pause-progress", .flag, "Don't pause boot progress bar while asking"),
        ]),
        Command(name: "ask-question", summary: "Ask user a question", options: [
            ("command", .string, "Command to send the answer to via standard input"),
            ("prompt", .string, "Message to display when asking the question"),
            ("dont-pause-progress", .flag, "Don't pause boot progress bar while asking"),
        ]),
        Command(name: "display-message", summary: "Display a message", options: [("text", .string, "The message text")]),
        Command(name: "hide-message", summary: "Hide a message", options: [("text", .string, "The message text")]),
        Command(name: "watch-keystroke", summary: "Become sensitive to a keystroke", options: [
            ("command", .string, "Command to send keystroke to via standard input"),
            ("keys", .string, "Keys to become sensitive to"),
        ]),
        Command(name: "ignore-keystroke", summary: "Remove sensitivity to a keystroke", options: [
            ("keys", .string, "Keys to remove sensitivity to"),
        ]),
        Command(name: "pause-progress", summary: "Pause boot progress bar", options: []),
        Command(name: "unpause-progress", summary: "Unpause boot progress bar", options: []),
        Command(name: "report-error", summary: "Tell boot daemon there were errors during boot", options: []),
        Command(name: "deactivate", summary: "Tell boot daemon to deactivate", options: []),
        Command(name: "reactivate", summary: "Tell boot daemon to reactivate", options: []),
        Command(name: "quit", summary: "Tell boot daemon to quit", options: [
            ("retain-splash", .flag, "Don't explicitly hide boot splash on exit"),
        ]),
    ]

    /// `message` is Plymouth's other name for `display-message`.
    static let aliases = ["message": "display-message"]

    /// The invocation, or what is wrong with it (shown above the usage).
    static func parse(_ arguments: [String]) -> Result<PlymouthInvocation, PlymouthUsageError> {
        var invocation = PlymouthInvocation()
        if arguments.isEmpty {
            invocation.help = .noArguments
            return .success(invocation)
        }
        var global = ParsedOptions()
        var parsedCommands: [(Command, ParsedOptions)] = []
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            index += 1
            if word.hasPrefix("--") {
                let allowed = parsedCommands.last?.0.options ?? globalOptions
                let owner = parsedCommands.last.map { "'\($0.0.name)'" } ?? "plymouth"
                var target = parsedCommands.last?.1 ?? global
                if let error = target.take(word, from: arguments, at: &index, allowed: allowed, owner: owner) {
                    return .failure(error)
                }
                if parsedCommands.isEmpty { global = target } else { parsedCommands[parsedCommands.count - 1].1 = target }
                continue
            }
            let name = aliases[word] ?? word
            guard let command = commands.first(where: { $0.name == name }) else {
                return .failure(PlymouthUsageError("unknown command '\(word)'"))
            }
            parsedCommands.append((command, ParsedOptions()))
        }
        if global.flags.contains("help") {
            invocation.help = .requested
            return .success(invocation)
        }
        invocation.waits = global.flags.contains("wait")
        // The global forms, in the order Plymouth's client checks them.
        if let root = global.values["newroot"] { invocation.actions.append(.newRoot(root)) }
        if global.flags.contains("show-splash") { invocation.actions.append(.showSplash) }
        if global.flags.contains("hide-splash") { invocation.actions.append(.hideSplash) }
        if global.flags.contains("quit") { invocation.actions.append(.quit(retainSplash: false)) }
        if global.flags.contains("ping") { invocation.actions.append(.ping) }
        if global.flags.contains("has-active-vt") { invocation.actions.append(.hasActiveVT) }
        if let status = global.values["update"] { invocation.actions.append(.update(status: status)) }
        if global.flags.contains("ask-for-password") {
            invocation.actions.append(.askForPassword(prompt: nil, command: nil, tries: 1, pausesProgress: false))
        }
        if let keys = global.values["ignore-keystroke"] { invocation.actions.append(.ignoreKeystroke(keys: keys)) }
        if global.flags.contains("sysinit") { invocation.actions.append(.sysinit) }
        if global.flags.contains("details") { invocation.actions.append(.reportError) }
        for (command, options) in parsedCommands {
            switch action(command.name, options) {
            case .success(let action?): invocation.actions.append(action)
            case .success(nil): break
            case .failure(let error): return .failure(error)
            }
        }
        return .success(invocation)
    }

    /// What `name` with `options` sends; nil when it sends nothing (Plymouth's client
    /// sends nothing for `update` without `--status`, `change-mode` without a mode, ...).
    private static func action(_ name: String, _ options: ParsedOptions) -> Result<PlymouthAction?, PlymouthUsageError> {
        let pauses = !options.flags.contains("dont-pause-progress")
        switch name {
        case "change-mode":
            return .success(modes.first { options.flags.contains($0) }.map { .changeMode($0) })
        case "system-update":
            let progress = options.integers["progress"] ?? 0
            guard (0...100).contains(progress) else {
                return .failure(PlymouthUsageError("couldn't set invalid percentage: \(progress)", showsUsage: false))
            }
            return .success(.systemUpdate(progress: progress))
        case "update": return .success(options.values["status"].map { .update(status: $0) })
        case "update-root-fs":
            if let root = options.values["new-root-dir"] { return .success(.newRoot(root)) }
            return .success(options.flags.contains("read-write") ? .sysinit : nil)
        case "show-splash": return .success(.showSplash)
        case "hide-splash": return .success(.hideSplash)
        case "ask-for-password":
            let tries = options.integers["number-of-tries"] ?? 0
            return .success(.askForPassword(
                prompt: options.values["prompt"], command: options.values["command"],
                tries: tries > 0 ? tries : Int(Int32.max), pausesProgress: pauses))
        case "ask-question":
            return .success(.askQuestion(prompt: options.values["prompt"], command: options.values["command"], pausesProgress: pauses))
        case "display-message": return .success(options.values["text"].map { .displayMessage($0) })
        case "hide-message": return .success(options.values["text"].map { .hideMessage($0) })
        case "watch-keystroke": return .success(.watchKeystroke(keys: options.values["keys"], command: options.values["command"]))
        case "ignore-keystroke": return .success(.ignoreKeystroke(keys: options.values["keys"]))
        case "pause-progress": return .success(.pauseProgress)
        case "unpause-progress": return .success(.unpauseProgress)
        case "report-error": return .success(.reportError)
        case "deactivate": return .success(.deactivate)
        case "reactivate": return .success(.reactivate)
        case "quit": return .success(.quit(retainSplash: options.flags.contains("retain-splash")))
        default: return .success(nil)
        }
    }

    /// The usage text Plymouth's client prints.
    static func usage() -> String {
        var text = "Splash control client\nUSAGE: plymouth [OPTION...] [COMMAND [OPTION...]...]\n\nOptions:\n"
        func line(_ name: String, _ kind: Kind, _ summary: String) -> String {
            let left = "  --" + name + (kind == .string ? "=<string>" : kind == .integer ? "=<integer>" : "")
            return left + String(repeating: " ", count: max(2, 34 - left.count)) + summary + "\n"
        }
        for option in globalOptions { text += line(option.name, option.kind, option.summary) }
        text += "\nAvailable commands:\n"
        for command in commands {
            text += "  " + command.name + String(repeating: " ", count: max(2, 32 - command.name.count)) + command.summary + "\n"
        }
        for command in commands where !command.options.isEmpty {
            text += "\nOptions for command \(command.name):\n"
            for option in command.options { text += line(option.name, option.kind, option.summary) }
        }
        return text
    }
}

/// A `plymouth` command line it cannot take.
struct PlymouthUsageError: Error, Equatable {
    var message: String
    /// Whether the usage follows the message (Plymouth's parser errors), or the message
    /// stands alone (a value out of range).
    var showsUsage = true

    init(_ message: String, showsUsage: Bool = true) {
        self.message = message
        self.showsUsage = showsUsage
    }
}

/// The options given to plymouth or to one of its commands.
private struct ParsedOptions {
    var flags: Set<String> = []
    var values: [String: String] = [:]
    var integers: [String: Int] = [:]

    /// Takes `word` (`--name`, `--name=value`) and, for an option with a value and no `=`,
    /// the next argument.
    mutating func take(
        _ word: String, from arguments: [String], at index: inout Int,
        allowed: [(name: String, kind: PlymouthCommandLine.Kind, summary: String)], owner: String
    ) -> PlymouthUsageError? {
        let body = word.dropFirst(2)
        let name = String(body.prefix { $0 != "=" })
        let inline: String? = body.contains("=") ? String(body.drop { $0 != "=" }.dropFirst()) : nil
        guard let option = allowed.first(where: { $0.name == name }) else {
            return PlymouthUsageError("unknown option '--\(name)' for \(owner)")
        }
        switch option.kind {
        case .flag:
            guard inline == nil else { return PlymouthUsageError("option '--\(name)' takes no value") }
            flags.insert(name)
        case .string, .integer:
            var value = inline
            if value == nil, index < arguments.count, !arguments[index].hasPrefix("--") {
                value = arguments[index]
                index += 1
            }
            guard let value else { return PlymouthUsageError("option '--\(name)' needs a value") }
            if option.kind == .string {
                values[name] = value
            } else {
                guard let number = Self.integer(value) else {
                    return PlymouthUsageError("option '--\(name)' takes a whole number, not '\(value)'")
                }
                integers[name] = number
            }
        }
        return nil
    }

    /// A whole number written as a plain decimal (`PlainDecimal`), within ±10⁹.
    private static func integer(_ text: String) -> Int? {
        guard let value = PlainDecimal.parse(text), value == value.rounded(.towardZero), abs(value) <= 1e9 else { return nil }
        return Int(value)
    }
}
