import GaugeProtocol

/// One honest bar for a tool that reports its work in steps (`gaugectl swupdate`,
/// `bootc`, `systemd`, ...): turns what the tool reports into the requests that keep the
/// screen truthful.
///
/// - Within one operation (from `start` to `finish`) the bar never goes backwards: a tool
///   whose value drops (a new step starting at 0 %, a recount of the steps) holds the bar
///   where it is until the tool passes it again.
/// - Inside a long step the bar may creep by time, slowly, towards the step's end (the
///   *checkpoint*), covering ever less of the gap and never reaching it: the real report
///   at the end of the step is always a visible move.
/// - When nothing new is reported for `stallSeconds` (no higher value, no other message)
///   the bar switches to the indeterminate style; the next real progress switches back.
/// - The end shows success (the bar full) or failure, with the tool's message. Only the
///   end fills the bar: while the operation runs the bar stops at `runningMaximum`,
///   whatever the tool reports (its last step at 100 %, every step done with the stream
///   still open, nonsense values).
///
/// Values are percentages (0...100), sent cut down to one decimal. Time is given by the caller in nanoseconds on any
/// monotonic clock, so the bar is a pure value and tests need no clock.
package struct HonestBar: Sendable {
    package struct Settings: Equatable, Sendable {
        /// Nothing new for this long switches to the indeterminate style; nil never.
        package var stallSeconds: Double?
        /// Seconds after the last report in which the creep covers half of its share of
        /// the gap to the checkpoint; nil: no creeping.
        package var creepHalfSeconds: Double?
        /// The largest share of the gap to the checkpoint that creeping may cover (< 1).
        package var creepShare: Double
        /// Whether `stallSeconds` is still to come from the daemon's theme (`stall_time`,
        /// in its status): no --stall was given.
        package var stallFromTheme = false

        package init(stallSeconds: Double? = 20, creepHalfSeconds: Double? = 30, creepShare: Double = 0.9) {
            self.stallSeconds = stallSeconds
            self.creepHalfSeconds = creepHalfSeconds
            self.creepShare = max(0, min(creepShare, 0.99))
        }
    }

    /// The most a running operation shows: 100 is `finish(.success)`'s alone.
    package static let runningMaximum = 99.9

    /// How often `tick` has something to do while the bar creeps.
    package static let creepIntervalNanoseconds: UInt64 = 250_000_000

    package let settings: Settings
    /// Whether an operation is under way (started and not finished).
    package private(set) var isRunning = false
    /// The value last sent (0...100).
    package private(set) var shown: Double = 0
    /// Whether the bar was switched to the indeterminate style for a stall.
    package private(set) var isStalled = false
    /// The value the tool last reported, and the end of the step it is in.
    private var reported: Double = 0
    private var checkpoint: Double = 0
    private var message: String?
    /// When the tool last reported something new.
    private var lastActivity: UInt64 = 0

    package init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// Starts an operation at 0, in the running state with `message`. The value goes
    /// back to 0 before the state changes, so a running bar never goes back: the last
    /// operation's bar empties in its own success or failure colours.
    package mutating func start(message: String?, at now: UInt64) -> [Request] {
        var requests: [Request] = isStalled ? [.mode(.determinate)] : []
        begin(at: now)
        self.message = message
        requests += [.progress(0, message: nil), .state(.running, message: message)]
        return requests
    }

    private mutating func begin(at now: UInt64) {
        isRunning = true
        isStalled = false
        shown = 0
        reported = 0
        checkpoint = 0
        lastActivity = now
    }

    /// The tool reports `value` (percent) inside a step that ends at `checkpoint`
    /// (percent, nil: the value itself), and optionally what it is doing. A report
    /// outside an operation begins one silently (a tool without a start of its own,
    /// such as systemd's boot progress): the bar counts from 0 again.
    package mutating func report(
        _ value: Double, checkpoint: Double? = nil, message: String? = nil, at now: UInt64
    ) -> [Request] {
        var requests: [Request] = []
        if !isRunning {
            if isStalled { requests.append(.mode(.determinate)) }
            begin(at: now)
        }
        let value = Self.clamped(value)
        let end = max(value, Self.clamped(checkpoint ?? value))
        let newMessage = message.flatMap { $0 == self.message ? nil : $0 }
        if value > reported || newMessage != nil {
            lastActivity = now
            if isStalled {
                isStalled = false
                requests.append(.mode(.determinate))
            }
        }
        reported = value
        self.checkpoint = end
        if let newMessage { self.message = newMessage }
        let next = Self.cut(min(max(shown, value), Self.runningMaximum))
        if next > shown {
            shown = next
            requests.append(.progress(next, message: newMessage))
        } else if let newMessage {
            requests.append(.message(newMessage))
        }
        return requests
    }

    /// What time alone changes: the creep, and the switch to indeterminate on a stall.
    package mutating func tick(at now: UInt64) -> [Request] {
        guard isRunning, !isStalled else { return [] }
        let idle = Double(now &- lastActivity) / 1e9
        if let stall = settings.stallSeconds, now >= lastActivity, idle >= stall {
            isStalled = true
            return [.mode(.indeterminate)]
        }
        guard let half = settings.creepHalfSeconds, half > 0, now >= lastActivity, checkpoint > reported else { return [] }
        let share = settings.creepShare * idle / (idle + half)
        let target = Self.cut(min(reported + (checkpoint - reported) * share, Self.runningMaximum))
        guard target > shown, target < checkpoint else { return [] }
        shown = target
        return [.progress(target, message: nil)]
    }

    /// When `tick` should be called next (nanoseconds on the caller's clock); nil when
    /// only a report can change anything.
    package func nextTick(after now: UInt64) -> UInt64? {
        guard isRunning, !isStalled else { return nil }
        var next: UInt64?
        if let stall = settings.stallSeconds {
            next = lastActivity &+ UInt64(max(0, stall) * 1e9)
        }
        // Only while the creep can still move the bar (it stops short of the checkpoint).
        if settings.creepHalfSeconds != nil,
            Self.cut(min(reported + (checkpoint - reported) * settings.creepShare, Self.runningMaximum)) > shown
        {
            let creep = now &+ Self.creepIntervalNanoseconds
            next = min(next ?? creep, creep)
        }
        return next.map { max($0, now) }
    }

    /// Ends the operation: success fills the bar (`state success` does, in the daemon:
    /// no `progress 100` before it, which would show a full bar still running); failure
    /// leaves it where it is.
    package mutating func finish(_ outcome: RunState, message: String?) -> [Request] {
        var requests: [Request] = []
        if isStalled { requests.append(.mode(.determinate)) }
        isStalled = false
        isRunning = false
        if outcome == .success { shown = 100 }
        self.message = message
        requests.append(.state(outcome, message: message))
        return requests
    }

    private static func clamped(_ value: Double) -> Double {
        guard value.isFinite else { return 0 }
        return min(max(value, 0), 100)
    }

    /// `value` cut down to one decimal (a tiny allowance keeps 57 from becoming 56.9).
    /// By hand: `rounded()` needs libm, which this module does not link.
    static func cut(_ value: Double) -> Double {
        Double(Int(value * 10 + 1e-7)) / 10
    }
}

/// Where a value inside one of several steps of given weights lies on the whole bar.
package enum StepWeights {
    /// The overall percentage after `fraction` (0...1) of step `index` (0-based) of
    /// steps weighted `weights` (any non-negative numbers; all zero counts as equal),
    /// and the percentage at the end of that step. An index past the last step is the
    /// end of the last step.
    package static func position(
        weights: [Double], step index: Int, fraction: Double
    ) -> (value: Double, checkpoint: Double) {
        guard !weights.isEmpty else { return (0, 0) }
        var clean = weights.map { $0.isFinite && $0 > 0 ? $0 : 0 }
        var total = clean.reduce(0, +)
        if total == 0 {
            clean = weights.map { _ in 1 }
            total = Double(weights.count)
        }
        guard index >= 0 else { return (0, 0) }
        guard index < clean.count else { return (100, 100) }
        let before = clean[..<index].reduce(0, +)
        let part = fraction.isFinite ? min(max(fraction, 0), 1) : 0
        let value = (before + clean[index] * part) / total * 100
        let end = (before + clean[index]) / total * 100
        return (min(value, 100), min(end, 100))
    }
}
