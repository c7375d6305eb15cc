import GaugeProtocol
import GaugeTranslators
import GaugeSystem

/// What the D-Bus tool commands (`rauc`, `fwupd`) take besides the bar's options.
struct BusSourceOptions {
    var address: String?
    /// How often to read the properties besides the signals; nil: never.
    var interval: Double?
    var successMessage: String?
    var failureMessage: String?
    var bar = HonestBar.Settings()
}

/// What `rauc` and `fwupd` share: the tool's object `/` on the bus followed until killed
/// (`BusPolling`: its signals and its name changing hands, `--interval`'s samples), its
/// translator's requests sent to gauged as they come, and the bar ticked between them.
final class BusToolFollower<Translator: BusToolTranslator> {
    private var translator: Translator
    private let requests: RequestStream
    private let label: String

    /// `make` makes the translator with the bar's settings (the theme's stall time over
    /// `options.bar`'s).
    init(label: String, options: BusSourceOptions, invocation: Invocation, make: (HonestBar.Settings) -> Translator) {
        unblockSignals()
        self.label = label
        requests = RequestStream(invocation: invocation, label: label)
        translator = make(requests.withThemeStall(options.bar))
    }

    /// Sends what `change` makes of the translator.
    func send(_ change: (inout Translator) -> [Request]) {
        requests.send(change(&translator))
    }

    /// Changes the translator, sending nothing (yet).
    func change(_ body: (inout Translator) -> Void) {
        body(&translator)
    }

    /// Follows `destination`'s `interface` until killed: `sample` reads its properties (at
    /// the start, when its name changes hands, and every `--interval`), `signal` takes each
    /// of its signals.
    func run(
        destination: String, interface: String, options: BusSourceOptions, invocation: Invocation,
        sample: (BusConnection, UInt64) throws(BusFailure) -> Void,
        signal: (BusConnection, String, String, UInt64) -> Void
    ) -> Never {
        BusPolling.run(
            label: label,
            connect: { () throws(BusFailure) in
                try BusConnection(
                    address: options.address, timeout: invocation.timeout, destination: destination, path: "/",
                    interface: interface)
            },
            rules: [BusPolling.signalsRule(destination, path: "/")],
            interval: options.interval,
            sample: { bus, now throws(BusFailure) in
                try sample(bus, now)
                return true
            },
            signal: { bus, signalInterface, member, now in
                signal(bus, signalInterface, member, now)
                return true
            },
            lost: { now in send { $0.serviceLost(at: now) } },
            tick: { now in send { $0.tick(at: now) } },
            nextTick: { now in translator.nextTick(after: now) })
        finish(requests.exitStatus)
    }
}

/// `gaugectl rauc`: follows RAUC's installer over D-Bus (see `RaucProgressTranslator`)
/// until killed, one installation after another: its properties once, then what its
/// signals say (PropertiesChanged, and Completed for the end and its result).
enum RaucCommand {
    static let destination = "de.pengutronix.rauc"
    static let interface = "de.pengutronix.rauc.Installer"

    static func run(_ options: BusSourceOptions, invocation: Invocation) -> Never {
        let follower = BusToolFollower(label: "rauc", options: options, invocation: invocation) { settings in
            var translator = RaucProgressTranslator(settings: settings)
            translator.endsOnIdle = false
            if let message = options.successMessage { translator.successMessage = message }
            return translator
        }
        var operation = "idle"
        var progress: (Int32, String, Int32) = (0, "", 0)
        var lastError = ""
        func update(_ now: UInt64) {
            follower.send { $0.requests(operation: operation, percent: progress.0, message: progress.1, lastError: lastError, at: now) }
        }
        follower.run(
            destination: destination, interface: interface, options: options, invocation: invocation,
            sample: { bus, now throws(BusFailure) in
                operation = try bus.string("Operation")
                progress = try bus.isi("Progress")
                lastError = try bus.string("LastError")
                update(now)
            },
            signal: { bus, signalInterface, member, now in
                switch (signalInterface, member) {
                case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
                    if let value = bus.signalString("Operation") {
                        // A new installation: the Progress still held is the last one's end.
                        if value == "installing" && operation != "installing" { progress = (0, "", 0) }
                        operation = value
                    }
                    if let value = bus.signalIsi("Progress") { progress = value }
                    if let value = bus.signalString("LastError") { lastError = value }
                    update(now)
                case (interface, "Completed"):
                    let result = bus.signalInt32() ?? -1
                    if result != 0, let value = try? bus.string("LastError") { lastError = value }
                    follower.send { $0.completed(result: result, lastError: lastError, at: now) }
                default:
                    break
                }
            })
    }
}

/// `gaugectl fwupd`: follows fwupd's daemon over D-Bus (see `FwupdProgressTranslator`)
/// until killed, one operation after another: its Status and Percentage once, then as
/// its signals announce them (PropertiesChanged), with what a device's update came to
/// (DeviceChanged: UpdateState, UpdateError) as the end, and the requests a device makes
/// of the user (DeviceRequest) as the message. `Changed` (the device list changed) says
/// nothing the bar needs.
enum FwupdCommand {
    static let destination = "org.freedesktop.fwupd"

