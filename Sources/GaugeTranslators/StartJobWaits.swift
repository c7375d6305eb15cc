import GaugeProtocol

/// What the boot screen says of a boot that stops moving: systemd's jobs followed from its
/// JobNew and JobRemoved signals (with the list it had when the follower started), and once
/// one has run longer than the theme's `wait_notice`, the message "Waiting for DESCRIPTION
/// (WAITED of LIMIT)" for the oldest running start job among them, again each second
/// while it runs, cleared when it ends. The screen stays a progress screen: a job that
/// fails is systemd's to report (emergency mode, the failure screen).
///
/// Only the times come from here; which jobs run (systemd's ListJobs) and their
/// descriptions and limits are read by the caller when `checkDue` says so.
package struct StartJobWaits: Sendable {
    /// A job of systemd's as ListJobs gives it.
    package struct ListedJob: Equatable, Sendable {
        package var id: UInt32
        package var unit: String
        package var type: String
        package var state: String
        package var unitPath: String

        package init(id: UInt32, unit: String, type: String, state: String, unitPath: String) {
            self.id = id
            self.unit = unit
            self.type = type
            self.state = state
            self.unitPath = unitPath
        }

        /// ListJobs' answer as CGaugeBus writes it: "ID\tUNIT\tTYPE\tSTATE\tUNIT_PATH" a line.
        package static func parse(_ text: String) -> [ListedJob] {
            text.split(separator: "\n").compactMap { line in
                let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
                guard fields.count == 5, let id = UInt32(fields[0]) else { return nil }
                return ListedJob(
                    id: id, unit: String(fields[1]), type: String(fields[2]), state: String(fields[3]),
                    unitPath: String(fields[4]))
            }
        }
    }

    /// Seconds a job may run before it is named; 0: never.
    package let noticeAfter: Double
    /// The jobs known now and when each was created (nanoseconds, CLOCK_MONOTONIC). An
    /// array, not a dictionary: a boot has a few hundred jobs at most, and the executable
    /// carries no dictionary of this kind.
    private var jobs: [(id: UInt32, since: UInt64)] = []
    /// The job whose wait the message shows now.
    package private(set) var shown: UInt32?
    /// When to look at the jobs next while some are overdue (a second after the last look).
    private var nextLook: UInt64?

    package init(noticeAfter: Double) {
        self.noticeAfter = noticeAfter
    }

    private var notice: UInt64 { UInt64(noticeAfter * 1e9) }

    private func since(_ id: UInt32) -> UInt64? {
        for job in jobs where job.id == id { return job.since }
        return nil
    }

    /// A JobNew.
    package mutating func added(_ id: UInt32, at now: UInt64) {
        if since(id) == nil { jobs.append((id, now)) }
    }

    /// A JobRemoved: true when it was the job shown (its message is to be cleared).
    package mutating func removed(_ id: UInt32) -> Bool {
        jobs.removeAll { $0.id == id }
        guard shown == id else { return false }
        shown = nil
        nextLook = nil
        return true
    }

    /// The jobs systemd has now (at the start, or after signals were lost): the ones not
    /// known yet count from `createdBy` (when systemd queued the boot's jobs), and the
    /// ones gone are forgotten.
    package mutating func listed(_ listed: [ListedJob], createdBy: UInt64) {
        jobs = listed.map { ($0.id, since($0.id) ?? createdBy) }
        if let shown, since(shown) == nil { self.shown = nil }
    }

    /// When the jobs are next worth a look: a second after the last look while some are
    /// overdue, else when the oldest reaches the notice; nil with none (or no notice).
    package func nextCheck() -> UInt64? {
        guard noticeAfter > 0 else { return nil }
        if let nextLook { return nextLook }
        var oldest: UInt64?
        for job in jobs where job.since < oldest ?? .max { oldest = job.since }
        return oldest.map { $0 &+ notice }
    }

    /// The running start jobs of `listed` (ListJobs now) that have waited past the notice,
    /// in ListJobs' order (`oldest` picks). One still waiting for others past it counts
    /// from now at the earliest: its own wait has not begun. While any is overdue, the
    /// next look is a second from `now`.
    package mutating func overdue(_ listed: [ListedJob], at now: UInt64) -> [ListedJob] {
        self.listed(listed, createdBy: now)
        var found: [ListedJob] = []
        for (index, job) in listed.enumerated() {
            guard now >= jobs[index].since &+ notice else { continue }
            if job.type == "start", job.state == "running", !Self.waitsForAPerson(job.unit) {
                found.append(job)
            } else {
                jobs[index].since = now
            }
        }
        nextLook = found.isEmpty ? nil : now &+ 1_000_000_000
        return found
    }

    /// The job of `candidates` that has waited longest and past the notice at `now` (the
    /// lower id of two that began together), or nil.
    package func oldest(of candidates: [ListedJob], at now: UInt64) -> ListedJob? {
        var best: (job: ListedJob, since: UInt64)?
        for job in candidates {
            guard let began = since(job.id), now >= began &+ notice else { continue }
            if let current = best, current.since < began || (current.since == began && current.job.id < job.id) { continue }
            best = (job, began)
        }
        return best?.job
    }

    /// Gauge's own units, whose jobs run while they wait for a person (the failure screen's
    /// key) or for the splash: never what the boot is stuck on.
    static func waitsForAPerson(_ unit: String) -> Bool { unit.hasPrefix("gauged") }

    /// Whether systemd sends `unit`'s start to the splash as a step (Plymouth's `update`:
    /// services, mounts and swaps) that is not one of Gauge's own: what is worth a
    /// description (`describe`).
    package static func isStep(_ unit: String) -> Bool {
        [".service", ".mount", ".swap"].contains { unit.hasSuffix($0) } && !Request.isGaugeUnit(unit)
    }

    /// The unit whose failure `unit` handles, for Gauge's handler
    /// `gauged-unit-failed@UNIT.service` (systemd queues it as the unit's OnFailure=);
    /// nil for any other unit.
    package static func failedUnit(handledBy unit: String) -> String? {
        let prefix = "gauged-unit-failed@", suffix = ".service"
        guard unit.hasPrefix(prefix), unit.hasSuffix(suffix), unit.utf8.count > prefix.utf8.count + suffix.utf8.count
        else { return nil }
        return String(unit.dropFirst(prefix.count).dropLast(suffix.count))
    }

    /// Whether a job for `unit` means the boot failed (emergency or rescue mode, or in
    /// dracut's systemd initrd its emergency shell, which its initqueue starts when the root
    /// never came): the failure screen says what, and the waits are not followed any more.
    package static func endsTheBoot(_ unit: String) -> Bool {
        unit == "emergency.target" || unit == "rescue.target" || unit == "dracut-emergency.service"
    }

    /// `job` began to run at `began` (its unit left the inactive state then), later than
    /// it was queued: its wait counts from then.
    package mutating func began(_ job: UInt32, at began: UInt64) {
        for index in jobs.indices where jobs[index].id == job && began > jobs[index].since {
            jobs[index].since = began
        }
    }

    /// `job` is the one the message shows now (nil: none is). With none, and none overdue
    /// at `now` (their waits counted from when they began), the next look waits for the
    /// first to reach the notice rather than coming each second.
    package mutating func show(_ job: UInt32?, at now: UInt64) {
        shown = job
        if job == nil, jobs.allSatisfy({ now < $0.since &+ notice }) { nextLook = nil }
    }

    /// How long `job` has waited at `now`, in seconds.
    package func waited(_ job: UInt32, at now: UInt64) -> Double {
        guard let began = since(job), now > began else { return 0 }
        return Double(now - began) / 1e9
    }

    /// "Waiting for /dev/disk/by-uuid/1234 (1 min 5 s of 1 min 30 s)"; without a limit
    /// "(1 min 5 s)".
    package static func message(description: String, waited: Double, limit: Double?) -> String {
        let time = limit.map { "\(duration(waited)) of \(duration($0))" } ?? duration(waited)
        return "Waiting for \(description) (\(time))"
    }

    /// Whole seconds as systemd's messages give them, in words: "45 s", "1 min 30 s",
    /// "2 min", "1 h 5 min".
    package static func duration(_ seconds: Double) -> String {
        let total = Int(max(0, min(seconds, 1e9)).rounded(.down))
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        var parts: [String] = []
        if hours > 0 { parts.append("\(hours) h") }
        if minutes > 0 { parts.append("\(minutes) min") }
        if rest > 0 || parts.isEmpty { parts.append("\(rest) s") }
        return parts.joined(separator: " ")
    }
}
