import GaugeProtocol
import GaugeSystem
import GaugeTranslators

/// `gaugectl systemd --waits`: tells the boot screen what a boot that stops moving waits
/// for (see `StartJobWaits`), from systemd's job signals on its own socket: no polling
/// while the boot moves; while a job is named, its message once a second (never with the
/// theme's `wait_notice` 0). And how the boot's steps read: their units' Descriptions
/// (the loaded units' in one ListUnits, a later one's read alone), sent as `describe`. And
/// a unit's failure at once: the failure screen's first words when systemd queues Gauge's
/// handler for it (`gauged-unit-failed@UNIT.service`), which then writes the rest. Ends (0)
/// when the boot does (StartupFinished) or fails (a job for emergency or rescue mode: the
/// failure screen takes over), or when the boot screen has gone; exit 3 with no daemon, 1
/// on an `err` reply.
enum SystemdWaitsCommand {
    static let unitInterface = "org.freedesktop.systemd1.Unit"

    static func run(_ options: SystemdCommand.Options, invocation: Invocation) -> Never {
        unblockSignals()
        let session = DaemonSession(socketPath: invocation.socketPath, timeout: invocation.timeout)
        let follower = Follower(
            session: session, noticeAfter: noticeAfter(session, invocation: invocation),
            askPasswordDirectory: options.askPasswordDirectory)
        BusPolling.run(
            label: "systemd",
            connect: { () throws(BusFailure) in
                try BusConnection(
                    address: options.address ?? SystemdCommand.privateAddress, direct: options.address == nil,
                    timeout: invocation.timeout, destination: SystemdCommand.destination, path: SystemdCommand.path,
                    interface: SystemdCommand.interface)
            },
            rules: ["JobNew", "JobRemoved", "StartupFinished"].map {
                "type='signal',interface='\(SystemdCommand.interface)',member='\($0)'"
            },
            interval: nil,
            sample: { bus, now throws(BusFailure) in try follower.start(bus, at: now) },
            signal: { bus, _, member, now throws(BusFailure) in follower.signal(member, on: bus, at: now) },
            lost: { _ in follower.bus = nil },
            tick: { now in follower.look(at: now) },
            nextTick: { _ in follower.waits.nextCheck() })
        finish(.ok)
    }

    /// The theme's `wait_notice`, from the daemon's status (60 from a daemon older than it).
    private static func noticeAfter(_ session: DaemonSession, invocation: Invocation) -> Double {
        do throws(ConnectionFailure) {
            _ = try session.connect(waitingForDaemon: invocation.waitsForDaemon)
            guard case .ok(let payload?) = try session.send(.status), let status = Status.parse(json: payload) else {
                printError("gaugectl: systemd: the daemon's status could not be read")
                finish(.daemonError)
            }
            return status.waitNotice ?? 60
        } catch {
            printError("gaugectl: systemd: \(error.message)")
            finish(.noDaemon)
        }
    }

    /// The loop's state: the jobs' times, the connection, and what the screen was told.
    private final class Follower {
        var waits: StartJobWaits
        var bus: BusConnection?
        private let session: DaemonSession
        /// The jobs whose unit's start time was read: it does not change while the job runs.
        private var startTimesRead: [UInt32] = []
        /// The unit named last, its description and time limit (seconds), read once.
        private var described: (unit: String, description: String, limit: Double?)?
        /// The units whose steps were described (each once; a boot has a few hundred, and
        /// past 1,024 the rest keep their names).
        private var stepsDescribed: [String] = []
        /// Whether the daemon takes `describe` (an older one answers `err`: its steps keep
        /// their names).
        private var describes = true

        /// Where systemd's password requests appear.
        private let askPasswordDirectory: String

        init(session: DaemonSession, noticeAfter: Double, askPasswordDirectory: String) {
            self.session = session
            self.askPasswordDirectory = askPasswordDirectory
            waits = StartJobWaits(noticeAfter: noticeAfter)
        }

        /// Whether systemd asks for a password now (an `ask.*` request): the job that runs
        /// meanwhile (a passphrase's `systemd-cryptsetup@`) waits for a person.
        private var passwordAsked: Bool {
            ((try? Syscall.directoryEntries(askPasswordDirectory)) ?? []).contains { $0.hasPrefix("ask.") }
        }

