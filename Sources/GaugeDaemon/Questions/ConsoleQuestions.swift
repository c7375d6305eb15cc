import GaugeSystem

/// Questions asked past the splash: a program waiting to read the console it covers (the
/// VT under a device display, or `--question-tty`), and systemd's password requests
/// (`--ask-password-dir`). Either gives the console the screen through `onHandover`, for as
/// long as someone waits there and `grace` after.
///
/// The processes are looked at four times a second, and only while there is reason to: just
/// after the console was opened or written (`lookWindow`, the kernel's word through
/// `ConsoleActivityWatch`), while a question is on the splash (Caps Lock is followed), or
/// while the console has the screen; a still splash makes no wakeups for it.
final class ConsoleQuestions {
    /// How long the console keeps the screen after the last sign of a question on it: long
    /// enough to read the answer's outcome, and for a retry or the next disk that asks at
    /// once; a passphrase check slower than this shows the splash until the retry asks.
    static let grace = 2.0
    /// How long the processes are looked at after the console was opened or written: the
    /// asker's wait follows its open or prompt within moments.
    static let lookWindow = 2.0

    /// Whether the splash covers the console now (on its device, or on no device at all).
    var covering: () -> Bool = { false }
    /// Whether a question is on the splash.
    var questionOnScreen: () -> Bool = { false }
    /// Who has the screen and why (the daemon's `ScreenOwner`).
    var handover: () -> ScreenHandover = { ScreenHandover() }
    /// Changes a reason to give the screen up; the daemon hands it over and draws.
    var onHandover: ((inout ScreenHandover) -> Void) -> Void = { _ in }
    /// Each look while a question is on the splash: Caps Lock may have changed.
    var onLook: () -> Void = {}

    private let loop: EventLoop
    private let log: Log
    private var readers: ConsoleReaders?
    private var activity: ConsoleActivityWatch?
    private var passwords: AskPasswordWatch?
    private var timer: FrameTimer?
    /// Until when to look (`lookWindow` after the last activity, and after start).
    private var lookUntil = 0.0
    /// When a program was last seen waiting on the console (or a refused question sent
    /// its caller there).
    private var seen = 0.0

    init(loop: EventLoop, log: Log) {
        self.loop = loop
        self.log = log
    }

    /// Watches `ttyPath` (nil: no console to watch) for programs asking on it; whoever
    /// already waits is found by a look at once.
    func watchConsole(_ ttyPath: String?) {
        if let ttyPath { readers = ConsoleReaders(ttyPath: ttyPath, log: log) }
        do {
            timer = try FrameTimer(loop: loop) { [self] _ in look() }
        } catch {
            log.info("cannot arm the console question timer: \(error); programs asking on the console are not noticed")
        }
        if let readers { watchActivity(readers.nodePaths) }
        lookUntil = MonotonicClock.now() + Self.lookWindow
        update()
    }

    /// Follows systemd's password requests in `directory`: the console gets the screen
    /// while one waits. Whether one waits already.
    func watchPasswordRequests(in directory: String) -> Bool {
        do throws(SystemError) {
            let watch = try AskPasswordWatch(directory: directory)
            try loop.register(watch.fd, events: .readable) { [self] _ in
                if watch.update() { passwordRequestsChanged() }
            }
            passwords = watch
            return watch.isPending
        } catch {
            log.info("cannot watch \(directory) for password requests: \(error)")
            return false
        }
    }

    /// After a move into the new root: paths resolve there from now on, and a watch on an
    /// ancestor in the old root would never see the real one.
    func rootChanged() {
        guard let watch = passwords else { return }
        let before = watch.isPending
        watch.rearm()
        if watch.isPending != before { passwordRequestsChanged() }
    }

    /// Starts or stops the looks as the reasons for them stand (the screen changed hands,
    /// a question came or went, the display changed).
    func update() {
        let covering = readers != nil && covering()
        let looking = MonotonicClock.now() < lookUntil || questionOnScreen()
        guard covering && looking || handover().consoleQuestion else {
            timer?.stop()
            return
        }
        do {
            try timer?.start(fps: 4)
        } catch {
            log.info("cannot arm the console question timer: \(error)")
        }
    }

    /// Someone asks on the console (`reader`), or a refused Plymouth question sent its
    /// caller there, or systemd's password request was just answered (nil): the console
    /// gets the screen, or keeps it for `grace`.
    func asked(by reader: ConsoleReaders.Reader?, quietly: Bool = false) {
        seen = MonotonicClock.now()
        guard !handover().consoleQuestion else { return }
        if let reader {
            log.info("\(reader.name) (pid \(reader.pid)) waits to read the console: the console gets the screen")
        } else if !quietly {
            log.info("a question refused on the screen is asked on the console: the console gets the screen")
        }
        onHandover { $0.consoleQuestion = true }
        update()
    }

    func close() {
        timer?.close()
        if let passwords { loop.unregister(passwords.fd) }
        if let activity { loop.unregister(activity.fd) }
    }

    private func watchActivity(_ paths: [String]) {
        do throws(SystemError) {
            let watch = try ConsoleActivityWatch(paths: paths, log: log)
            try loop.register(watch.fd, events: .readable) { [self] _ in
                guard watch.drain() else { return }
                lookUntil = MonotonicClock.now() + Self.lookWindow
                update()
            }
            activity = watch
        } catch {
            // Without the kernel's word, the look goes on for as long as the splash covers.
            log.info("console questions: cannot watch the console's nodes: \(error); looking four times a second")
            lookUntil = .infinity
        }
    }

    private func look() {
        let now = MonotonicClock.now()
        onLook()
        if let reader = readers?.scan() {
            asked(by: reader)
        } else if handover().consoleQuestion, now - seen >= Self.grace {
            log.info("nobody waits on the console any more: the splash comes back")
            // A retry or the next disk asks at once: keep looking a moment.
            lookUntil = now + Self.lookWindow
            onHandover { $0.consoleQuestion = false }
        } else if now >= lookUntil {
            update()
        }
    }

    private func passwordRequestsChanged() {
        guard let watch = passwords else { return }
        log.info(watch.isPending ? "a password request is waiting: the console gets the screen" : "password request answered")
        // Answered: the console keeps the screen a moment, for a retry or the next disk.
        if !watch.isPending, handover().passwordPending { asked(by: nil, quietly: true) }
        onHandover { $0.passwordPending = watch.isPending }
    }
}

extension DaemonOptions.QuestionTTY {
    /// The tty to watch for programs asking on it: the VT under a device display
    /// (`console`), the one `--question-tty` names, or none.
    func path(console: ConsoleVT?) -> String? {
        switch self {
        case .vt: console?.isAvailable == true ? console?.path : nil
        case .path(let tty): tty
        case .none: nil
        }
    }
}
