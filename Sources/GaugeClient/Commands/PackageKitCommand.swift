import GaugeProtocol
import GaugeSystem
import GaugeTranslators

/// `gaugectl packagekit`: names on the updates screen the package PackageKit works on,
/// and shows a transaction's error at once (see `PackageKitTransactions`), from its
/// transactions' signals on the system bus: no polling. Runs until killed (its unit stops
/// with the update's restart) or the boot screen has gone (0); exit 3 with no daemon, 1
/// on an `err` reply.
enum PackageKitCommand {
    static let destination = "org.freedesktop.PackageKit"
    static let path = "/org/freedesktop/PackageKit"
    static let transaction = "org.freedesktop.PackageKit.Transaction"

    static let spec = CommandSpec(
        name: "packagekit", argumentsSynopsis: "[--address ADDRESS]",
        summary: "Name the package PackageKit installs, and its errors, on the updates screen",
        details: """
            Follows PackageKit's transactions on the system bus (their Package and ErrorCode
            signals, which PackageKit broadcasts) during an offline update, next to
            pk-offline-update's own reports through the plymouth command: each package it
            updates, installs or removes becomes the message ("Updating NAME VERSION. Do not
            turn off the computer."), and an error shows the failure at once, naming the
            package and with PackageKit's details, instead of after pk-offline-update's
            pause. The bar is left to pk-offline-update. While PackageKit is not on the bus
            it waits for it. Runs until killed or the boot screen has gone
            (gauged-packagekit.service runs it during system-update.target).

            Exit status: 0 killed or the boot screen gone, 1 an err reply, 3 no daemon.
            """,
        options: [
            OptionSpec(name: "--address", valueName: "ADDRESS", help: "The D-Bus address (default: the system bus)")
        ],
        makeAction: { arguments throws(UsageError) in
            let address = try busAddress(arguments)
            return .run { invocation in run(address: address, invocation: invocation) }
        },
        makeRequest: { _ throws(UsageError) in throw UsageError("packagekit is not one request") })

    static func run(address: String?, invocation: Invocation) -> Never {
        unblockSignals()
        let session = DaemonSession.connectedOrExit(invocation, label: "packagekit")
        var transactions = PackageKitTransactions()
        BusPolling.run(
            label: "packagekit",
            connect: { () throws(BusFailure) in
                try BusConnection(
                    address: address, timeout: invocation.timeout, destination: destination, path: path,
                    interface: destination)
            },
            rules: ["Package", "ErrorCode"].map {
                "type='signal',sender='\(destination)',interface='\(transaction)',member='\($0)'"
            },
            interval: nil,
            sample: { _, _ in true },
            signal: { bus, interface, member, _ in
                guard interface == transaction, let (number, text) = bus.signalNumberAndText() else { return true }
                let request =
                    member == "Package"
                    ? transactions.package(info: number, id: text)
                    : member == "ErrorCode" ? transactions.error(code: number, details: text) : nil
                if let request { send(request, on: session) }
                return true
            },
            tick: { _ in }, nextTick: { _ in nil })
        finish(.ok)
    }

    /// Sends `request`; the boot screen gone ends the command (0), an `err` reply too (1).
    private static func send(_ request: Request, on session: DaemonSession) {
        do throws(ConnectionFailure) {
            _ = try session.connect(waitingForDaemon: false)
            if case .err(let error) = try session.send(request) {
                printError("gaugectl: packagekit: \(error.message)")
                finish(.daemonError)
            }
        } catch {
            finish(.ok)
        }
    }
}
