import GaugeProtocol
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
    }

    static let destination = "org.freedesktop.systemd1"
    static let path = "/org/freedesktop/systemd1"
    static let interface = "org.freedesktop.systemd1.Manager"

    static func run(_ options: Options, invocation: Invocation) -> Never {
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
}