        /// Connected (again): systemd sends its job signals from now on; the jobs it has
        /// count from when it queued the boot's (its units loaded), or from now. With no
        /// boot under way (started by hand on a running system) there is nothing to follow.
        func start(_ bus: BusConnection, at now: UInt64) throws(BusFailure) -> Bool {
            self.bus = bus
            let state = try bus.string("SystemState")
            guard state == "initializing" || state == "starting" else {
                printError("gaugectl: systemd: the system is \(CompatText.clean(state)); no boot to follow")
                return false
            }
            try bus.call("Subscribe")
            let loaded = (try? bus.uint64("UnitsLoadFinishTimestampMonotonic")) ?? 0
            let created = loaded > 0 && loaded < now / 1000 ? loaded &* 1000 : now
            let jobs = try bus.listJobs()
            waits.listed(jobs, createdBy: created)
            // Emergency or rescue mode queued before (a boot that failed as the follower
            // started): the failed boot's screen now, and nothing more to follow.
            if let ending = jobs.first(where: { $0.type == "start" && StartJobWaits.endsTheBoot($0.unit) }) {
                showBootFailed(ending.unit)
                return false
            }
            // A handler queued before (or while signals were lost): its unit's screen now.
            for job in jobs where job.type == "start" {
                if let failed = StartJobWaits.failedUnit(handledBy: job.unit) { showFailed(failed) }
            }
            describeLoaded(on: bus)
            return true
        }

        func signal(_ member: String, on bus: BusConnection, at now: UInt64) -> Bool {
            switch member {
            case "JobNew":
                guard let job = bus.signalJob() else { break }
                if StartJobWaits.endsTheBoot(job.unit) {
                    // The failure screen comes, with its own message.
                    if waits.shown != nil { send(.message("")) }
                    showBootFailed(job.unit)
                    return false
                }
                if let failed = StartJobWaits.failedUnit(handledBy: job.unit) { showFailed(failed) }
                waits.added(job.id, at: now)
                describeStep(job.unit, path: bus.unitPath(job.unit), on: bus)
            case "JobRemoved":
                if let job = bus.signalJob(), waits.removed(job.id) { send(.message("")) }
            case "StartupFinished":
                if waits.shown != nil { send(.message("")) }
                return false
            default:
                break
            }
            return true
        }

        /// At `nextCheck`: the oldest running start job past the notice named, or the
        /// message cleared when none is any more.
        func look(at now: UInt64) {
            guard let due = waits.nextCheck(), now >= due, let bus else { return }
            do throws(BusFailure) {
                let overdue = waits.overdue(try bus.listJobs(), at: now)
                for job in overdue where !startTimesRead.contains(job.id) {
                    startTimesRead.append(job.id)
                    let began = (try? bus.uint64("InactiveExitTimestampMonotonic", path: job.unitPath, interface: unitInterface)) ?? 0
                    if began > 0 { waits.began(job.id, at: began &* 1000) }
                }
                // Still looked at each second while one is overdue: named once answered.
                guard let job = waits.oldest(of: overdue, at: now), !passwordAsked else {
                    if waits.shown != nil { send(.message("")) }
                    waits.show(nil, at: now)
                    return
                }
                let unit = try describe(job, on: bus)
                waits.show(job.id, at: now)
                let waited = waits.waited(job.id, at: now)
                send(.message(StartJobWaits.message(description: unit.description, waited: waited, limit: unit.limit)))
            } catch {
                printError("gaugectl: systemd: \(error.message)")
                waits.show(nil, at: now)
            }
        }

        /// The unit's description (its name when it has none) and the first limit on its
        /// start: the job's timeouts (a device's `x-systemd.device-timeout=`), a service's
        /// TimeoutStartUSec; nil when none is set.
        private func describe(_ job: StartJobWaits.ListedJob, on bus: BusConnection) throws(BusFailure) -> (description: String, limit: Double?) {
            if let known = described, known.unit == job.unit { return (known.description, known.limit) }
            let description = try bus.string("Description", path: job.unitPath, interface: unitInterface)
            var limits = ["JobRunningTimeoutUSec", "JobTimeoutUSec"].compactMap {
                try? bus.uint64($0, path: job.unitPath, interface: unitInterface)
            }
            if job.unit.hasSuffix(".service") {
                limits += [try? bus.uint64("TimeoutStartUSec", path: job.unitPath, interface: "org.freedesktop.systemd1.Service")]
                    .compactMap { $0 }
            }
            let limit = limits.filter { $0 > 0 && $0 != .max }.min().map { Double($0) / 1e6 }
            let text = CompatText.clean(description.isEmpty ? job.unit : description)
            described = (job.unit, text, limit)
            return (text, limit)
        }

