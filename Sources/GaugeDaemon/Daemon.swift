import CGaugeLinux
import GaugeDisplay
import GaugeProtocol
import GaugeRender
import GaugeSystem

/// `gauged`: one thread around one epoll loop. Inputs (socket lines, the demo script)
/// become requests; requests change the `ProgressScreen`; the frame timer, armed only
/// while something moves, draws and presents what changed.
package final class Daemon {
    private let options: DaemonOptions
    private let log: Log
    /// Lines about what peers send, rate-limited per source.
    private let throttled: ThrottledLog
    /// The daemon's one loop (tests turn it themselves after `start()`).
    package let loop: EventLoop
    private let screen: ProgressScreen
    private var server: SocketServer?
    private let frames: FrameClock
    private var demo: DemoPlayer?
    private var signals: SignalSource?
    private var compat: CompatInputs?
    /// Programs asking on the console, systemd's password requests.
    private let consoleQuestions: ConsoleQuestions
    /// Plymouth's questions on the splash, the keyboards' Escape, Enter and R.
    private let screenQuestions: ScreenQuestions
    /// Escape on the keyboards (`--escape-input`).
    var escapeWatch: EscapeWatch? { screenQuestions.escapeWatch }
    /// Who has the screen: Gauge, the console (hide, a question) or a display manager,
    /// and the display and VT acts that hand it over.
    private let screenOwner: ScreenOwner
    private let notify = SystemdNotify.fromEnvironment()
    private var retainOnExit = false
    private let terminal: TerminalDisplay?
    /// The DRM or fbdev display, which may come, go and change (nil for memory, terminal
    /// or none); the `screenOwner` holds it too, with the VT under it.
    private let displays: DisplaySlot?
    private var device: (any DeviceDisplay)? { displays?.device }
    private var console: ConsoleVT? { screenOwner.console }
    private var handover: ScreenHandover { screenOwner.handover }
    /// The boot's estimated progress (`--boot`), until a client reports progress itself,
    /// and the boot's steps for the next boot's history.
    private let boot: BootEstimateTicker
    /// The message line's and the details view's words: a client's, or the boot's steps.
    private var messages = BootMessages()
    private var themes: ThemeKeeper

    /// `devices` is where DRM and fbdev displays come from (fakes in tests).
    package init(options: DaemonOptions, log: Log, devices: DisplayDevices = .system) throws(DaemonError) {
        // Before any display is opened: a terminal whose reader is gone costs an EPIPE.
        SignalSource.ignoreBrokenPipe()
        self.options = options
        self.log = log
        throttled = ThrottledLog(log: log)
        do {
            loop = try EventLoop()
        } catch {
            throw DaemonError("cannot create the event loop: \(error)")
        }
        themes = ThemeKeeper(options: options)
        let theme = themes.initialTheme(log: log)
        let display: (any Display)?
        if let policy = options.display.devicePolicy {
            displays = DisplaySlot(policy: policy, devices: devices, loop: loop, log: log)
            display = displays?.device
        } else {
            displays = nil
            display = try options.display.openDisplay()
        }
        terminal = display as? TerminalDisplay
        screen = ProgressScreen(theme: theme, display: display, scale: options.scale) { [log] in log.info($0) }
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

    /// Listens, presents the first frame and sets up the loop's sources (`run()` calls it).
    /// The socket is bound first (a second daemon on the same path fails before it draws),
    /// and the signals are taken before the console is; what no part of the first frame
    /// needs (the connections' server, VT switching, the demo) is set up after it, so the
    /// splash is on screen sooner.
    package func start() throws(DaemonError) {
        SignalSource.ignoreStraySignals()
        RootSwitch.markArgv0InInitrd(log: log)
        let groupID = try Self.groupID(named: options.group)
        let listener = try listen(groupID: groupID)
        try takeFramesAndSignals()
        connectParts()
        if options.psplashFIFO != nil || options.plymouth { startCompatInputs(groupID: groupID) }
        watchConsoleQuestions()
        if let directory = options.escapeInput { screenQuestions.watchKeyboards(in: directory) }
        let showing = presentFirstFrame()
        try serve(listener, groupID: groupID)
        if showing { console?.enableProcessSwitching() }
        log.info("listening on \(options.socketPath)")
        frames.schedule()
        try? notify?.ready()
    }

    /// What the parts tell the daemon, and what they ask of it.
    private func connectParts() {
        screenQuestions.handover = { [self] in handover }
        screenQuestions.onHandover = { [self] change in updateHandover(change) }
        screenQuestions.detailLines = { [self] in messages.history.lines }
        screenQuestions.onChange = { [self] questionCameOrWent in
            if questionCameOrWent { consoleQuestions.update() }
            updateBootPause()
            frames.schedule()
        }
        displays?.onChange = { [self] device, settled in displayChanged(to: device, settled: settled) }
        displays?.onShownAgain = { [self] in
            screen.invalidate()
            frames.schedule()
        }
        boot.onValue = { [self] percent, now in
            screen.setProgress(percent, message: nil, at: now)
            frames.schedule()
        }
        displays?.onFrameReady = { [self] in if frames.owed { tick() } }
        consoleQuestions.covering = { [self] in handover.owner == .gauge && (device != nil || displays == nil) }
        consoleQuestions.questionOnScreen = { [self] in screenQuestions.shownSerial != nil }
        consoleQuestions.handover = { [self] in handover }
        consoleQuestions.onHandover = { [self] change in
            updateHandover(change)
            frames.schedule()
        }
        consoleQuestions.onLook = { [self] in screenQuestions.checkCapsLock() }
    }

    /// The id of `--group`, whose members may drive the daemon.
    private static func groupID(named name: String?) throws(DaemonError) -> UInt32? {
        try name.map { name throws(DaemonError) in
            guard let entry = getgrnam(name) else { throw DaemonError("unknown group '\(name)'") }
            return UInt32(entry.pointee.gr_gid)
        }
    }

    /// The socket systemd passed, or the one bound at `--socket`.
    private func listen(groupID: UInt32?) throws(DaemonError) -> ListeningSocket {
        do {
            return try ListeningSocket.passedOrBound(
                path: options.socketPath, groupID: groupID, passed: SocketActivation.takeFromEnvironment())
        } catch {
            // Most reasons name the path already: say it once.
            let reason = "\(error)"
            throw DaemonError(reason.containsText(options.socketPath) ? "cannot listen: \(reason)" : "cannot listen on \(options.socketPath): \(reason)")
        }
    }

    /// The frame timer and the signals the loop handles.
    private func takeFramesAndSignals() throws(DaemonError) {
        do {
            // Before anything can schedule a frame (the boot estimate does).
            try frames.start(on: loop) { [self] in tick() }
            // Before the console is put in graphics mode: from then on a SIGTERM must end
            // the daemon through the loop, which gives the console back, never by default.
            // SIGUSR1 and SIGUSR2 switch VTs when the console takes part, and are ignored
            // otherwise rather than ending the daemon as they would by default.
            var handled = SignalSource.defaultSignals + [SIGUSR1, SIGUSR2]
            if terminal != nil { handled.append(SIGWINCH) }
            signals = try SignalSource(loop: loop, signals: handled) { [self] in signal($0) }
        } catch {
            throw DaemonError("cannot start: \(error)")
        }
    }

    /// psplash's FIFO and Plymouth's socket (`--psplash-fifo`, `--plymouth`), with
    /// Plymouth's questions asked on the screen (`--ask`).
    private func startCompatInputs(groupID: UInt32?) {
        let compat = CompatInputs(
            loop: loop, log: log, throttled: throttled, policy: PeerPolicy(groupID: groupID),
            idleTimeout: options.idleTimeout
        ) { [self] request, access in
            guard refusal(of: request, from: nil, access: access) == nil else { return false }
            _ = perform(request, from: nil, access: access)
            return true
        }
        compat.hasActiveVT = screenOwner.hasVT
        compat.onConsoleLent = { [self] in consoleQuestions.asked(by: nil) }
        compat.onPauseProgress = { [self] paused in
            boot.pausedByClient = paused
            updateBootPause()
        }
        if options.ask {
            let ttyPath = options.askFromInputDevices ? nil : options.askTTY ?? console?.path
            compat.questions = screenQuestions.openDesk(ttyPath: ttyPath, keymapPath: options.keymapPath)
        }
        self.compat = compat
        // Another splash may hold these; the native socket still serves, so log and go on.
        do throws(DaemonError) {
            if let path = options.psplashFIFO { try compat.openPsplashFIFO(path: path) }
        } catch {
            log.info("\(error)")
        }
        do throws(DaemonError) {
            if options.plymouth {
                try compat.openPlymouthSocket()
                if screenQuestions.desk != nil, let path = options.plymouthPIDFile { compat.claimPIDFile(path) }
            }
        } catch {
            log.info("\(error)")
        }
    }

    /// The title and mode asked for, the boot estimate, and the first frame, on the
    /// screen unless the console keeps it; whether it shows on a device.
    private func presentFirstFrame() -> Bool {
        if let title = options.title { screen.setTitle(title) }
        if options.shutdown { screen.setMode(.indeterminate) }
        if options.boot { boot.start() }
        let showing = screenOwner.takeForFirstFrame()
        if showing { watchConsoleHangup() }
        screenQuestions.handoverChanged()
        if screen.renderFrame(at: MonotonicClock.now()) { frames.notePresented(on: device) }
        return showing
    }

    /// Takes connections on `listener`, and starts the demo (`--demo`).
    private func serve(_ listener: ListeningSocket, groupID: UInt32?) throws(DaemonError) {
        var configuration = SocketServerConfiguration()
        configuration.maxClients = options.maxClients
        configuration.privilegedReserve = min(4, options.maxClients / 4)
        configuration.policy = PeerPolicy(groupID: groupID)
        configuration.idleTimeout = options.idleTimeout
        let server = SocketServer(
            loop: loop, listener: listener, configuration: configuration, log: log, throttled: throttled
        ) {
            [self] client, item in self.handle(item, from: client)
        }
        server.onDisconnect = { [self] client in
            frames.forget(client)
            screenQuestions.forget(client)
        }
        self.server = server
        do {
            try server.start()
            if options.demo {
                demo = try DemoPlayer(loop: loop) { [self] in _ = apply($0, from: nil, access: .daemon) }
            }
        } catch {
            throw DaemonError("cannot start: \(error)")
        }
    }

    /// The display and the console first, the connections last: a client waiting for
    /// the daemon to go (`gaugectl quit`, `plymouth --wait quit`) finds the console back.
    /// Every source it closes drops its handler, which holds the daemon: a daemon that was
    /// started lives until this runs.
    package func shutdown() {
        try? notify?.stopping()
        frames.close()
        demo?.close()
        boot.close()
        consoleQuestions.close()
        screenQuestions.close()
        signals?.close()
        if let terminal { terminal.close() }
        if retainOnExit, screenQuestions.shownSerial != nil, handover.owner == .gauge {
            // The frame left on screen must not show a question nobody will answer.
            screen.setEntry(nil)
            _ = screen.renderFrame(at: MonotonicClock.now())
        }
        screenOwner.close(retain: retainOnExit)
        compat?.close()
        server?.close()
    }

    // MARK: - Questions

    /// The boot's clock stops while a person is asked something: a question on the splash,
    /// a password request or a program reading the console, or a client's `pause-progress`.
    private func updateBootPause() {
        let paused = boot.pausedByClient || screenQuestions.isAsking
            || handover.passwordPending || handover.consoleQuestion || screen.model.failure != nil
        boot.estimator.setPaused(paused, at: MonotonicClock.now())
    }

    /// The details view shows the newest messages and steps (when it is up).
    private func detailsChanged() {
        if screen.model.details != nil { screenQuestions.showDetails() }
    }

    // MARK: - Requests

    private func handle(_ item: LineFramer.Item, from client: ClientConnection) -> ReplyAction {
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
    private func apply(_ request: Request, from client: ClientConnection?, access: Access) -> ReplyAction {
        if let refusal = refusal(of: request, from: client, access: access) { return .reply(Reply.err(refusal).encoded) }
        return perform(request, from: client, access: access)
    }

    /// Why the access policy refuses `request` (logged), or nil.
    private func refusal(of request: Request, from client: ClientConnection?, access: Access) -> ProtocolError? {
        guard let refusal = access.refusal(of: request, rootWaits: screenQuestions.isWaiting) else { return nil }
        throttled.info("access", "refused \(client.map { "\($0.label) (\($0.peer.map { "\($0)" } ?? "no peer"))" } ?? "a compat input"): \(refusal.message)")
        return refusal
    }

    /// Carries out a request the access policy allowed: one that reads, or acts outside
    /// the picture, here; one that may change the picture in `change`, and a frame soon.
    private func perform(_ request: Request, from client: ClientConnection?, access: Access) -> ReplyAction {
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
            screen.showFailure(title: title)
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

    /// `wait` waits for the bar to show its value; in indeterminate mode there is none.
    private static let waitIndeterminate = ProtocolError(
        .state, "nothing to wait for in indeterminate mode: the bar has no value to settle on")

    /// Changes a reason to give the screen up, and hands it over when its owner changes.
    private func updateHandover(_ change: (inout ScreenHandover) -> Void) {
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

    /// `--vt at-exit` with the VT taken (fbdev): a getty ending on it puts it in text mode
    /// (the console draws its text over the frame) and hangs it up; the daemon takes it
    /// again and draws a whole frame.
    private func watchConsoleHangup() {
        guard screenOwner.consoleAtExit, let console, console.isAvailable else { return }
        let fd = console.descriptor
        do throws(SystemError) {
            try loop.register(fd, events: []) { [self] _ in consoleHungUp(fd) }
        } catch {
            log.info("cannot watch the console for a hangup: \(error)")
        }
    }

    private func consoleHungUp(_ fd: Int32) {
        loop.unregister(fd)
        if screenOwner.consoleHungUp() { frames.schedule() }
        watchConsoleHangup()
    }

    // MARK: - Console questions

    /// Watches the console for programs asking on it (the VT under a device display, or
    /// the tty `--question-tty` names) and, unless questions come to the screen through
    /// the pid file, systemd's password requests.
    private func watchConsoleQuestions() {
        // With questions asked on the screen and the pid file that tells systemd so, its
        // password requests come here (through its Plymouth agent): the console need not
        // take the screen for them.
        if let directory = options.askPasswordDirectory, compat?.createdPIDFile == nil {
            screenOwner.handover.passwordPending = consoleQuestions.watchPasswordRequests(in: directory)
        }
        switch options.questionTTY {
        case .vt: consoleQuestions.watchConsole(console?.isAvailable == true ? console?.path : nil)
        case .path(let tty): consoleQuestions.watchConsole(tty)
        case .none: consoleQuestions.watchConsole(nil)
        }
    }

    /// Moves the daemon into the real root (see `RootSwitch`); nil when done.
    private func enterNewRoot(_ path: String) -> ProtocolError? {
        do throws(SystemError) {
            try RootSwitch.enter(path)
        } catch {
            log.info("cannot move into the new root: \(error)")
            return ProtocolError(.io, error.description)
        }
        log.info("moved into the new root \(path)")
        // The real root's history is the newest (the initramfs holds a copy from when it
        // was built, if any).
        boot.estimator.enteredNewRoot()
        // Paths resolve in the new root from now on; a watch on an ancestor in the old
        // root would never see the real one.
        consoleQuestions.rootChanged()
        return nil
    }

    // MARK: - Boot progress

    /// A failure screen holds the boot's estimate (`BootEstimateTicker.hold`) and its clock.
    private func holdBootEstimate() {
        updateBootPause()
        boot.hold(screen.model.failure != nil)
    }

    package func statusJSON(at time: Double) -> String {
        screen.status(at: time, fps: options.fps, clients: server?.clientCount ?? 0).json()
    }

    // MARK: - Frames

    private func tick() {
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

    private func signal(_ number: Int32) {
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
    private func displayChanged(to next: (any DeviceDisplay)?, settled: Bool) {
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
