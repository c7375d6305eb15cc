import CGaugeLibraries
import CGaugeLinux
import GaugeDisplay
import GaugeProtocol
import GaugeRender
import GaugeSystem

/// `gauged`: one thread around one epoll loop. Inputs (socket lines, the compat inputs,
/// the demo script) become requests; requests change the `ProgressScreen`; the frame
/// clock, armed only while something moves, draws and presents what changed.
///
/// The daemon is the switchboard between its parts: it owns them, carries each request
/// to the parts it concerns (here), and tells each part what another changed. How it
/// starts and stops them, in what order, is in `Daemon+Start.swift`.
package final class Daemon {
    let options: DaemonOptions
    let log: Log
    /// Lines about what peers send, rate-limited per source.
    let throttled: ThrottledLog
    /// The daemon's one loop (tests turn it themselves after `start()`).
    package let loop: EventLoop
    let screen: ProgressScreen
    var server: SocketServer?
    let frames: FrameClock
    var demo: DemoPlayer?
    var signals: SignalSource?
    var compat: CompatInputs?
    /// Programs asking on the console, systemd's password requests.
    let consoleQuestions: ConsoleQuestions
    /// Plymouth's questions on the splash, the keyboards' Escape, Enter and R.
    let screenQuestions: ScreenQuestions
    /// Escape on the keyboards (`--escape-input`).
    var escapeWatch: EscapeWatch? { screenQuestions.escapeWatch }
    /// Who has the screen: Gauge, the console (hide, a question) or a display manager,
    /// and the display and VT acts that hand it over.
    let screenOwner: ScreenOwner
    let notify = SystemdNotify.fromEnvironment()
    var retainOnExit = false
    let terminal: TerminalDisplay?
    /// The DRM or fbdev display, which may come, go and change (nil for memory, terminal
    /// or none); the `screenOwner` holds it too, with the VT under it.
    let displays: DisplaySlot?
    var device: (any DeviceDisplay)? { displays?.device }
    var console: ConsoleVT? { screenOwner.console }
    var handover: ScreenHandover { screenOwner.handover }
    /// The boot's estimated progress (`--boot`), until a client reports progress itself,
    /// and the boot's steps for the next boot's history.
    let boot: BootEstimateTicker
    /// The message line's and the details view's words: a client's, or the boot's steps.
    var messages = BootMessages()
    private var themes: ThemeKeeper
    /// The sockets `init` bound, until `start()` serves them.
    var listeners: DaemonListeners?
    /// What comes on the native socket before the daemon serves it: pings answered
    /// while it starts, the rest held until `start()` is done.
    let startingDesk = StartingDesk()
    /// The signal mask before `init` blocked the signals the loop handles.
    var signalMaskBefore: sigset_t?
    /// The signals the loop handles whatever the display (SIGWINCH is added for a terminal).
    static let handledSignals = SignalSource.defaultSignals + [SIGUSR1, SIGUSR2]

    /// `devices` is where DRM and fbdev displays come from (fakes in tests).
    package init(options: DaemonOptions, log: Log, devices: DisplayDevices = .system) throws(DaemonError) {
        // Before any display is opened: a terminal whose reader is gone costs an EPIPE.
        SignalSource.ignoreBrokenPipe()
        self.options = options
        self.log = log
        let throttled = ThrottledLog(log: log)
        self.throttled = throttled
        let loop: EventLoop
        do {
            loop = try EventLoop()
        } catch {
            throw DaemonError("cannot create the event loop: \(error)")
        }
        self.loop = loop
        // Before any client has an answer: from then on a SIGTERM must end the daemon
        // through the loop, which gives the console back, never by default. SIGUSR1 and
        // SIGUSR2 switch VTs when the console takes part, and are ignored otherwise rather
        // than ending the daemon as they would by default; a stray signal is ignored.
        signalMaskBefore = SignalSource.block(Self.handledSignals)
        SignalSource.ignoreStraySignals()
        // Before any client has an answer too: systemd may switch root as soon as one has.
        RootSwitch.markArgv0InInitrd(log: log)
        let listeners = try DaemonListeners(options, log: log)
        self.listeners = listeners
        let desk = startingDesk
        let server = try Self.serveAndLoad(listeners, desk: desk, options: options, loop: loop, log: log, throttled: throttled)
        self.server = server
        themes = ThemeKeeper(options: options)
        let theme = themes.initialTheme(log: log)
        let slot: DisplaySlot?, display: (any Display)?
        do throws(DaemonError) {
            (slot, display) = try options.display.open(devices: devices, loop: loop, log: log)
        } catch {
            listeners.abandon()
            throw error
        }
        desk.serveWaiting(server, on: loop, log: log)
        displays = slot
        terminal = display as? TerminalDisplay
        screen = ProgressScreen(theme: theme, display: display, scale: options.scale) { [log] in log.info($0) }
        desk.serveWaiting(server, on: loop, log: log)
        screenOwner = ScreenOwner(screen: screen, displays: displays, vt: options.vt, log: log)
        frames = FrameClock(fps: options.fps, log: log)
        consoleQuestions = ConsoleQuestions(loop: loop, log: log)
        screenQuestions = ScreenQuestions(screen: screen, loop: loop, log: log)
        boot = BootEstimateTicker(historyPath: options.bootHistoryPath, loop: loop, log: log)
        if let display, device == nil {
            // A screen drawn smaller than asked has said so, with its size, in the layout's line.
            log.info("display \(display.name)" + (screen.drawnScale == screen.scale ? ", scale \(screen.scale.shortText)" : ""))
        } else if display == nil, displays == nil {
            log.info("no display: serving the socket only")
        }
    }

    /// The native socket's server, which answers a ping from here on between the start's
    /// steps (`StartingDesk`): what a client that had its answer may use is there. Then the
    /// C libraries the daemon draws with, loaded once the socket is there; a missing one ends
    /// the start, said, and what `listeners` made for clients is undone.
    private static func serveAndLoad(
        _ listeners: DaemonListeners, desk: StartingDesk, options: DaemonOptions, loop: EventLoop, log: Log,
        throttled: ThrottledLog
    ) throws(DaemonError) -> SocketServer {
        let server = SocketServer(
            loop: loop, listener: listeners.native, configuration: SocketServerConfiguration(options, groupID: listeners.groupID),
            log: log, throttled: throttled
        ) { [desk] client, item in desk.handle(item, from: client) }
        do throws(SystemError) {
            try server.start()
        } catch {
            listeners.abandon()
            throw DaemonError("cannot start: \(error)")
        }
        desk.serveWaiting(server, on: loop, log: log)
        var problem = [CChar](repeating: 0, count: 192)
        guard gauge_libraries_load(&problem, problem.count) == 0 else {
            listeners.abandon()
            throw DaemonError(String(decoding: problem.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        desk.serveWaiting(server, on: loop, log: log)
        return server
    }

    /// Runs until `quit`, SIGTERM or SIGINT; returns the exit status.
    package func run() -> Int32 {
        var status: Int32 = 0
        do throws(DaemonError) {
            try start()
            do throws(SystemError) {
                try loop.run()
            } catch {
                throw DaemonError("\(error)")
            }
        } catch {
            log.info("\(error)")
            status = 1
        }
        shutdown()
        return status
    }

    // MARK: - What one part changes for the others

    /// The boot's clock stops while a person is asked something: a question on the splash,
    /// a password request or a program reading the console, or a client's `pause-progress`.
    func updateBootPause() {
        let paused = boot.pausedByClient || screenQuestions.isAsking
            || handover.passwordPending || handover.consoleQuestion || screen.model.failure != nil
        boot.estimator.setPaused(paused, at: MonotonicClock.now())
    }

    /// The details view shows the newest messages and steps (when it is up).
    private func detailsChanged() {
        if screen.model.details != nil { screenQuestions.showDetails() }
    }

    /// Changes a reason to give the screen up, and hands it over when its owner changes.
    func updateHandover(_ change: (inout ScreenHandover) -> Void) {
        let asked = screenQuestions.shownSerial != nil
        let changed = screenOwner.change(change)
        updateBootPause()
        guard changed else { return }
        screenQuestions.handoverChanged()
        consoleQuestions.update()
        // The frame a display manager finds stays on screen until its own first one: it
        // must not show a question whose asker was just told there is no answer (a person
        // would type a passphrase into it).
        if asked, screenQuestions.shownSerial == nil, handover.owner == .displayManager {
            _ = screen.renderFrame(at: MonotonicClock.now())
        }
        screenOwner.handOver()
    }

    // MARK: - Requests

    func handle(_ item: LineFramer.Item, from client: ClientConnection) -> ReplyAction {
        switch item {
        case .error(let error):
            return .reply(Reply.err(error).encoded)
        case .line(let line):
            switch Request.parse(line) {
            case .failure(let error): return .reply(Reply.err(error).encoded)
            case .success(let request):
                let access = client.peer.map { Access(peer: $0, daemonUID: Self.daemonUID) } ?? .compatInput
                return apply(request, from: client, access: access)
            }
        }
    }

    /// Every request passes here, from every input; `access` (the peer's rights) is
    /// checked first.
    func apply(_ request: Request, from client: ClientConnection?, access: Access) -> ReplyAction {
        if let refusal = refusal(of: request, from: client, access: access) { return .reply(Reply.err(refusal).encoded) }
        return perform(request, from: client, access: access)
    }

    /// Why the access policy refuses `request` (logged), or nil.
    func refusal(of request: Request, from client: ClientConnection?, access: Access) -> ProtocolError? {
        guard let refusal = access.refusal(of: request, rootWaits: screenQuestions.isWaiting) else { return nil }
        throttled.info("access", "refused \(client.map { "\($0.label) (\($0.peer.map { "\($0)" } ?? "no peer"))" } ?? "a compat input"): \(refusal.message)")
        return refusal
    }

    /// Carries out a request the access policy allowed: one that reads, or acts outside
    /// the picture, here; one that may change the picture in `change`, and a frame soon.
    func perform(_ request: Request, from client: ClientConnection?, access: Access) -> ReplyAction {
        let now = MonotonicClock.now()
        switch request {
        case .jobs(let value):
            boot.estimator.jobsDone(value / 100)
            boot.update()
        case .theme(let settings) where settings.isEmpty: return .reply(Reply.ok(themes.activeJSON).encoded)
        case .newRoot(let path): return Self.reply(enterNewRoot(path))
        case .ping: break
        case .status: return .reply(Reply.ok(statusJSON(at: now)).encoded)
        case .wait: return wait(for: client, at: now)
        case .waitKey: return screenQuestions.waitKey(for: client)
        case .snapshot(let path): return Self.reply(snapshot(to: path, from: client, at: now))
        case .snapshotToPassedFile: return Self.reply(snapshot(to: nil, from: client, at: now))
        case .quit(let retain): quit(retain: retain, at: now)
        case .progress, .message, .title, .step, .describe, .mode, .state, .theme, .reload, .show, .hide, .deactivate, .reactivate,
            .failure, .failureSummary, .failureLine, .failureClear:
            let error = change(request, access: access, at: now)
            frames.schedule()
            return Self.reply(error)
        }
        return Self.reply(nil)
    }

    private static func reply(_ error: ProtocolError?) -> ReplyAction {
        .reply((error.map { Reply.err($0) } ?? Reply.ok(nil)).encoded)
    }

    /// Carries out a request that may change the picture; the error to answer, if any.
    private func change(_ request: Request, access: Access, at now: Double) -> ProtocolError? {
        switch request {
        case .progress(let value, let message):
            boot.end(because: "a client reports progress")
            screen.setProgress(value, message: message, at: now)
            if messages.clientSaid(message) { detailsChanged() }
        case .message(let text):
            screen.setMessage(text)
            if messages.clientSaid(text) { detailsChanged() }
        case .title(let text): screen.setTitle(text)
        case .step(let name): step(name, access: access, at: now)
        case .describe(let unit, let text): return describe(unit, as: text)
        case .mode(let mode): screen.setMode(mode)
        case .state(let state, let message):
            if state == .success || state == .failure { boot.end(because: "a client ended the work") }
            screen.setState(state, message: message, at: now)
            if messages.clientSaid(message) { detailsChanged() }
        case .theme(let settings): return themes.apply(settings, to: screen)
        case .failure(let title):
            log.info("a client put up the failure screen")
            screen.showFailure(title: title, bootID: BootID.read())
            screenQuestions.failureChanged()
            holdBootEstimate()
        case .failureSummary(let text): return screen.setFailureSummary(text)
        case .failureLine(let text): return screen.addFailureLine(text)
        case .failureClear:
            screen.clearFailure()
            screenQuestions.failureChanged()
            holdBootEstimate()
        case .reload: return themes.reload(into: screen, log: log)
        case .show: return show()
        case .hide: updateHandover { $0.hiddenByRequest = true }
        case .deactivate:
            screenQuestions.deactivatedByRoot = access.isRoot
            updateHandover { $0.deactivated = true }
        case .reactivate: updateHandover { $0.deactivated = false }
        case .jobs, .newRoot, .ping, .status, .wait, .waitKey, .snapshot, .snapshotToPassedFile, .quit: break
        }
        return nil
    }

    /// A step of the boot (a unit systemd started): on the message line unless a client
    /// set it, in the details view, and into the boot's estimate and history.
    private func step(_ name: String, access: Access, at now: Double) {
        screenQuestions.desk?.checkKeyboard()
        guard let step = messages.step(name) else { return }
        if step.detailsChanged { detailsChanged() }
        boot.estimator.step(name, at: now, recorded: access.mayRecordBootSteps)
        if step.onMessageLine { screen.setMessage(step.text) }
    }

    /// `describe`: how `unit`'s steps read, the one on the message line (and the details
    /// view's newest line) too when it still shows the unit's name.
    private func describe(_ unit: String, as text: String) -> ProtocolError? {
        do throws(ProtocolError) {
            guard let shown = try messages.describe(unit, as: text, shown: screen.model.message) else { return nil }
            if let line = shown.messageLine { screen.setMessage(line) }
            if shown.detailsChanged { detailsChanged() }
        } catch {
            return error
        }
        return nil
    }

    /// `show`: the splash back unless a display manager has the display.
    private func show() -> ProtocolError? {
        let refusal = handover.deactivated
            ? ProtocolError(.state, "deactivated: a display manager has the display; reactivate takes it back") : nil
        updateHandover { $0.hiddenByRequest = false }
        return refusal
    }

    /// `wait`: answered by `tick` once the bar shows its value, at once if it does.
    private func wait(for client: ClientConnection?, at now: Double) -> ReplyAction {
        if screen.model.mode == .indeterminate { return Self.reply(Self.waitIndeterminate) }
        // Settled is not enough: with the frame timer armed, a change may still be
        // waiting for the tick that presents it. The tick replies once it has.
        if let client, !screen.isSettled(at: now) || frames.isRunning {
            frames.addWaiter(client)
            return .deferred
        }
        return Self.reply(nil)
    }

    /// `snapshot PATH`, or `snapshot -` (nil) into the file passed with the line.
    private func snapshot(to path: String?, from client: ClientConnection?, at now: Double) -> ProtocolError? {
        let png = { [screen] () throws(ProtocolError) in try screen.snapshotPNG(at: now) }
        do throws(ProtocolError) {
            if let path { try SnapshotFile.write(png, toPath: path) } else { try SnapshotFile.write(png, passedBy: client) }
        } catch {
            return error
        }
        return nil
    }

    /// `quit`: the boot's history saved (`--boot`), and the loop ends after this turn.
    private func quit(retain: Bool, at now: Double) {
        retainOnExit = retain
        log.info(retain ? "quit (retain) requested" : "quit requested")
        if options.boot { boot.estimator.saveHistory(endingAt: now) }
        loop.execute { [loop] in loop.stop() }
    }

    /// `newroot PATH`: the daemon moves into the real root (`RootSwitch`), where the boot's
    /// history and systemd's password requests are then read.
    private func enterNewRoot(_ path: String) -> ProtocolError? {
        if let error = RootSwitch.move(to: path, log: log) { return error }
        boot.estimator.enteredNewRoot()
        consoleQuestions.rootChanged()
        return nil
    }

    /// A failure screen holds the boot's estimate (`BootEstimateTicker.hold`) and its clock.
    private func holdBootEstimate() {
        updateBootPause()
        boot.hold(screen.model.failure != nil)
    }

    package func statusJSON(at time: Double) -> String {
        screen.status(at: time, fps: options.fps, clients: server?.clientCount ?? 0).json()
    }

    /// `wait` waits for the bar to show its value; in indeterminate mode there is none.
    private static let waitIndeterminate = ProtocolError(
        .state, "nothing to wait for in indeterminate mode: the bar has no value to settle on")

    // MARK: - Frames

    func tick() {
        let now = MonotonicClock.now()
        let presented = screen.renderFrame(at: now)
        if presented { frames.notePresented(on: device) }
        frames.owed = !presented
        displays?.checkDevice()
        guard presented else { return }
        // `wait` replies once the settled state is on the display, not merely computed.
        let indeterminate = screen.model.mode == .indeterminate
        if screen.isSettled(at: now) || indeterminate {
            frames.answerWaiters(indeterminate ? Reply.err(Self.waitIndeterminate) : Reply.ok(nil))
        }
        // While a question is on the screen the clock runs on, so its field is drawn on
        // every tick rather than at each key (`ProgressScreen.renderFrame`).
        frames.framePresented(animating: screen.isAnimating(at: now), keepTicking: screen.isQuestionShown) {
            screen.frameSteps(at: now)
        }
    }

    func signal(_ number: Int32) {
        switch number {
        case SIGHUP where terminal == nil:
            _ = themes.reload(into: screen, log: log)
            frames.schedule()
        case SIGWINCH:
            guard let terminal else { return }
            if (try? terminal.resize()) == true { screen.replaceDisplay(terminal) }
            screen.invalidate()
            frames.schedule()
        case ConsoleVT.releaseSignal where screenOwner.hasVT:
            screenOwner.vtReleased()
        case ConsoleVT.acquireSignal where screenOwner.hasVT:
            if screenOwner.vtAcquired() { frames.schedule() }
        case SIGTERM, SIGINT, SIGHUP:
            // SIGHUP on the terminal display: the terminal is gone. systemd's last killing
            // spree ends a shutdown screen: keep its frame.
            if options.shutdown, number == SIGTERM { retainOnExit = true }
            log.info("signal \(number): exiting")
            loop.stop()
        default:
            log.info("signal \(number) ignored")
        }
    }

    // MARK: - Displays

    /// The display device came, went or changed: the scene is laid out for the new one and
    /// drawn on it whole, at once. With none left for good the console gets the screen.
    func displayChanged(to next: (any DeviceDisplay)?, settled: Bool) {
        screen.replaceDisplay(next)
        frames.owed = false
        consoleQuestions.update()
        if screenOwner.deviceChanged(to: next, settled: settled) { frames.schedule() }
    }

    /// Pixels per half-cell of `--display terminal`: a third of the cell resolution, so
    /// the text still reads (80x24 cells are 240x144 pixels).
    package static let terminalScale = 3
    private static let daemonUID = geteuid()
}

/// Why the daemon could not start, as one log line.
package struct DaemonError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
