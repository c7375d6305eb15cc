import GaugeProtocol

/// What the bar does for systemd's manager (`org.freedesktop.systemd1.Manager`), read
/// by polling: `Progress` (d, 0...1: the share of the jobs installed since the last
/// idle point that are done; it falls whenever new jobs come, and systemd announces no
/// change of it) and `SystemState`.
///
/// | SystemState | what the bar does |
/// |---|---|
/// | initializing, starting | a boot: `state running Starting the system`, then `Progress` × 100, never back |
/// | stopping | a shutdown, a new operation: `state running Stopping the system`, then the same |
/// | running | the boot is over: `state success` with the success message |
/// | degraded | `state failure N units failed` (`NFailedUnits`) |
/// | maintenance | `state failure` rescue or emergency mode |
/// | anything else | nothing |
package struct SystemdProgressTranslator: Sendable {
    package enum Phase: Equatable, Sendable {
        case boot, shutdown
    }

    private var bar: HonestBar
    package private(set) var phase: Phase?
    /// Whether a boot this translator followed has ended (running, degraded, maintenance).
    package private(set) var bootEnded = false
    package var successMessage = "System ready"

    package init(settings: HonestBar.Settings = HonestBar.Settings()) {
        bar = HonestBar(settings: settings)
    }

    /// Whether `state` ends a boot, so its failed-unit count is worth asking for.
    package static func endsBoot(_ state: String) -> Bool {
        state == "running" || state == "degraded" || state == "maintenance"
    }

    /// One reading of the manager. `failedUnits` matters for `degraded` only.
    package mutating func requests(
        state: String, progress: Double, failedUnits: UInt32? = nil, at now: UInt64
    ) -> [Request] {
        var requests: [Request] = []
        switch state {
        case "initializing", "starting":
            if phase != .boot {
                phase = .boot
                bootEnded = false
                requests += bar.start(message: "Starting the system", at: now)
            }
            requests += bar.report(progress * 100, at: now)
        case "stopping":
            if phase != .shutdown {
                phase = .shutdown
                requests += bar.start(message: "Stopping the system", at: now)
            }
            requests += bar.report(progress * 100, at: now)
        case "running", "degraded", "maintenance":
            guard phase == .boot, !bootEnded else { break }
            bootEnded = true
            switch state {
            case "running":
                requests += bar.finish(.success, message: successMessage)
            case "degraded":
                let count = failedUnits.map { $0 == 1 ? "1 unit failed" : "\($0) units failed" } ?? "Some units failed"
                requests += bar.finish(.failure, message: count)
            default:
                requests += bar.finish(.failure, message: "Maintenance mode: the boot did not finish")
            }
        default:
            break
        }
        return requests
    }

    package mutating func tick(at now: UInt64) -> [Request] { bar.tick(at: now) }

    package func nextTick(after now: UInt64) -> UInt64? { bar.nextTick(after: now) }
}