    static func run(_ options: BusSourceOptions, invocation: Invocation) -> Never {
        let follower = BusToolFollower(label: "fwupd", options: options, invocation: invocation) { settings in
            var translator = FwupdProgressTranslator(settings: settings)
            if let message = options.successMessage { translator.successMessage = message }
            if let message = options.failureMessage { translator.failureMessage = message }
            return translator
        }
        var status: UInt32 = 0
        var percentage: UInt32 = 0
        func update(_ now: UInt64) {
            follower.send { $0.requests(status: status, percentage: percentage, at: now) }
        }
        follower.run(
            destination: destination, interface: destination, options: options, invocation: invocation,
            sample: { bus, now throws(BusFailure) in
                if let version = try? bus.string("DaemonVersion") {
                    let overall = FwupdProgressTranslator.reportsOverallPercentage(daemonVersion: version)
                    follower.change { $0.percentageIsOverall = overall }
                }
                status = try bus.uint32("Status")
                percentage = try bus.uint32("Percentage")
                update(now)
            },
            signal: { bus, signalInterface, member, now in
                switch (signalInterface, member) {
                case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
                    let newStatus = bus.signalUInt32("Status")
                    let newPercentage = bus.signalUInt32("Percentage")
                    guard newStatus != nil || newPercentage != nil else { return }
                    // Leaving idle: the Percentage still held is the last operation's end.
                    if let newStatus, newStatus > 1, status <= 1, newPercentage == nil { percentage = 0 }
                    status = newStatus ?? status
                    percentage = newPercentage ?? percentage
                    update(now)
                case (destination, "DeviceChanged"):
                    // Not read again with Get: the answer could overtake signals still queued.
                    let (id, state, error) = (
                        bus.signalString("DeviceId") ?? "", bus.signalUInt32("UpdateState"), bus.signalString("UpdateError"))
                    follower.change { $0.deviceChanged(id: id, updateState: state, updateError: error) }
                case (destination, "DeviceRequest"):
                    let (message, id) = (bus.signalString("UpdateMessage"), bus.signalString("AppstreamId"))
                    follower.send { $0.deviceRequest(message: message, id: id, at: now) }
                default:
                    break
                }
            })
    }
}

extension CommandSpec {
    private static func busSourceOptions(_ arguments: CommandArguments) throws(UsageError) -> BusSourceOptions {
        var options = BusSourceOptions()
        options.address = try busAddress(arguments)
        options.interval = arguments.values["--interval"] == nil ? nil : try pollInterval(arguments)
        if let text = arguments.values["--success-message"] { options.successMessage = try oneLine(text) }
        if let text = arguments.values["--failure-message"] { options.failureMessage = try oneLine(text) }
        options.bar = try ProgressTicks.settings(arguments)
        return options
    }

    private static let busOptions = [
        OptionSpec(name: "--address", valueName: "ADDRESS", help: "The D-Bus address (default: the system bus)"),
        OptionSpec(
            name: "--interval", valueName: "SECONDS",
            help: "Also read the progress this often (default: only when the tool's signals say it changed)"),
    ]

    static let rauc = CommandSpec(
        name: "rauc", argumentsSynopsis: "[--address ADDRESS] [--interval SECONDS]",
        summary: "Show RAUC's installations (its D-Bus Installer) until killed",
        details: """
            Follows de.pengutronix.rauc.Installer over D-Bus (sd-bus, from libsystemd.so.0,
            loaded when this command runs): Operation, Progress and LastError as RAUC
            announces them (PropertiesChanged), and the end of an installation with its
            result (Completed); --interval also reads them that often. An installation
            starts the bar at 0; RAUC's percentage and message move it, never back; inside a
            long step (writing the images) it creeps towards 100 without reaching it, and
            after the stall time without progress (the theme's stall_time, or --stall) it
            shows the indeterminate style. When the installation ends the screen shows
            success, or failure with RAUC's LastError; when RAUC stops during an
            installation, failure ('Installation interrupted: RAUC stopped'), and the next
            installation starts from 0 again. While RAUC is not on the bus it tries again
            every second.
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
            Follows org.freedesktop.fwupd's Status and Percentage over D-Bus (sd-bus, loaded
            when this command runs) as fwupd announces them (PropertiesChanged); what a
            device asks of the user (DeviceRequest, such as unplugging and replugging it)
            becomes the message. fwupd 1.7 and later report one percentage for the whole
            operation, which the bar follows, never back, with the step as the message;
            before 1.7 the percentage starts again at 0 in each phase, and the bar gives
            each phase its share (download 20 %, write 45 %, verify 10 %, ...). Back to
            idle the screen shows success, or failure with fwupd's error, as the device's
            update state says (DeviceChanged); without one, an operation that wrote
            firmware shows success when the writing finished and failure otherwise, and one
            that wrote nothing leaves the screen alone; fwupd stopping during an operation
            ends it in failure ('Update interrupted: fwupd stopped'). While fwupd is not on
            the bus it tries again every second.
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
