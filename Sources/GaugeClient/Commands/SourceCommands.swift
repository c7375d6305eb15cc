import GaugeProtocol
import GaugeSystem
import GaugeTranslators

/// The commands that follow an update tool's own progress reports and drive the bar
/// (`HonestBar`) with them.
extension CommandSpec {
    static let sourceCommands: [CommandSpec] = [bootc, apt, run, systemd, rauc, fwupd, PackageKitCommand.spec]

    static let bootc = CommandSpec(
        name: "bootc", argumentsSynopsis: "[--fd N | --file PATH] [--on-eof auto|success|failure|keep] [-- CMD...]",
        summary: "Show bootc's progress (its --progress-fd JSON Lines) until the stream ends",
        details: """
            Reads what bootc writes to --progress-fd (JSON Lines, org.containers.bootc.progress/v1
            or the later stream opening with a Start event) from stdin, an inherited descriptor
            (--fd) or a file or FIFO (--file), and shows one bar for the whole operation: the
            image download (ProgressBytes) is its first 80 %, weighted by bytes, with the
            megabytes on the message's second line; the steps after it (ProgressSteps:
            merging, deploying) share the rest. The bar never goes back, creeps inside a
            silent step and shows the indeterminate style after the stall time without
            progress (the theme's stall_time, or --stall). At the end of the stream --on-eof decides: auto (the default) shows
            success when bootc finished every step it announced and failure otherwise (a
            stream with no event at all changes nothing); keep leaves the screen for a
            script that shows the outcome from bootc's exit status.

            With -- COMMAND [ARG...] gaugectl runs bootc itself, giving it the stream's pipe
            as its descriptor --fd (default 3), and bootc's exit status is the outcome: 0
            shows success (or what --on-eof says other than auto), anything else failure
            naming it, as does a COMMAND that cannot be started, and gaugectl exits with
            COMMAND's status (127 not found, 128+N killed by signal N), which the first
            command of a pipeline cannot give:

              gaugectl bootc -- bootc upgrade --progress-fd 3

            Reading a pipe instead: bootc upgrade --progress-fd 3 3>&1 >&2 | gaugectl bootc

            Exit status: 0 all ok, 1 an err reply or an unreadable file, 2 usage or a
            descriptor not open, 3 an update not delivered; with COMMAND, COMMAND's own
            when it fails.
            """,
        options: [
            OptionSpec(name: "--fd", valueName: "N", help: "Read the descriptor N this command inherited (default: stdin); with COMMAND, COMMAND's descriptor N (default 3)"),
            OptionSpec(name: "--file", valueName: "PATH", help: "Read PATH, a file or a FIFO bootc writes into"),
            OptionSpec(name: "--on-eof", valueName: "auto|success|failure|keep", help: "What the end of the stream shows (default auto)"),
            OptionSpec(name: "--success-message", valueName: "TEXT", help: "The message on success (default 'Update ready')"),
            OptionSpec(name: "--failure-message", valueName: "TEXT", help: "The message on failure (default 'Update stopped before it finished')"),
        ] + ProgressTicks.options,
        runsCommand: true,
        makeAction: { arguments throws(UsageError) in
            var options = BootcCommand.Options()
            switch (arguments.values["--fd"], arguments.values["--file"]) {
            case (let text, nil) where arguments.command != nil:
                let number: Int64? = if let text { DecimalDigits.value(text, maxDigits: 4) } else { 3 }
                guard let number, number < 1024 else {
                    throw UsageError("--fd needs a descriptor number, not '\(text ?? "")'")
                }
                options.input = .command(arguments.command ?? [], descriptor: Int32(number))
            case (_, _?) where arguments.command != nil:
                throw UsageError("give --file or a COMMAND to run, not both")
            case (nil, nil):
                break
            case (let text?, nil):
                guard let number = DecimalDigits.value(text, maxDigits: 9) else {
                    throw UsageError("--fd needs a descriptor number, not '\(text)'")
                }
                options.input = number == 0 ? .standardInput : .descriptor(Int32(number))
            case (nil, let path?):
                guard !path.isEmpty else { throw UsageError("--file needs a path") }
                options.input = .path(path)
            case (_?, _?):
                throw UsageError("give --fd or --file, not both")
            }
            let word = arguments.values["--on-eof"] ?? BootcProgressTranslator.Ending.auto.rawValue
            guard let ending = BootcProgressTranslator.Ending(rawValue: word) else {
                throw UsageError("--on-eof must be auto, success, failure or keep, not '\(word)'")
            }
            options.ending = ending
            if let text = arguments.values["--success-message"] { options.successMessage = try oneLine(text) }
            if let text = arguments.values["--failure-message"] { options.failureMessage = try oneLine(text) }
            options.bar = try ProgressTicks.settings(arguments)
            let chosen = options
            return .run { invocation in BootcCommand.run(chosen, invocation: invocation) }
        },
        makeRequest: { _ throws(UsageError) in throw UsageError("bootc is not one request") })
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

extension CommandSpec {
    static let systemd = CommandSpec(
        name: "systemd", argumentsSynopsis: "[--address ADDRESS] [--interval SECONDS] [--boot-estimate | --waits]",
        summary: "Show systemd's boot or shutdown progress (its D-Bus Progress) as one bar",
        details: """
            Reads org.freedesktop.systemd1.Manager's Progress and SystemState over D-Bus
            (sd-bus, from libsystemd.so.0, loaded when this command runs) every --interval
            seconds; systemd announces no change of Progress, so it is polled. Progress falls
            whenever new jobs come; the bar never does. During a boot (initializing,
            starting) the bar follows it until the system is running (success), degraded
            (failure: N units failed) or in maintenance (failure), then the command ends;
            during a shutdown (stopping) it follows until killed. Started on a system that
            is already up, it exits at once without touching the screen. While systemd is
            not on the bus (it is re-executing, or no bus yet) it tries again every second.

            With --boot-estimate it leaves the bar to the daemon's boot estimate (gauged
            --boot) and only tells it systemd's share of jobs done (the `jobs` request),
            which the estimate follows on a boot with no history: from systemd's own socket
            (/run/systemd/private, root only, there from systemd's start, before the system
            bus) unless --address, until the boot ends or the boot screen has gone
            (gauged-jobs.service runs it so).

            With --waits it only says what a boot that stops moving waits for: once a start
            job has run longer than the theme's wait_notice (default 60 s), the message
            "Waiting for DESCRIPTION (1 min 5 s of 1 min 30 s)" (the unit's description,
            how long it has run, its time limit), once a second until the job ends, then
            the message is cleared; the bar stays as it is. And it gives the boot's steps
            their units' descriptions (describe). From systemd's JobNew and
            JobRemoved signals on its own socket (unless --address), no polling while the
            boot moves; until the boot ends or the boot screen has gone
            (gauged-waits.service runs it so).
            """,
        options: [
            OptionSpec(name: "--address", valueName: "ADDRESS", help: "The D-Bus address (default: the system bus)"),
            OptionSpec(name: "--interval", valueName: "SECONDS", help: "How often to read the progress (default 0.25)"),
            OptionSpec(name: "--success-message", valueName: "TEXT", help: "The message once running (default 'System ready')"),
            OptionSpec(name: "--boot-estimate", help: "Only send systemd's share of jobs done to the daemon's boot estimate"),
            OptionSpec(name: "--waits", help: "Only describe the boot's steps and say what it waits for past the theme's wait_notice"),
            ProgressTicks.options[0],
        ],
        makeAction: { arguments throws(UsageError) in
            var options = SystemdCommand.Options()
            options.address = try busAddress(arguments)
            options.interval = try pollInterval(arguments)
            options.bootEstimate = arguments.flags.contains("--boot-estimate")
            let waits = arguments.flags.contains("--waits")
            if waits && options.bootEstimate { throw UsageError("--waits and --boot-estimate are two commands: give one") }
            if let text = arguments.values["--success-message"] { options.successMessage = try oneLine(text) }
            options.bar = try ProgressTicks.settings(arguments)
            let chosen = options
            if waits { return .run { invocation in SystemdWaitsCommand.run(chosen, invocation: invocation) } }
            return .run { invocation in SystemdCommand.run(chosen, invocation: invocation) }
        },
        makeRequest: { _ throws(UsageError) in throw UsageError("systemd is not one request") })
}

/// `--address`, checked to be one.
func busAddress(_ arguments: CommandArguments) throws(UsageError) -> String? {
    guard let address = arguments.values["--address"] else { return nil }
    guard address.contains(":") else {
        throw UsageError("--address needs a D-Bus address such as unix:path=/run/dbus/system_bus_socket")
    }
    return address
}

/// `--interval`: 0.01 to 60 seconds.
func pollInterval(_ arguments: CommandArguments) throws(UsageError) -> Double {
    guard let text = arguments.values["--interval"] else { return 0.25 }
    guard let value = PlainDecimal.parse(text), value >= 0.01, value <= 60 else {
        throw UsageError("--interval needs a number of seconds from 0.01 to 60, not '\(text)'")
    }
    return value
}

/// A message given on the command line, checked as the daemon would check it.
func oneLine(_ text: String) throws(UsageError) -> String {
    guard case .success = Request.parse(Request.message(text).encoded) else {
        throw UsageError("a message cannot contain control characters such as newlines")
    }
    return text
}
