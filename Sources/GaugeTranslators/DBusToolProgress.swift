import GaugeProtocol

/// What the bar does for RAUC's installer (`de.pengutronix.rauc.Installer` on `/`), from
/// readings of `Operation`, `Progress` (isi: percentage, message, nesting depth) and
/// `LastError`, and its `Completed` signal.
///
/// RAUC's percentage is already overall, but its steps are weighted by count, not time:
/// writing the images sits in one step near the end. So inside a step the bar creeps
/// towards 100 (never reaching it), and on a stall turns indeterminate.
///
/// | reading | what the bar does |
/// |---|---|
/// | `Operation` becomes `installing` | `progress 0`, `state running Installing update` |
/// | `Progress` while installing | its percentage, its message |
/// | `Operation` back to `idle` | success (`Update installed`) when the last progress was 100 % and said `done.`, else failure with `LastError` (or the last progress message) |
/// | signal `Completed` (result) | the end: success when the result is 0, else failure with `LastError` |
///
/// A client that follows the signals sets `endsOnIdle` to false: RAUC sends `Completed`
/// before `Operation` changes back to `idle`, and its result is the real outcome.
/// A progress message ending in `failed.` (RAUC's `100% Installing failed.`) does not move
/// the bar.
package struct RaucProgressTranslator: Sendable {
    private var bar: HonestBar
    private var installing = false
    private var lastPercent: Int32 = 0
    private var lastMessage = ""
    package var successMessage = "Update installed"
    /// Whether `Operation` back to `idle` ends an installation (false: `completed` does).
    package var endsOnIdle = true

    package init(settings: HonestBar.Settings = HonestBar.Settings()) {
        bar = HonestBar(settings: settings)
    }

    /// One reading. `lastError` matters at the end of an installation only.
    package mutating func requests(
        operation: String, percent: Int32, message: String, lastError: String, at now: UInt64
    ) -> [Request] {
        var requests: [Request] = []
        let text = CompatText.clean(message)
        if operation == "installing" {
            if !installing {
                installing = true
                lastPercent = 0
                lastMessage = ""
                requests += bar.start(message: "Installing update", at: now)
            }
            let failed = text.hasSuffix("failed.")
            let value = failed ? bar.shown : Double(min(max(percent, 0), 100))
            lastPercent = percent
            lastMessage = text
            requests += bar.report(value, checkpoint: failed ? nil : 100, message: text.isEmpty ? nil : text, at: now)
        } else if installing && endsOnIdle {
            installing = false
            // The reading at the end may already be the final one.
            if !text.isEmpty { lastMessage = text; lastPercent = percent }
            if lastPercent >= 100 && lastMessage.hasSuffix("done.") {
                requests += bar.finish(.success, message: successMessage)
            } else {
                let error = CompatText.clean(lastError)
                requests += bar.finish(.failure, message: error.isEmpty ? (lastMessage.isEmpty ? "Update failed" : lastMessage) : error)
            }
        }
        return requests
    }

    /// RAUC's `Completed` signal: the installation ended with `result` (0: success);
    /// `lastError` says why it failed.
    package mutating func completed(result: Int32, lastError: String, at now: UInt64) -> [Request] {
        installing = false
        if result == 0 { return bar.finish(.success, message: successMessage) }
        let error = CompatText.clean(lastError)
        let message = error.isEmpty ? (lastMessage.isEmpty ? "Update failed" : lastMessage) : error
        return bar.finish(.failure, message: message)
    }

    /// RAUC left the bus (stopped, crashed, restarted): an installation under way died
    /// with it and ends in failure, so the next one starts from 0.
    package mutating func serviceLost(at now: UInt64) -> [Request] {
        guard installing else { return [] }
        installing = false
        return bar.finish(.failure, message: Self.lostMessage)
    }

    static let lostMessage = "Installation interrupted: RAUC stopped"

    package mutating func tick(at now: UInt64) -> [Request] { bar.tick(at: now) }

    package func nextTick(after now: UInt64) -> UInt64? { bar.nextTick(after: now) }
}

