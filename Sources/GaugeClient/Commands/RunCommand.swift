import CGaugeLinux
import GaugeProtocol
import GaugeSystem
import GaugeTranslators

/// `gaugectl run -- COMMAND ...`: runs COMMAND on a pseudo-terminal of gaugectl's own (its
/// standard output and error; standard input inherited), so that it writes what it writes
/// to a terminal, and copies that to gaugectl's standard output unchanged but for the
/// terminal progress sequences (OSC 9;4: `TerminalProgressFilter`), which drive one bar
/// (`TerminalProgressTranslator`). COMMAND is followed as `gaugectl apt`'s is
/// (`FollowedCommand`); its exit status is gaugectl's (128+N for a signal).
enum RunCommand {
    struct Options {
        var command: [String]
        var title: String?
        var message: String?
        var bar = HonestBar.Settings()
        var range: BarRange?
    }

    /// The terminal's size when gaugectl's own output is no terminal.
    static let defaultSize: (rows: UInt16, columns: UInt16) = (24, 80)

    static func run(_ options: Options, invocation: Invocation) -> Never {
        let requests = RequestStream(invocation: invocation, label: "run")
        requests.range = options.range
        let name = Producer.name(of: options.command)
        var translator = TerminalProgressTranslator(name: name, settings: requests.withThemeStall(options.bar))
        if let title = options.title { requests.send(.title(title)) }
        requests.send(translator.start(message: options.message, at: Deadline.now()))
        let terminal: (main: Int32, other: String)
        let command: FollowedCommand
        do throws(SystemError) {
            terminal = try Syscall.openTerminalPair()
            let size = Syscall.windowSize(1) ?? defaultSize
            try Syscall.setWindowSize(terminal.main, rows: size.rows, columns: size.columns)
            // Its bytes as written: no carriage return added before each line feed.
            var settings = try Syscall.terminalAttributes(terminal.main)
            settings.c_oflag &= ~tcflag_t(OPOST)
            try Syscall.setTerminalAttributes(terminal.main, settings)
            try Syscall.makeNonBlockingAndCloseOnExec(terminal.main)
            command = try FollowedCommand(label: "run") { () throws(SystemError) in
                Producer(command: options.command, pid: try Syscall.spawn(options.command, onTerminal: terminal.other))
            }
        } catch {
            FollowedCommand.exit("run", requests, startFailure: error) { translator.finish(failure: $0) }
        }
        var filter = TerminalProgressFilter()
        var output = Output()
        let end = command.follow(
            stream: terminal.main,
            nextTick: { translator.nextTick(after: Deadline.now()) },
            tick: { requests.send(translator.tick(at: Deadline.now())) },
            consume: { bytes in
                let (passed, items) = filter.consume(bytes)
                output.write(passed)
                handle(items, requests, &translator)
            },
            stopping: {})
        let (rest, items) = filter.finish()
        output.write(rest)
        handle(items, requests, &translator)
        command.exit(end, requests) { translator.finish(failure: $0) }
    }

    private static func handle(
        _ items: [TerminalProgressFilter.Item], _ requests: RequestStream, _ translator: inout TerminalProgressTranslator
    ) {
        for item in items {
            switch item {
            case .progress(let event): requests.send(translator.requests(for: event, at: Deadline.now()))
            case .problem(let text): requests.complaints.report(text)
            }
        }
    }
}

/// gaugectl's standard output, written whole (waiting while a non-blocking one is full);
/// once it fails (a reader gone) the rest is dropped, said once, and the command goes on.
private struct Output {
    private var failed = false

    mutating func write(_ bytes: [UInt8]) {
        var offset = 0
        while !failed, offset < bytes.count {
            let result = bytes[offset...].withUnsafeBytes { raw in
                Result { () throws(SystemError) in try Syscall.write(1, raw) }
            }
            switch result {
            case .success(let count?):
                offset += count
            case .success(nil):
                _ = try? Syscall.poll(1, events: Int16(POLLOUT), timeoutMilliseconds: 1000)
            case .failure(let error):
                printError("gaugectl: run: cannot write the command's output: \(errnoText(error.errno)); dropping the rest")
                failed = true
            }
        }
    }
}

extension CommandSpec {
    static let run = CommandSpec(
        name: "run", argumentsSynopsis: "[--title TEXT] [--message TEXT] [--range FROM-TO] -- COMMAND...",
        summary: "Run a command on a terminal and show its terminal progress sequences as one bar",
        details: """
            Runs COMMAND with a pseudo-terminal of gaugectl's own as its standard output and
            error (its standard input is gaugectl's), so it writes what it writes to a
            terminal, and copies that to gaugectl's standard output unchanged, but for the
            terminal progress sequences (OSC 9;4: ESC ] 9 ; 4 ; STATE ; PERCENT, ended by BEL
            or ESC \\), which systemd's tools, dnf5 and flatpak write: they drive the bar.
            The terminal has gaugectl's terminal's size, or 24x80.

            STATE 1 sets PERCENT (one bar for the whole run, never going back: a tool that
            counts its next operation from 0 holds it), 3 shows the indeterminate style
            until a value comes, 2 the failure state until progress resumes, 4 says the
            command is paused, 0 leaves the bar as it is. Only COMMAND's exit status 0 fills
            the bar; any other, or a COMMAND that cannot be started, shows failure, and
            gaugectl exits with COMMAND's status (127 not found, 128+N killed by signal N).
            A progress sequence that is malformed is dropped, one that never ends within 32
            bytes passes through, each with a complaint on stderr. SIGTERM, SIGINT and SIGHUP
            sent to gaugectl are passed on to COMMAND and gaugectl waits for its end.

            Example: gaugectl run --title Updating -- systemd-sysupdate update

            Exit status: COMMAND's own when it fails; else 0, 1 an err reply, 3 an update
            not delivered.
            """,
        options: [
            OptionSpec(name: "--title", alias: "-t", valueName: "TEXT", help: "Set the title first"),
            OptionSpec(name: "--message", alias: "-m", valueName: "TEXT", help: "The message while COMMAND runs (default: Running COMMAND)"),
            BarRange.option,
        ] + ProgressTicks.options,
        runsCommand: true,
        makeAction: { arguments throws(UsageError) in
            guard let command = arguments.command else {
                throw UsageError("run needs the command to run after --: gaugectl run -- COMMAND")
            }
            let options = RunCommand.Options(
                command: command, title: arguments.values["--title"], message: arguments.values["--message"],
                bar: try ProgressTicks.settings(arguments), range: try BarRange.parse(arguments))
            return .run { invocation in RunCommand.run(options, invocation: invocation) }
        },
        makeRequest: { _ throws(UsageError) in throw UsageError("run is not one request") })
}
