import GaugeProtocol
import GaugeSystem

/// The bar's value during a boot (`--boot`) until a client reports progress itself:
/// `BootEstimate` fed by the previous boot's history, this boot's steps and systemd's
/// share of its jobs, on the boot's own clock (`BootClock`, which stops while a person
/// is asked something); and this boot's steps (`BootRecord`), saved at `quit` as the
/// next boot's history. The daemon asks it four times a second what to show.
package struct BootEstimator {
    private let historyPath: String
    private let log: Log
    /// The running estimate; nil before `start` and once a client took over the bar.
    private var estimate: BootEstimate?
    private var record = BootRecord()
    private var clock = BootClock()
    /// The value last put on the bar, in tenths of a percent.
    private var shown = -1.0

    package init(historyPath: String, log: Log) {
        self.historyPath = historyPath
        self.log = log
    }

    /// Whether the bar follows the estimate.
    package var isRunning: Bool { estimate != nil }

    /// The bar follows the estimate from now on, from the history at `historyPath`.
    package mutating func start() {
        estimate = BootEstimate(history: loadHistory())
    }

    /// The boot's time (seconds from the kernel's start, less the waits for a person) at
    /// monotonic `now`.
    package func bootTime(at now: Double) -> Double { clock.time(at: now) }

    /// The percentage to show at monotonic `now`, to a tenth; nil when the bar shows it
    /// already or no estimate runs. Never less than one given before.
    package mutating func valueToShow(at now: Double) -> Double? {
        guard var running = estimate else { return nil }
        let percent = (running.value(at: clock.time(at: now)) * 1000).rounded(.down) / 10
        estimate = running
        guard percent != shown else { return nil }
        shown = percent
        return percent
    }

    /// Step `name` reached at monotonic `now`: it moves the estimate, and, when
    /// `recorded` (a peer trusted with the boot's history), goes into the next history.
    package mutating func step(_ name: String, at now: Double, recorded: Bool) {
        let time = clock.time(at: now)
        if recorded { record.step(name, at: time) }
        estimate?.step(name, at: time)
    }

    /// systemd's share of the boot's jobs done, 0...1.
    package mutating func jobsDone(_ share: Double) {
        estimate?.jobsDone(share)
    }

    /// The bar is the client's from now on (the log says `reason`).
    package mutating func end(because reason: String) {
        guard estimate != nil else { return }
        estimate = nil
        log.info("\(reason): the boot estimate stops")
    }

    /// Stops or restarts the boot's clock at monotonic `now` while a person is asked
    /// something; the same state again changes nothing.
    package mutating func setPaused(_ paused: Bool, at now: Double) {
        guard paused != clock.isPaused else { return }
        clock.setPaused(paused, at: now)
        if estimate != nil { log.info(paused ? "the boot waits for a person: its estimate holds" : "the boot's estimate goes on") }
    }

    /// In the real root, whose history is the newest (the initramfs holds a copy from
    /// when it was built, if any).
    mutating func enteredNewRoot() {
        guard estimate != nil else { return }
        let kept = estimate?.history != nil
        let history = loadHistory(otherwise: kept ? "the initramfs's history stays" : "the bar follows a first boot's curve")
        if history != nil { estimate?.replaceHistory(history) }
    }

    /// This boot, ended at monotonic `now`, becomes the next boot's history.
    package func saveHistory(endingAt now: Double) {
        let time = clock.time(at: now)
        guard let history = record.history(endingAt: time) else {
            log.info("boot history not saved: a boot of \(PlainDecimal.format(time.rounded())) s is no guide")
            return
        }
        do throws(SystemError) {
            try history.save(to: historyPath)
            log.info("boot history saved: \(history.steps.count) steps, \(PlainDecimal.format((time * 10).rounded() / 10)) s")
        } catch {
            log.info("cannot save the boot history: \(error)")
        }
    }

    /// The history at `historyPath`; nil (and the log says why, and what happens
    /// `otherwise`) when there is none or it cannot be used.
    private func loadHistory(otherwise: String = "the bar follows a first boot's curve") -> BootHistory? {
        let (history, problem) = BootHistory.load(historyPath)
        if let problem {
            log.info("boot history not used: \(problem); \(otherwise)")
        } else if let history {
            log.info("boot history: \(history.steps.count) steps, \(PlainDecimal.format(history.duration.rounded())) s")
        } else {
            log.info("no boot history yet (\(historyPath)): the bar follows a first boot's curve")
        }
        return history
    }
}
