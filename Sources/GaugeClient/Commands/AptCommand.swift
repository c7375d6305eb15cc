import CGaugeLinux
import GaugeProtocol
import GaugeSystem
import GaugeTranslators

/// `gaugectl apt -- COMMAND ...`: runs apt-get, apt or dpkg with its status stream on a
/// pipe of gaugectl's own (`-o APT::Status-Fd=N`, `--status-fd N`) and shows it as one
/// bar (`AptStatusTranslator`); the command's own output goes where gaugectl's goes.
///
/// gaugectl never hangs on the command, nor stops it by force (`FollowedCommand`): a daemon
/// a maintainer script started may hold the pipe open, and a package manager stopped
/// mid-run by force leaves a broken system.
enum AptCommand {
    struct Options {
        var command: AptCommandLine
        var bar = HonestBar.Settings()
        var range: BarRange?
    }

    static func run(_ options: Options, invocation: Invocation) -> Never {
        let requests = RequestStream(invocation: invocation, label: "apt")
        requests.range = options.range
        let name = options.command.name
        var translator = AptStatusTranslator(
            settings: requests.withThemeStall(options.bar), dpkg: options.command.isDpkg, dpkgSteps: options.command.dpkgSteps)
        requests.send(translator.start(message: "Running \(name)", at: Deadline.now()))
        let command: FollowedCommand
        var status: Int32 = -1
        do throws(SystemError) {
            command = try FollowedCommand(label: "apt") { () throws(SystemError) in
                let started = try start(options.command)
                status = started.1
                return started.0
            }
        } catch {
            FollowedCommand.exit("apt", requests, startFailure: error) { translator.finish(failure: $0) }
        }
        var reader = AptStatusReader()
        let end = command.follow(
            stream: status,
            nextTick: { translator.nextTick(after: Deadline.now()) },
            tick: { requests.send(translator.tick(at: Deadline.now())) },
            consume: { handle(reader.consume($0), requests, &translator) },
            stopping: { requests.send(translator.note("Stopping: waiting for \(command.child.name) to end", at: Deadline.now())) })
        handle(reader.finish(), requests, &translator)
        command.exit(end, name: name, requests) { translator.finish(failure: $0) }
    }

    /// Starts the command with the pipe's write end as its status descriptor; the read
    /// end, non-blocking.
    private static func start(_ command: AptCommandLine) throws(SystemError) -> (Producer, Int32) {
        let ends = try Syscall.pipe()
        defer { Syscall.close(ends.write) }
        do throws(SystemError) {
            try Syscall.makeNonBlockingAndCloseOnExec(ends.read)
            let pid = try Syscall.spawn(
                command.arguments, passing: (ends.write, command.descriptor), defaultSignals: true)
            return (Producer(command: command.arguments, pid: pid), ends.read)
        } catch {
            Syscall.close(ends.read)
            throw error
        }
    }

    private static func handle(_ items: [AptStatusReader.Item], _ requests: RequestStream, _ translator: inout AptStatusTranslator) {
        for item in items {
            switch item {
            case .event(let event): requests.send(translator.requests(for: event, at: Deadline.now()))
            case .problem(let text): requests.complaints.report(text)
            }
        }
    }
}

extension CommandSpec {
    static let apt = CommandSpec(
        name: "apt", argumentsSynopsis: "[--fd N] [--range FROM-TO] -- COMMAND...",
        summary: "Run apt-get, apt or dpkg and show its status stream as one bar",
        details: """
            Runs COMMAND with its status stream on a pipe of gaugectl's own, as its
            descriptor N (--fd, default 3): -o APT::Status-Fd=N goes after the first word
            that is apt-get, apt or aptitude, --status-fd N after one that is dpkg (so
            'chroot /target apt-get ...' works too). COMMAND's own output goes where
            gaugectl's goes (the terminal, the journal).

            One bar for the whole run, never going back: apt's download (dlstatus, by
            bytes) is its first half, the package work after it (pmstatus: unpacking,
            configuring each package) the rest, or all of it when nothing is fetched; apt
            counts each phase from 0 again, and a count that goes back holds the bar. The
            message is apt's ("Unpacking hello (amd64)"). dpkg gives no percentages: each
            package or .deb named is a step (two for --install: unpacking and configuring),
            and a dpkg whose count its arguments do not tell (--pending, --recursive) shows
            the indeterminate style, naming each step. A package that fails (pmerror, dpkg's
            error) shows the failure state at once with apt's words; a question about a
            configuration file, or a disc to insert, says that the terminal waits for an
            answer. Only COMMAND's exit status 0 fills the bar; any other, or a COMMAND
            that cannot be started, shows failure, and gaugectl exits with COMMAND's
            status (127 not found, 128+N killed by signal N).

            Status lines that are not APT's or dpkg's, or longer than 16384 bytes, are
            skipped with a complaint on stderr (a few a second at most). SIGTERM, SIGINT
            and SIGHUP sent to gaugectl are passed on to COMMAND and gaugectl waits for
            its end (the terminal's Ctrl-C reaches COMMAND by itself); gaugectl does not
            wait for the status pipe once COMMAND has ended.

            Example: gaugectl apt -- apt-get -y dist-upgrade

            Example: gaugectl apt -- dpkg -i ./hello_1.0_amd64.deb

            Exit status: COMMAND's own when it fails; else 0, 1 an err reply, 3 an update
            not delivered.
            """,
        options: [
            OptionSpec(name: "--fd", valueName: "N", help: "COMMAND's descriptor for the status stream (default 3)"),
            BarRange.option,
        ] + ProgressTicks.options,
        runsCommand: true,
        makeAction: { arguments throws(UsageError) in
            guard let command = arguments.command else {
                throw UsageError("apt needs the command to run after --: gaugectl apt -- apt-get install PACKAGE")
            }
            let text = arguments.values["--fd"] ?? "3"
            guard let number = DecimalDigits.value(text, maxDigits: 4), number >= 3, number < 1024 else {
                throw UsageError("--fd needs a descriptor number from 3 to 1023, not '\(text)'")
            }
            guard let line = AptCommandLine(command, descriptor: Int32(number)) else {
                throw UsageError("no word of the command is apt-get, apt, aptitude or dpkg")
            }
            let options = AptCommand.Options(
                command: line, bar: try ProgressTicks.settings(arguments), range: try BarRange.parse(arguments))
            return .run { invocation in AptCommand.run(options, invocation: invocation) }
        },
        makeRequest: { _ throws(UsageError) in throw UsageError("apt is not one request") })
}