        /// The failure screen's first words for `unit` the moment systemd queues Gauge's
        /// handler for it, as the handler's script puts them up once it runs (seconds later
        /// on a slow core: its sandbox and shell are set up first), then finishes and
        /// answers: only over a splash on screen, never over another failure screen.
        private func showFailed(_ unit: String) {
            guard showFailure(title: Self.unitTitle, summary: "\(CompatText.clean(unit)) failed", over: []) else { return }
            printError("gaugectl: systemd: \(CompatText.clean(unit)) failed: its failure screen is up")
        }

        /// The failed boot's screen the moment systemd queues emergency or rescue mode
        /// (`target`), in the words the mode's own handler (`gauged-boot-failed@`, started
        /// with the mode's target, seconds later on a slow core) puts up first before it
        /// adds what failed: over a splash on screen, replacing a failed unit's screen
        /// (that handler leaves such a screen to this one) but no other.
        private func showBootFailed(_ target: String) {
            let mode = target.hasPrefix("rescue.") ? "rescue" : "emergency"
            let title = mode == "rescue" ? "This system is in rescue mode" : "This system could not start"
            guard showFailure(title: title, summary: "The boot stopped in \(mode) mode", over: [Self.unitTitle]) else { return }
            printError("gaugectl: systemd: \(target) queued: the failed boot's screen is up")
        }

        /// A failed unit's screen's title (the handler's script's own).
        private static let unitTitle = "Part of this system could not start"

        /// Puts up the failure screen's `title` and `summary` where the splash is on screen
        /// and no failure screen is up but one titled as in `over`; whether it did.
        private func showFailure(title: String, summary: String, over: [String]) -> Bool {
            do throws(ConnectionFailure) {
                _ = try session.connect(waitingForDaemon: false)
                guard case .ok(let payload?) = try session.send(.status), let status = Status.parse(json: payload),
                    status.visible, status.display.name != "none", status.failure.map({ over.contains($0.title) }) ?? true
                else { return false }
                // One write: the daemon takes both in one turn, never showing the title alone.
                let replies = try session.send(batch: [.failure(title: title), .failureSummary(summary)])
                for case .err(let error) in replies {
                    printError("gaugectl: systemd: \(error.message)")
                    finish(.daemonError)
                }
                return true
            } catch {
                finish(.ok)
            }
        }

        /// Tells the daemon how `unit`'s step reads: its Description, read once, when
        /// systemd sends the unit as a step and the text says more than its name.
        private func describeStep(_ unit: String, path: String, on bus: BusConnection) {
            guard isNewStep(unit),
                let request = Self.describe(unit, as: try? bus.string("Description", path: path, interface: unitInterface))
            else { return }
            send(request)
        }

        /// Whether `unit` is a step not described yet (and now counted as described).
        private func isNewStep(_ unit: String) -> Bool {
            guard describes, stepsDescribed.count < 1024, StartJobWaits.isStep(unit), !stepsDescribed.contains(unit) else { return false }
            stepsDescribed.append(unit)
            return true
        }

        /// `describe` for `unit`, nil when `text` says no more than its name (or is too long
        /// for a request line: none is, and then the name shows).
        private static func describe(_ unit: String, as text: String?) -> Request? {
            guard let text, !text.isEmpty, text != unit, text.utf8.count < 2048 else { return nil }
            return .describe(unit: unit, text: CompatText.clean(text))
        }

        /// Every loaded unit's step described at once: one ListUnits, one batch of `describe`
        /// (a Get and a round trip each would keep the follower behind a booting systemd's
        /// signals for seconds on a slow core); units loaded later come one by one.
        private func describeLoaded(on bus: BusConnection) {
            guard describes, let units = try? bus.listUnits() else { return }
            let requests = units.filter { isNewStep($0.unit) }.compactMap { Self.describe($0.unit, as: $0.description) }
            guard !requests.isEmpty else { return }
            do throws(ConnectionFailure) {
                for reply in try session.send(batch: requests) {
                    guard case .err(let error) = reply else { continue }
                    printError("gaugectl: systemd: \(error.message); the boot's steps keep their units' names")
                    describes = false
                    return
                }
                printError("gaugectl: systemd: \(requests.count) units' descriptions sent")
            } catch {
                finish(.ok)
            }
        }

        /// Sends `request`; the boot screen gone ends the command (0), an `err` reply too
        /// (1), but to `describe`, after which steps keep their names.
        private func send(_ request: Request) {
            do throws(ConnectionFailure) {
                _ = try session.connect(waitingForDaemon: false)
                if case .err(let error) = try session.send(request) {
                    printError("gaugectl: systemd: \(error.message)")
                    guard case .describe = request else { finish(.daemonError) }
                    printError("gaugectl: systemd: the boot's steps keep their units' names")
                    describes = false
                }
            } catch {
                finish(.ok)
            }
        }
    }
}
