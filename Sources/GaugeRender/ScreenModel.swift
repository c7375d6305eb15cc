import GaugeProtocol

/// What the screen should show: the target value and how the shown value eases
/// toward it, the texts, the mode and the state. Time is passed in, never read.
package struct ScreenModel: Equatable, Sendable {
    /// The value last asked for, 0...100.
    package private(set) var target = 0.0
    private var from = 0.0
    private var start = 0.0
    private var duration = 0.0
    private var easing = Easing.easeInOut

    package var message = ""
    package var title = ""
    package var mode = DisplayMode.determinate
    package var state = RunState.begin
    /// A question asked on the screen, shown below the message; nil: none.
    package var entry: Entry?
    /// The details view: the boot's messages so far, shown above the splash's text in
    /// place of the logo; nil: hidden.
    package var details: [String]?
    /// The failure screen (`failure`): a box saying what failed, in place of the logo and
    /// of the details view; nil: not shown.
    package var failure: FailureReport?

    package init() {}

    /// The first value also ends the `begin` state.
    /// Moves toward `value` from wherever the bar is at `time` (retargeting mid-way
    /// never jumps back), over `duration` seconds with `easing`. Values may go down.
    package mutating func setTarget(_ value: Double, at time: Double, duration: Double, easing: Easing) {
        let clamped = min(max(value, 0), 100)
        if state == .begin { state = .running }
        from = shown(at: time)
        target = clamped
        start = time
        self.duration = from == clamped ? 0 : max(0, duration)
        self.easing = easing
    }

    /// Jumps to `value` at once.
    package mutating func setTarget(_ value: Double) {
        if state == .begin { state = .running }
        target = min(max(value, 0), 100)
        from = target
        duration = 0
    }

    /// The value shown at `time`, 0...100.
    package func shown(at time: Double) -> Double {
        guard duration > 0, time < start + duration else { return target }
        guard time > start else { return from }
        return from + (target - from) * easing((time - start) / duration)
    }

    /// True once the shown value has reached the target and no transition runs.
    package func isSettled(at time: Double) -> Bool {
        duration <= 0 || time >= start + duration
    }

    /// When the running transition ends (nil if none).
    func transitionEnd(after time: Double) -> Double? {
        isSettled(at: time) ? nil : start + duration
    }
}
