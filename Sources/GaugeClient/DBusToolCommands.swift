import GaugeProtocol
import GaugeSystem

/// What the D-Bus tool commands (`rauc`, `fwupd`) take besides the bar's options.
struct BusSourceOptions {
    var address: String?
    var interval = 0.25
    var successMessage: String?
    var failureMessage: String?
    var bar = HonestBar.Settings()
}

/// `gaugectl rauc`: follows RAUC's installer over D-Bus (see `RaucProgressTranslator`)
/// until killed, one installation after another.
enum RaucCommand {
    static func run(_ options: BusSourceOptions, invocation: Invocation) -> Never {
        unblockSignals()
        let requests = RequestStream(
            session: DaemonSession(socketPath: invocation.socketPath, timeout: invocation.timeout), label: "rauc",
            waitsForDaemon: invocation.waitsForDaemon)
        var translator = RaucProgressTranslator(settings: options.bar)
        if let message = options.successMessage { translator.successMessage = message }
        BusPolling.run(
            label: "rauc",
            connect: { () throws(BusFailure) in
                try BusConnection(
                    address: options.address, timeout: invocation.timeout, destination: "de.pengutronix.rauc",
                    path: "/", interface: "de.pengutronix.rauc.Installer")
            },
            interval: options.interval,
            sample: { bus, now throws(BusFailure) in
                let operation = try bus.string("Operation")
                let (percent, message, _) = try bus.isi("Progress")
                let lastError = operation == "installing" ? "" : try bus.string("LastError")
                for request in translator.requests(
                    operation: operation, percent: percent, message: message, lastError: lastError, at: now)
                {
                    requests.send(request)
                }
                return true
            },
            tick: { now in for request in translator.tick(at: now) { requests.send(request) } },
            nextTick: { now in translator.nextTick(after: now) })
        finish(requests.exitStatus)
    }
}

/// `gaugectl fwupd`: follows fwupd's daemon over D-Bus (see `FwupdProgressTranslator`)
/// until killed, one operation after another.
enum FwupdCommand {
    static func run(_ options: BusSourceOptions, invocation: Invocation) -> Never {
        unblockSignals()
        let requests = RequestStream(
            session: DaemonSession(socketPath: invocation.socketPath, timeout: invocation.timeout), label: "fwupd",
            waitsForDaemon: invocation.waitsForDaemon)
        var translator = FwupdProgressTranslator(settings: options.bar)
        if let message = options.successMessage { translator.successMessage = message }
        if let message = options.failureMessage { translator.failureMessage = message }
        BusPolling.run(
            label: "fwupd",
            connect: { () throws(BusFailure) in
                try BusConnection(
                    address: options.address, timeout: invocation.timeout, destination: "org.freedesktop.fwupd",
                    path: "/", interface: "org.freedesktop.fwupd")
            },
            interval: options.interval,
            sample: { bus, now throws(BusFailure) in
                let status = try bus.uint32("Status")
                let percentage = try bus.uint32("Percentage")
                for request in translator.requests(status: status, percentage: percentage, at: now) {
                    requests.send(request)
                }
                return true
            },
            tick: { now in for request in translator.tick(at: now) { requests.send(request) } },
            nextTick: { now in translator.nextTick(after: now) })
        finish(requests.exitStatus)
    }
}

extension CommandSpec {
    private static func busSourceOptions(_ arguments: CommandArguments) throws(UsageError) -> BusSourceOptions {
        var options = BusSourceOptions()
        options.address = try busAddress(arguments)
        options.interval = try pollInterval(arguments)
        if let text = arguments.values["--success-message"] { options.successMessage = try oneLine(text) }
        if let text = arguments.values["--failure-message"] { options.failureMessage = try oneLine(text) }
        options.bar = try ProgressTicks.settings(arguments)
        return options
    }

    private static let busOptions = [
        OptionSpec(name: "--address", valueName: "ADDRESS", help: "The D-Bus address (default: the system bus)"),
        OptionSpec(name: "--interval", valueName: "SECONDS", help: "How often to read the progress (default 0.25)"),
    ]

    static let rauc = CommandSpec(
        name: "rauc", argumentsSynopsis: "[--address ADDRESS] [--interval SECONDS]",
        summary: "Show RAUC's installations (its D-Bus Installer) until killed",
        details: """
            Reads de.pengutronix.rauc.Installer's Operation, Progress and LastError over D-Bus
            (sd-bus, from libsystemd.so.0, loaded when this command runs) every --interval
            seconds. An installation starts the bar at 0; RAUC's percentage and message move
            it, never back; inside a long step (writing the images) it creeps towards 100
            without reaching it, and after --stall seconds without progress it shows the
            indeterminate style. When the installation ends the screen shows success, or
            failure with RAUC's LastError. While RAUC is not on the bus it tries again every
            second.
            """,
        options: busOptions + [
            OptionSpec(name: "--success-message", valueName: "TEXT", help: "The message on success (default 'Update installed')"),
        ] + ProgressTicks.options,
        makeAction: { arguments throws(UsageError) in
            let options = try busSourceOptions(arguments)
            return .run { invocation in RaucCommand.run(options, invocation: invocation) }
        },
        makeRequest: { _ throws(UsageError) in throw UsageError("rauc is not one request") })

    static let fwupd = CommandSpec(
        name: "fwupd", argumentsSynopsis: "[--address ADDRESS] [--interval SECONDS]",
        summary: "Show fwupd's firmware updates (its D-Bus Status and Percentage) until killed",
        details: """
            Reads org.freedesktop.fwupd's Status and Percentage over D-Bus (sd-bus, loaded
            when this command runs) every --interval seconds. fwupd's percentage starts
            again at 0 in each phase; the bar gives each phase its share (download 20 %,
            write 45 %, verify 10 %, ...) so it only moves forwards, with the phase as the
            message. Back to idle, an operation that wrote firmware shows success when the
            writing finished and failure otherwise; one that wrote nothing leaves the screen
            alone. While fwupd is not on the bus it tries again every second.
            """,
        options: busOptions + [
            OptionSpec(name: "--success-message", valueName: "TEXT", help: "The message on success (default 'Firmware updated')"),
            OptionSpec(name: "--failure-message", valueName: "TEXT", help: "The message on failure (default 'Firmware update failed')"),
        ] + ProgressTicks.options,
        makeAction: { arguments throws(UsageError) in
            let options = try busSourceOptions(arguments)
            return .run { invocation in FwupdCommand.run(options, invocation: invocation) }
        },
        makeRequest: { _ throws(UsageError) in throw UsageError("fwupd is not one request") })
}
