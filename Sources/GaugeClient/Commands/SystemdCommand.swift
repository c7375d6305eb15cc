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

    /// `--boot-estimate`: systemd's share of jobs done goes to the daemon as `jobs`, in
    /// tenths of a percent, whenever it changes, while systemd is starting the system.
    /// Ends (0) when the boot does or when the boot screen has gone; a daemon that never
    /// answers is exit 3, an `err` reply exit 1.
    static func feedBootEstimate(_ options: Options, invocation: Invocation) -> Never {
        unblockSignals()
        let session = DaemonSession(socketPath: invocation.socketPath, timeout: invocation.timeout)
        // The daemon first: with none (turned off, never started) there is nothing to feed,
        // and nothing to wait for on systemd's side.
        do throws(ConnectionFailure) {
            _ = try session.connect(waitingForDaemon: invocation.waitsForDaemon)
        } catch {
            printError("gaugectl: systemd: \(error.message)")
            finish(.noDaemon)
        }
        var sent: Double?
        var status = ExitStatus.ok
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
                    sent = share
                    if case .err(let error) = try session.send(.jobs(share)) {
                        printError("gaugectl: systemd: \(error.message)")
                        status = .daemonError
                        return false
                    }
                } catch {
                    // The boot screen has gone (gauged-quit): the feed has nothing left to do.
                    return false
                }
                return true
            },
            tick: { _ in }, nextTick: { _ in nil })
        finish(status)
    }
}