/// What the bar does for fwupd (`org.freedesktop.fwupd` on `/`), from `Status` (u,
/// `FwupdStatus`) and `Percentage` (u). Since fwupd 1.7 the percentage is the whole
/// operation's and the status names the step under way (`percentageIsOverall`): the bar
/// follows the percentage, never back, with the step as the message. Before, the
/// percentage belonged to the phase its status names and started again at 0 in each; the
/// bar gives each phase a share of its own, in the order an update goes through them:
///
/// | phase (Status) | share |
/// |---|---|
/// | loading (2), decompressing (3) | 5 % |
/// | downloading (8) | 20 % |
/// | scheduling (7) | 5 % |
/// | device-read (9), device-erase (10) | 10 % |
/// | device-write (5) | 45 % |
/// | device-verify (6) | 10 % |
/// | device-restart (4) | 5 % |
///
/// Leaving idle (1) starts an operation; waiting for authentication (11), a busy device
/// (12) or the user (14) keep the bar where it is (and turn it indeterminate once it
/// stalls). What a device asks of the user (`DeviceRequest`) is the message until the
/// next phase begins. Back to
/// idle, an operation during which a device's update failed (its `UpdateState` in
/// `DeviceChanged`) ends in failure with the device's `UpdateError`; otherwise one that
/// wrote firmware ends in success when the writing finished (100 %, or a later phase
/// came), failure otherwise; one that wrote nothing (a metadata refresh) leaves the
/// screen as it is.
package struct FwupdProgressTranslator: Sendable {
    /// `FwupdStatus` values.
    package enum Status: UInt32, Sendable {
        case unknown = 0, idle, loading, decompressing, deviceRestart, deviceWrite, deviceVerify, scheduling,
            downloading, deviceRead, deviceErase, waitingForAuth, deviceBusy, shutdown, waitingForUser
    }

    private static let weights: [Double] = [5, 20, 5, 10, 45, 10, 5]

    private static func phase(_ status: Status) -> Int? {
        switch status {
        case .loading, .decompressing: 0
        case .downloading: 1
        case .scheduling: 2
        case .deviceRead, .deviceErase: 3
        case .deviceWrite: 4
        case .deviceVerify: 5
        case .deviceRestart: 6
        default: nil
        }
    }

    private static func message(_ status: Status) -> String? {
        switch status {
        case .loading: "Loading"
        case .decompressing: "Decompressing firmware"
        case .downloading: "Downloading firmware"
        case .scheduling: "Scheduling the update"
        case .deviceRead: "Reading from the device"
        case .deviceErase: "Erasing the device"
        case .deviceWrite: "Writing firmware"
        case .deviceVerify: "Verifying firmware"
        case .deviceRestart: "Restarting the device"
        case .waitingForAuth: "Waiting for authentication"
        case .deviceBusy: "Waiting for the device"
        case .shutdown: "fwupd is shutting down"
        case .waitingForUser: "Waiting for the user"
        default: nil
        }
    }

    private var bar: HonestBar
    private var active = false
    private var wrote = false
    private var writeFinished = false
    /// The error of a device whose update failed during this operation (DeviceChanged).
    private var deviceError: String?
    /// Whether a device's update succeeded during this operation (DeviceChanged).
    private var deviceSucceeded = false
    /// What a device asked of the user (DeviceRequest), shown until the next phase.
    private var pendingRequest: String?
    /// Whether fwupd's `Percentage` is the whole operation's (fwupd 1.7 and later: one
    /// progress for everything it does) rather than the current phase's, starting again
    /// at 0 in each (earlier releases). Overall, the bar follows it as it is.
    package var percentageIsOverall = false

    /// Whether a `DaemonVersion` (such as "2.0.20") reports one overall percentage.
    package static func reportsOverallPercentage(daemonVersion: String) -> Bool {
        let parts = daemonVersion.split(separator: ".").map { Int($0) ?? 0 }
        guard let major = parts.first else { return false }
        return major > 1 || (major == 1 && parts.count > 1 && parts[1] >= 7)
    }
    /// Each device's last `UpdateState`, so that only a change to failed counts.
    private var updateStates: [String: UInt32] = [:]
    package var successMessage = "Firmware updated"
    package var failureMessage = "Firmware update failed"

    package init(settings: HonestBar.Settings = HonestBar.Settings()) {
        bar = HonestBar(settings: settings)
    }

    package mutating func requests(status code: UInt32, percentage: UInt32, at now: UInt64) -> [Request] {
        // A status this translator does not know (fwupd's start-up `unknown`, or a newer
        // one) changes nothing.
        guard let status = Status(rawValue: code), status != .unknown else { return [] }
        var requests: [Request] = []
        switch status {
        case .idle:
            guard active else { break }
            active = false
            if let deviceError {
                requests += bar.finish(.failure, message: deviceError.isEmpty ? failureMessage : deviceError)
            } else if deviceSucceeded {
                requests += bar.finish(.success, message: successMessage)
            } else if wrote {
                requests += writeFinished
                    ? bar.finish(.success, message: successMessage) : bar.finish(.failure, message: failureMessage)
            }
        default:
            if !active {
                active = true
                wrote = false
                writeFinished = false
                deviceError = nil
                deviceSucceeded = false
                pendingRequest = nil
                requests += bar.start(message: Self.message(status), at: now)
            }
            if percentageIsOverall {
                if status == .deviceWrite { wrote = true }
                if wrote && percentage >= 100 { writeFinished = true }
                let waiting = Self.phase(status) == nil
                if !waiting { pendingRequest = nil }
                let text = waiting ? (pendingRequest ?? Self.message(status)) : Self.message(status)
                requests += bar.report(Double(min(percentage, 100)), message: text, at: now)
                break
            }
            guard let phase = Self.phase(status) else {
                // Waiting (for the device, the user, authentication) keeps a request on show.
                requests += bar.report(bar.shown, message: pendingRequest ?? Self.message(status), at: now)
                break
            }
            pendingRequest = nil
            let text = Self.message(status)
            if status == .deviceWrite { wrote = true }
            if phase > 4 || (status == .deviceWrite && percentage >= 100) { writeFinished = wrote }
            let position = StepWeights.position(
                weights: Self.weights, step: phase, fraction: Double(min(percentage, 100)) / 100)
            requests += bar.report(position.value, checkpoint: position.checkpoint, message: text, at: now)
        }
        return requests
    }

    /// fwupd's `DeviceChanged` for device `id`: its `UpdateState` (FwupdUpdateState) and
    /// `UpdateError` where the signal carries them. A device whose state changes to failed
    /// (3) or failed-transient (5) during an operation makes its end a failure with the
    /// device's error; a state left from an earlier update does not count.
    /// A change to success (2) or needs-reboot (4) makes the end a success.
    package mutating func deviceChanged(id: String, updateState: UInt32?, updateError: String?) {
        let state = updateState ?? 0
        let before = updateStates[id] ?? 0
        if updateStates.count < 256 || updateStates[id] != nil { updateStates[id] = state }
        guard active else { return }
        if (state == 2 || state == 4) && state != before { deviceSucceeded = true }
        guard state == 3 || state == 5 else { return }
        let error = CompatText.clean(updateError ?? "")
        if state != before || deviceError != nil { deviceError = error.isEmpty ? (deviceError ?? "") : error }
    }

    /// fwupd's `DeviceRequest`: the user has to do something (`message`, fwupd's own
    /// text, or nil with a known request `id`), shown as the message during an operation.
    package mutating func deviceRequest(message: String?, id: String?, at now: UInt64) -> [Request] {
        guard active else { return [] }
        let text = CompatText.clean(message ?? "")
        guard let shown = text.isEmpty ? id.flatMap(Self.requestText) : text else { return [] }
        pendingRequest = shown
        return bar.report(bar.shown, message: shown, at: now)
    }

    /// What the requests fwupd names without a message ask for.
    private static func requestText(_ id: String) -> String? {
        switch id {
        case "org.freedesktop.fwupd.request.remove-replug": "Unplug and replug the device"
        case "org.freedesktop.fwupd.request.remove-usb-cable": "Unplug the device's USB cable"
        case "org.freedesktop.fwupd.request.insert-usb-cable": "Plug the device's USB cable in"
        case "org.freedesktop.fwupd.request.press-unlock": "Press the unlock button on the device"
        case "org.freedesktop.fwupd.request.do-not-power-off": "Do not turn off the device"
        default: nil
        }
    }

    /// fwupd left the bus (stopped, crashed, restarted): an operation under way died with
    /// it and ends in failure, so the next one starts from 0.
    package mutating func serviceLost(at now: UInt64) -> [Request] {
        guard active else { return [] }
        active = false
        return bar.finish(.failure, message: Self.lostMessage)
    }

    static let lostMessage = "Update interrupted: fwupd stopped"

    package mutating func tick(at now: UInt64) -> [Request] { bar.tick(at: now) }

    package func nextTick(after now: UInt64) -> UInt64? { bar.nextTick(after: now) }
}

/// A translator of an update tool's D-Bus interface (RAUC's, fwupd's), as the follower
/// both share drives it: besides the tool's own reports, what the tool leaving the bus
/// means, and the bar's ticks between reports.
package protocol BusToolTranslator {
    /// The tool left the bus (its name changed hands, or the connection failed).
    mutating func serviceLost(at now: UInt64) -> [Request]
    mutating func tick(at now: UInt64) -> [Request]
    func nextTick(after now: UInt64) -> UInt64?
}

extension RaucProgressTranslator: BusToolTranslator {}
extension FwupdProgressTranslator: BusToolTranslator {}
