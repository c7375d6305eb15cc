import GaugeSystem

/// The boot's estimate on the bar (`--boot`): the `BootEstimator` looked at four times a
/// second while it runs and no failure screen holds it, each value handed to `onValue`.
final class BootEstimateTicker {
    /// The estimate, and the boot's steps for the next boot's history.
    var estimator: BootEstimator
    /// A Plymouth client's `pause-progress`, until its `unpause-progress`.
    var pausedByClient = false
    /// Shows a value of the estimate (percent, at a `MonotonicClock` time).
    var onValue: ((Double, Double) -> Void)?
    private let loop: EventLoop
    private let log: Log
    private var timer: FrameTimer?

    init(historyPath: String, loop: EventLoop, log: Log) {
        estimator = BootEstimator(historyPath: historyPath, log: log)
        self.loop = loop
        self.log = log
    }

    /// The bar follows the boot's estimate from now on.
    func start() {
        estimator.start()
        do {
            let timer = try FrameTimer(loop: loop) { [self] _ in update() }
            try timer.start(fps: 4)
            self.timer = timer
        } catch {
            log.info("cannot arm the boot estimate's timer: \(error)")
        }
        update()
    }

    /// Shows the estimate as it stands, if it moved.
    func update() {
        let now = MonotonicClock.now()
        guard let percent = estimator.valueToShow(at: now) else { return }
        onValue?(percent, now)
    }

    /// While a failure screen is up the estimate holds, its timer stopped (a person reads
    /// it: not boot time, and a screen left up for good wakes nobody); taken down (a unit
    /// failed and the boot goes on), the bar goes on from where it was.
    func hold(_ held: Bool) {
        guard estimator.isRunning else { return }
        guard !held else { return timer?.stop() ?? () }
        do throws(SystemError) {
            try timer?.start(fps: 4)
        } catch {
            log.info("cannot arm the boot estimate's timer again: \(error)")
        }
        update()
    }

    /// A client took the bar over (`reason` for the log): the estimate ends for good.
    func end(because reason: String) {
        guard estimator.isRunning else { return }
        estimator.end(because: reason)
        close()
        timer = nil
    }

    func close() {
        timer?.close()
    }
}
