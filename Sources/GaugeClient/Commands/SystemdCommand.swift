import GaugeProtocol
import GaugeTranslators
import GaugeSystem

/// `gaugectl systemd`: follows systemd's boot or shutdown progress over D-Bus and drives
/// gauged with it (see `SystemdProgressTranslator`). A boot is followed until it ends;
/// a shutdown until this command is killed.
enum SystemdCommand {
    struct Options {
        var address: String?
        var interval = 0.25
        var successMessage: String?
        var bar = HonestBar.Settings()
        /// Only systemd's share of jobs done, as `jobs`, for the daemon's boot estimate.
        var bootEstimate = false
        /// Where systemd's password requests appear (`--waits`: no wait is named while one
        /// is there).
        var askPasswordDirectory = "/run/systemd/ask-password"
    }

    /// systemd's own socket, a peer rather than a bus: served from systemd's start (before
    /// the system bus), to root.
    static let privateAddress = "unix:path=/run/systemd/private"

    static let destination = "org.freedesktop.systemd1"
    static let path = "/org/freedesktop/systemd1"
    static let interface = "org.freedesktop.systemd1.Manager"

    static func run(_ options: Options, invocation: Invocation) -> Never {
        if options.bootEstimate { feedBootEstimate(options, invocation: invocation) }
        unblockSignals()
        let requests = RequestStream(invocation: invocation, label: "systemd")
        var translator = SystemdProgressTranslator(settings: requests.withThemeStall(options.bar))
        if let message = options.successMessage { translator.successMessage = message }
        var first = true
        BusPolling.run(
            label: "systemd",
            connect: { () throws(BusFailure) in
                try BusConnection(
                    address: options.address, timeout: invocation.timeout, destination: destination, path: path,
                    interface: interface)
            },
            interval: options.interval,
            sample: { bus, now throws(BusFailure) in
                let state = try bus.string("SystemState")
                let progress = try bus.double("Progress")
                defer { first = false }
                if first && SystemdProgressTranslator.endsBoot(state) {
                    printError("gaugectl: systemd: the system is \(CompatText.clean(state)) already; no boot to follow")
                    return false
                }
                let failed = state == "degraded" ? try? bus.uint32("NFailedUnits") : nil
                requests.send(translator.requests(state: state, progress: progress, failedUnits: failed, at: now))
                return !translator.bootEnded
            },
            tick: { now in requests.send(translator.tick(at: now)) },
            nextTick: { now in translator.nextTick(after: now) })
        finish(requests.exitStatus)
    }

    /// How long `--boot-estimate` goes on trying a daemon that is there but does not take
    /// its shares.
    static let unansweredLimitNanoseconds: UInt64 = 10_000_000_000

    /// `--boot-estimate`: systemd's share of jobs done goes to the daemon as `jobs`, in
    /// tenths of a percent, whenever it changes, while systemd is starting the system.
    /// Ends (0) when the boot does or when the boot screen has gone (its socket with it); a
    /// daemon that never answers, or stops answering for 10 s, is exit 3, an `err` reply
    /// exit 1.
    static func feedBootEstimate(_ options: Options, invocation: Invocation) -> Never {
        unblockSignals()
        // The daemon first: with none there is nothing to wait for on systemd's side.
        let session = DaemonSession.connectedOrExit(invocation, label: "systemd")
        var sent: Double?
        var status = ExitStatus.ok
        // Since when the daemon has not taken a share (nil: it took the last one).
        var failingSince: UInt64?
        BusPolling.run(
            label: "systemd",
            connect: { () throws(BusFailure) in
                try BusConnection(
                    address: options.address ?? privateAddress, direct: options.address == nil, timeout: invocation.timeout,
                    destination: destination, path: path, interface: interface)
            },
            interval: options.interval,
            sample: { bus, _ throws(BusFailure) in
                let state = try bus.string("SystemState")
                guard state == "initializing" || state == "starting" else { return false }
                let share = (min(1, max(0, try bus.double("Progress"))) * 1000).rounded(.down) / 10
                do throws(ConnectionFailure) {
                    _ = try session.connect(waitingForDaemon: false)
                    guard share != sent else { return true }
                    if case .err(let error) = try session.send(.jobs(share)) {
                        printError("gaugectl: systemd: \(error.message)")
                        status = .daemonError
                        return false
                    }
                    sent = share
                    failingSince = nil
                } catch {
                    // The boot screen has gone (gauged-quit: its socket with it): the feed has
                    // nothing left to do. Anything else (a full backlog, a reply late on a
                    // loaded machine) is tried again at the next sample, for a while.
                    guard error.noListenerErrno == nil else { return false }
                    let now = Deadline.now()
                    let since = failingSince ?? now
                    failingSince = since
                    if now &- since >= unansweredLimitNanoseconds {
                        printError("gaugectl: systemd: \(error.message); the boot estimate is no longer fed")
                        status = .noDaemon
                        return false
                    }
                }
                return true
            },
            tick: { _ in }, nextTick: { _ in nil })
        finish(status)
    }
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
            the message is cleared; the bar stays as it is. While a password is asked (a
            request in --ask-password-dir: a passphrase's job runs until it is answered)
            the boot waits for a person, not a stall: no job is named. And it gives the boot's steps
            their units' descriptions (describe). And a failure's first words at once:
            "UNIT failed" when systemd queues Gauge's handler of a failed unit, "The boot
            stopped in emergency mode" (or rescue) when it queues that mode, over a splash
            on screen. From systemd's JobNew and JobRemoved signals on its own socket
            (unless --address), no polling while the boot moves; until the boot ends or
            fails or the boot screen has gone (gauged-waits.service runs it so).
            """,
        options: [
            OptionSpec(name: "--address", valueName: "ADDRESS", help: "The D-Bus address (default: the system bus)"),
            OptionSpec(name: "--interval", valueName: "SECONDS", help: "How often to read the progress (default 0.25)"),
            OptionSpec(name: "--success-message", valueName: "TEXT", help: "The message once running (default 'System ready')"),
            OptionSpec(name: "--boot-estimate", help: "Only send systemd's share of jobs done to the daemon's boot estimate"),
            OptionSpec(name: "--waits", help: "Only describe the boot's steps and say what it waits for past the theme's wait_notice"),
            OptionSpec(
                name: "--ask-password-dir", valueName: "DIR",
                help: "With --waits: where systemd's password requests appear (default /run/systemd/ask-password)"),
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
            if let directory = arguments.values["--ask-password-dir"] {
                guard waits else { throw UsageError("--ask-password-dir goes with --waits") }
                options.askPasswordDirectory = directory
            }
            options.bar = try ProgressTicks.settings(arguments)
            let chosen = options
            if waits { return .run { invocation in SystemdWaitsCommand.run(chosen, invocation: invocation) } }
            return .run { invocation in SystemdCommand.run(chosen, invocation: invocation) }
        },
        makeRequest: { _ throws(UsageError) in throw UsageError("systemd is not one request") })
}
