/// When the next frame is due. A change to a still screen is drawn at once; while the
/// picture moves, frames follow its own steps (the stripes' pixel steps, 35 a second with
/// the default theme; an indicator's frames, 50 a second) when those are no faster than
/// `--fps`, and `--fps` otherwise; once nothing moves and nobody waits for a frame, no
/// timer is armed at all. Every wakeup presents a frame. The daemon arms its `FrameTimer`
/// as told.
package struct FramePacer {
    /// How the frame timer is to be armed.
    package enum Timing: Equatable {
        /// Every `1 / fps` seconds, the first at once (`immediately`) or a period on.
        case rate(fps: Double, immediately: Bool)
        /// At `first`, `first + period`, ... (seconds on `MonotonicClock`).
        case steps(period: Double, first: Double)
        /// Disarmed: nothing moves.
        case idle
    }

    /// The frame rate while anything moves faster than its steps allow (`--fps`).
    package let fps: Double
    /// Whether the frame timer is armed.
    package var running = false
    /// A frame was due while the display could not take one (a page flip pending).
    var owed = false

    package init(fps: Int) {
        self.fps = Double(fps)
    }

    /// The picture may have changed: a frame at once, from a still screen (nil while the
    /// timer runs already; its next tick draws the change).
    package func wake() -> Timing? {
        running ? nil : .rate(fps: fps, immediately: true)
    }

    /// The timing after a frame was presented: idle once nothing is `animating` and
    /// nothing else needs frames (`keepTicking`: a `wait` to answer, a question's field);
    /// else, when the picture only moves in `steps` no faster than `fps`, a little after
    /// each step (so the picture computed at the tick has moved); else `fps`.
    package mutating func afterFrame(
        animating: Bool, keepTicking: Bool, steps: () -> (period: Double, next: Double)?
    ) -> Timing {
        guard animating || keepTicking else {
            running = false
            return .idle
        }
        if let steps = steps(), steps.period >= 1 / fps {
            return .steps(period: steps.period, first: steps.next + steps.period / 50)
        }
        return .rate(fps: fps, immediately: false)
    }
}
