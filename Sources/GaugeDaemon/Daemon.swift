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
    private var frameTimer: FrameTimer?
    /// When the frame timer ticks next (`scheduleFrames`, `tick`).
    private var pacer: FramePacer
    private var demoTimer: FrameTimer?
    private var signals: SignalSource?
    private var compat: CompatInputs?
    private var askPassword: AskPasswordWatch?
    /// Programs waiting to read the console the splash covers (`--question-tty`).
    private var consoleReaders: ConsoleReaders?
    /// Says when the console was opened or written, the only times a look is worth it.
    private var consoleActivity: ConsoleActivityWatch?
    /// Until when to look (`consoleLookWindow` after the last activity, and after start).
    private var consoleLookUntil = 0.0
    /// Looks for them four times a second while there is reason to (`consoleLookUntil`, a
    /// question on the screen or the console's turn), and ends the console's turn once
    /// nobody has waited on it for `consoleQuestionGrace`.
    private var consoleQuestionTimer: FrameTimer?
    /// When a program was last seen waiting on the console (or a refused question sent
    /// its caller there).
    private var consoleQuestionSeen = 0.0
    /// Plymouth's questions, asked on the screen (`--ask`).
    private var questions: QuestionDesk?
    /// Escape on the keyboards, on every boot (`--escape-input`): the details view and back.
    private(set) var escapeWatch: EscapeWatch?
    /// The details view as Escape on the `escapeWatch` left it (each press turns it over).
    private var detailsByEscape = false
    /// The questions' desk reads the VT while the splash shows, Escape included.
    private var deskReadsEscape = false
    /// The `serial` of the question the screen was last told about (a new one shows a
    /// hidden splash). Its number only: a copy of the whole question kept here came out
    /// with its prompt's bits broken in the aarch64 build (an Optional holding a String,
    /// assigned through optional chaining), so it never equalled itself and every hide
    /// while asked brought the splash straight back.
    private var questionShown: UInt64?
    /// Root made the last `deactivate` (a display manager's), which a question does not undo.
    private var deactivatedByRoot = false
    /// The pid file `--ask` created, removed on exit.
    private var createdPIDFile: String?
    /// Who has the screen: Gauge, the console (hide, a question) or a display manager,
    /// and the display and VT acts that hand it over.
    private let screenOwner: ScreenOwner
    private let notify = SystemdNotify.fromEnvironment()
    private var waiters: [ClientConnection] = []
    /// Clients waiting for Enter or R (`wait-key`), answered at the next press or the
    /// theme's `failure_timeout`.
    private lazy var keyWait = KeyWait(loop: loop, log: log) { [self] in updateEscapeWatch() }
    private var exitStatus: Int32 = 0
    private var retainOnExit = false
    private var demoStart = 0.0
    private var demoIndex = 0
    private let terminal: TerminalDisplay?
    /// The DRM or fbdev display, which may come, go and change (nil for memory, terminal
    /// or none); the `screenOwner` holds it too, with the VT under it.
    private let displays: DisplaySlot?
    private var device: (any DeviceDisplay)? { displays?.device }
    private var console: ConsoleVT? { screenOwner.console }
    private var handover: ScreenHandover { screenOwner.handover }
    private let daemonUID = geteuid()
    /// The boot's estimated progress (`--boot`), until a client reports progress itself,
    /// and the boot's steps for the next boot's history.
    private var boot: BootEstimator
    /// A Plymouth client's `pause-progress`, until its `unpause-progress`.
    private var progressPausedByClient = false
    private var estimateTimer: FrameTimer?
    /// A client has set the message line: steps no longer show there.
    private var clientMessage = false
    /// The boot's messages and steps so far, for the details view (`--ask`, Escape).
    private var bootMessages = MessageHistory()
    /// How the boot's steps read: their units' descriptions (`describe`).
    private var stepDescriptions = StepDescriptions()
    private var firstDeviceFrameLogged = false
    /// The theme's settings as they stand over the defaults: the file's (paths
    /// resolved), then run-time `theme` changes, one per key, in order (`theme` alone
    /// answers them).
    private var themeSettings: [(key: String, value: String)] = []

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
        let theme: Theme
        var settings: [(key: String, value: String)] = []
        do {
            let loaded = try Self.theme(from: options)
            for problem in loaded.problems { log.info("theme: \(problem)") }
            theme = loaded.theme
            settings = loaded.settings
        } catch {
            log.info("\(error); using the default theme")
            theme = Self.overridden(Theme(), by: options)
        }
        themeSettings = settings
        let display: (any Display)?
        if let policy = Self.devicePolicy(options.display) {
            displays = DisplaySlot(policy: policy, devices: devices, loop: loop, log: log)
            display = displays?.device
        } else {
            displays = nil
            display = try Self.openDisplay(options.display, log: log)
        }
        terminal = display as? TerminalDisplay
        screen = ProgressScreen(theme: theme, display: display, scale: options.scale) { [log] in log.info($0) }
        screenOwner = ScreenOwner(screen: screen, displays: displays, vt: options.vt, log: log)
        pacer = FramePacer(fps: options.fps)
        boot = BootEstimator(historyPath: options.bootHistoryPath, log: log)
        if let display, device == nil {
            // A screen drawn smaller than asked has said so, with its size, in the layout's line.
            log.info("display \(display.name)" + (screen.drawnScale == screen.scale ? ", scale \(screen.scale.shortText)" : ""))
        } else if display == nil, displays == nil {
            log.info("no display: serving the socket only")
        }
    }

    /// Runs until `quit`, SIGTERM or SIGINT; returns the exit status.
    package func run() -> Int32 {
        do throws(DaemonError) {
            try start()
            do throws(SystemError) {
                try loop.run()
            } catch {
                throw DaemonError("\(error)")
            }
        } catch {
            log.info("\(error)")
            exitStatus = 1
        }
        shutdown()
        return exitStatus
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
        displays?.onChange = { [self] device, settled in displayChanged(to: device, settled: settled) }
        displays?.onShownAgain = { [self] in
            screen.invalidate()
            scheduleFrames()
        }
        displays?.onFrameReady = { [self] in if pacer.owed { tick() } }
        if options.psplashFIFO != nil || options.plymouth { startCompatInputs(groupID: groupID) }
        // With questions asked on the screen and the pid file that tells systemd so, its
        // password requests come here (through its Plymouth agent): the console need not
        // take the screen for them.
        if let directory = options.askPasswordDirectory, createdPIDFile == nil { watchPasswordRequests(in: directory) }
        watchConsoleQuestions()
        if let directory = options.escapeInput {
            escapeWatch = EscapeWatch(directory: directory, loop: loop, log: log) { [self] key in keyPressed(key) }
        }
        let showing = presentFirstFrame()
        try serve(listener, groupID: groupID)
        if showing { console?.enableProcessSwitching() }
        log.info("listening on \(options.socketPath)")
        scheduleFrames()
        try? notify?.ready()
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
            frameTimer = try FrameTimer(loop: loop) { [self] _ in tick() }
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
        compat.onConsoleLent = { [self] in consoleQuestionAsked(by: nil) }
        compat.onPauseProgress = { [self] paused in
            progressPausedByClient = paused
            updateBootPause()
        }
        if options.ask {
            let ttyPath = options.askFromInputDevices ? nil : options.askTTY ?? console?.path
            deskReadsEscape = ttyPath != nil
            let desk = QuestionDesk(ttyPath: ttyPath, keymapPath: options.keymapPath, loop: loop, log: log)
            desk.onChange = { [self] in questionsChanged() }
            compat.questions = desk
            questions = desk
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
                if questions != nil, let path = options.plymouthPIDFile { writePIDFile(path) }
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
        if options.boot { startBootEstimate() }
        let showing = screenOwner.takeForFirstFrame()
        if showing { watchConsoleHangup() }
        questions?.place = questionPlace
        updateEscapeWatch()
        noteFirstFrame(presented: screen.renderFrame(at: MonotonicClock.now()))
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
            waiters.removeAll { $0 === client }
            keyWait.remove(client)
        }
        self.server = server
        do {
            try server.start()
            if options.demo {
                demoStart = MonotonicClock.now()
                demoTimer = try FrameTimer(loop: loop) { [self] _ in stepDemo() }
                try demoTimer?.start(fps: 20)
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
        frameTimer?.close()
        demoTimer?.close()
        estimateTimer?.close()
        consoleQuestionTimer?.close()
        keyWait.close()
        signals?.close()
        if let terminal { terminal.close() }
        if retainOnExit, questionShown != nil, handover.owner == .gauge {
            // The frame left on screen must not show a question nobody will answer.
            screen.setEntry(nil)
            _ = screen.renderFrame(at: MonotonicClock.now())
        }
        screenOwner.close(retain: retainOnExit)
        compat?.close()
        server?.close()
        if let path = createdPIDFile { PIDFile.remove(path, ifNaming: getpid()) }
        if let askPassword { loop.unregister(askPassword.fd) }
        if let consoleActivity { loop.unregister(consoleActivity.fd) }
        escapeWatch?.setActive(false)
        escapeWatch = nil
    }

    // MARK: - Questions

    /// Where Plymouth's questions are asked while the screen is in its current hands: on
    /// the splash; on the console when it was hidden by request (it is gauged's then);
    /// nowhere when root handed the display to a display manager (the askers fall back);
    /// and waiting for the splash while another program asks on the console, or a
    /// member's `deactivate`, which a question undoes, holds it.
    private var questionPlace: QuestionDesk.Place {
        switch handover.owner {
        case .gauge: .splash
        case .displayManager: deactivatedByRoot ? .nowhere : .waiting
        case .console: handover.passwordPending || handover.consoleQuestion ? .waiting : .console
        }
    }

    /// The question on screen or what is typed changed.
    private func questionsChanged() {
        let previous = questionShown
        questionShown = questions?.questions.current?.serial
        if let questions, let question = questions.questions.current {
            let field: ScreenModel.Entry.Field = question.kind == .password
                ? .hidden(count: questions.questions.typedCount) : .shown(questions.questions.echoedText ?? "")
            screen.setEntry(ScreenModel.Entry(prompt: question.prompt, field: field, capsLock: questions.capsLock))
            // A question must be seen: a splash hidden by request, or handed over by a
            // peer other than root, comes back for it, as plymouthd shows a splash to ask
            // on. (Root may hide it again: the question is then asked on the console; a
            // display manager root handed the display to keeps it: askers are told at once.)
            let memberDeactivated = handover.deactivated && !deactivatedByRoot
            if handover.hiddenByRequest || memberDeactivated, question.serial != previous {
                log.info("a question is asked: the splash is shown for it")
                updateHandover {
                    $0.hiddenByRequest = false
                    if memberDeactivated { $0.deactivated = false }
                }
            }
        } else {
            screen.setEntry(nil)
        }
        if (previous == nil) != (questionShown == nil) { updateConsoleQuestionTimer() }
        updateBootPause()
        updateEscapeWatch()
        showDetails()
        scheduleFrames()
    }

    /// The boot's clock stops while a person is asked something: a question on the splash,
    /// a password request or a program reading the console, or a client's `pause-progress`.
    private func updateBootPause() {
        let paused = progressPausedByClient || questions?.questions.current != nil
            || handover.passwordPending || handover.consoleQuestion || screen.model.failure != nil
        boot.setPaused(paused, at: MonotonicClock.now())
    }

    /// The details view, while asked for (Escape, on the VT the questions read or on the
    /// keyboards the `escapeWatch` reads) and no question is on screen.
    private func showDetails() {
        let asked = (questions?.questions.detailsShown ?? false) != detailsByEscape
        let shown = asked && questions?.questions.current == nil
        screen.setDetails(shown ? bootMessages.lines : nil)
    }

    /// Whether the questions read the keys themselves (the VT, or the input devices while
    /// one waits), Escape included.
    private var questionsReadKeys: Bool { deskReadsEscape || questions?.isWaiting == true }

    /// The keyboards are read while the splash is on screen, for Escape unless the
    /// questions read the keys themselves, and for Enter and R while a client waits for
    /// them (`wait-key`).
    private func updateEscapeWatch() {
        escapeWatch?.setActive(handover.owner == .gauge && (!questionsReadKeys || !keyWait.isEmpty))
    }

    /// A key on the keyboards: Escape turns the details view over (the questions' own when
    /// they read the keys), Enter and R answer `wait-key`.
    private func keyPressed(_ key: EscapeWatch.Key) {
        guard key != .escape else {
            if !questionsReadKeys { escapePressed() }
            return
        }
        keyWait.keyPressed(r: key == .r, onFailureScreen: screen.model.failure != nil)
    }

    /// `wait-key`: answered at the next Enter or R on the keyboards, or at the theme's
    /// `failure_timeout` (`KeyWait`).
    private func waitKey(for client: ClientConnection?) -> ReplyAction {
        guard escapeWatch != nil else {
            return Self.reply(ProtocolError(.state, "no keyboards are read here (--escape-input none)"))
        }
        guard let client else { return Self.reply(ProtocolError(.state, "wait-key needs a connection to answer on")) }
        if let key = keyWait.takeKept() {
            log.info("wait-key: answered with the key pressed on the failure screen before")
            return .reply(Reply.ok(key).encoded)
        }
        keyWait.add(client, timeout: screen.theme.failureTimeout, action: screen.theme.failureTimeoutAction)
        return .deferred
    }

    private func escapePressed() {
        detailsByEscape.toggle()
        log.info(detailsByEscape ? "Escape: the boot's messages shown" : "Escape: the splash shown again")
        showDetails()
        scheduleFrames()
    }

    /// A message or step for the details view.
    private func noteMessage(_ text: String?) {
        guard let text, bootMessages.append(text) else { return }
        if screen.model.details != nil { showDetails() }
    }

    /// `/run/plymouth/pid`: systemd's console password agent stays away and its Plymouth
    /// agent forwards questions to Plymouth's socket while the file exists. Created new,
    /// never through a link; a stale one is replaced, a live daemon's left alone (`PIDFile`).
    private func writePIDFile(_ path: String) {
        switch PIDFile.holder(of: path) {
        case .live(let pid, let name) where pid != getpid():
            log.info("\(path) belongs to \(name) (pid \(pid)), which is running: it stays, and this daemon does not claim it")
            return
        case .stale(let reason):
            log.info("replacing a stale \(path): \(reason)")
        default:
            break
        }
        do throws(SystemError) {
            try PIDFile.create(path, pid: getpid())
            createdPIDFile = path
            log.info("questions are asked on the screen; \(path) tells systemd to send its password requests here")
        } catch {
            log.info("cannot create \(path) (\(error)): systemd's password requests stay on the console")
        }
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
                let access = client.peer.map { Access(peer: $0, daemonUID: daemonUID) } ?? .compatInput
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
        guard let refusal = access.refusal(of: request, rootWaits: questions?.isWaiting == true) else { return nil }
        throttled.info("access", "refused \(client.map { "\($0.label) (\($0.peer.map { "\($0)" } ?? "no peer"))" } ?? "a compat input"): \(refusal.message)")
        return refusal
    }

    /// Carries out a request the access policy allowed: one that reads, or acts outside
    /// the picture, here; one that may change the picture in `change`, and a frame soon.
    private func perform(_ request: Request, from client: ClientConnection?, access: Access) -> ReplyAction {
        let now = MonotonicClock.now()
        switch request {
        case .jobs(let value):
            boot.jobsDone(value / 100)
            updateBootEstimate()
        case .theme(let settings) where settings.isEmpty: return .reply(Reply.ok(activeThemeJSON()).encoded)
        case .newRoot(let path): return Self.reply(enterNewRoot(path))
        case .ping: break
        case .status: return .reply(Reply.ok(statusJSON(at: now)).encoded)
        case .wait: return wait(for: client, at: now)
        case .waitKey: return waitKey(for: client)
        case .snapshot(let path): return Self.reply(snapshot(toPath: path, at: now))
        case .snapshotToPassedFile: return Self.reply(snapshotToPassedFile(from: client, at: now))
        case .quit(let retain): quit(retain: retain, at: now)
        case .progress, .message, .title, .step, .describe, .mode, .state, .theme, .reload, .show, .hide, .deactivate, .reactivate,
            .failure, .failureSummary, .failureLine, .failureClear:
            let error = change(request, access: access, at: now)
            scheduleFrames()
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
            endBootEstimate(because: "a client reports progress")
            if let message { clientMessage = !message.isEmpty }
            screen.setProgress(value, message: message, at: now)
            noteMessage(message)
        case .message(let text):
            clientMessage = !text.isEmpty
            screen.setMessage(text)
            noteMessage(text)
        case .title(let text): screen.setTitle(text)
        case .step(let name): step(name, access: access, at: now)
        case .describe(let unit, let text): return describe(unit, as: text)
        case .mode(let mode): screen.setMode(mode)
        case .state(let state, let message):
            if state == .success || state == .failure { endBootEstimate(because: "a client ended the work") }
            if let message { clientMessage = !message.isEmpty }
            screen.setState(state, message: message, at: now)
            noteMessage(message)
        case .theme(let settings): return applyTheme(settings)
        case .failure(let title):
            log.info("a client put up the failure screen")
            screen.showFailure(title: title)
            keyWait.forgetKept()
            holdBootEstimate()
        case .failureSummary(let text): return screen.setFailureSummary(text)
        case .failureLine(let text): return screen.addFailureLine(text)
        case .failureClear:
            screen.clearFailure()
            keyWait.forgetKept()
            holdBootEstimate()
        case .reload: return reloadTheme()
        case .show: return show()
        case .hide: updateHandover { $0.hiddenByRequest = true }
        case .deactivate:
            deactivatedByRoot = access.isRoot
            updateHandover { $0.deactivated = true }
        case .reactivate: updateHandover { $0.deactivated = false }
        case .jobs, .newRoot, .ping, .status, .wait, .waitKey, .snapshot, .snapshotToPassedFile, .quit: break
        }
        return nil
    }

    /// A step of the boot (a unit systemd started): on the message line unless a client
    /// set it, in the details view, and into the boot's estimate and history.
    private func step(_ name: String, access: Access, at now: Double) {
        questions?.checkKeyboard()
        // Gauge's own units (gauged-poweroff.service showing this very screen,
        // gauged-ask-password.service taking a question to it) are no step to show.
        guard !Request.isGaugeUnit(name) else { return }
        let text = stepDescriptions.text(for: name) ?? name
        noteMessage(text)
        boot.step(name, at: now, recorded: access.mayRecordBootSteps)
        if !clientMessage { screen.setMessage(text) }
    }

    /// `describe`: how `unit`'s steps read from now on, the one on the message line (and
    /// the details view's newest line) too when it still shows the unit's name. Gauge's
    /// own units are never shown, so not kept either.
    private func describe(_ unit: String, as text: String) -> ProtocolError? {
        guard !Request.isGaugeUnit(unit) else { return nil }
        guard let line = stepDescriptions.set(unit, to: text) else {
            return ProtocolError(.range, "a unit name is at most 256 bytes, a description not blank")
        }
        if !clientMessage, screen.model.message == unit { screen.setMessage(line) }
        if bootMessages.replaceLast(unit, with: line), screen.model.details != nil { showDetails() }
        return nil
    }

    /// `theme KEY=VALUE...`: applied to the screen, and kept for `theme` alone.
    private func applyTheme(_ settings: [ThemeSetting]) -> ProtocolError? {
        do throws(ProtocolError) {
            for setting in try screen.applyTheme(settings) {
                themeSettings.removeAll { $0.key == setting.key }
                themeSettings.append((setting.key, setting.value))
            }
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
        if let client, !screen.isSettled(at: now) || pacer.running {
            waiters.append(client)
            scheduleFrames()
            return .deferred
        }
        return Self.reply(nil)
    }

    private func snapshot(toPath path: String, at now: Double) -> ProtocolError? {
        do throws(ProtocolError) {
            try SnapshotFile.write({ () throws(ProtocolError) in try screen.snapshotPNG(at: now) }, toPath: path)
        } catch {
            return error
        }
        return nil
    }

    /// `snapshot -`: into the file descriptor passed with the line.
    private func snapshotToPassedFile(from client: ClientConnection?, at now: Double) -> ProtocolError? {
        guard let fd = client?.takePassedDescriptor() else {
            return ProtocolError(.syntax, "snapshot - needs a file descriptor sent with the line (gaugectl snapshot FILE sends one)")
        }
        defer { Syscall.close(fd) }
        do throws(ProtocolError) {
            try SnapshotFile.write({ () throws(ProtocolError) in try screen.snapshotPNG(at: now) }, toPassed: fd)
        } catch {
            return error
        }
        return nil
    }

    /// `quit`: the boot's history saved (`--boot`), and the loop ends after this turn.
    private func quit(retain: Bool, at now: Double) {
        retainOnExit = retain
        log.info(retain ? "quit (retain) requested" : "quit requested")
        if options.boot { boot.saveHistory(endingAt: now) }
        loop.execute { [loop] in loop.stop() }
    }

    /// `wait` waits for the bar to show its value; in indeterminate mode there is none.
    private static let waitIndeterminate = ProtocolError(
        .state, "nothing to wait for in indeterminate mode: the bar has no value to settle on")

    /// Changes a reason to give the screen up, and hands it over when its owner changes.
    private func updateHandover(_ change: (inout ScreenHandover) -> Void) {
        let asked = questionShown != nil
        let changed = screenOwner.change(change)
        updateBootPause()
        guard changed else { return }
        questions?.place = questionPlace
        updateEscapeWatch()
        updateConsoleQuestionTimer()
        // The frame a display manager finds stays on screen until its own first one: it
        // must not show a question whose asker was just told there is no answer (a person
        // would type a passphrase into it).
        if asked, questionShown == nil, handover.owner == .displayManager {
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
        if screenOwner.consoleHungUp() { scheduleFrames() }
        watchConsoleHangup()
    }

    // MARK: - Console questions

    /// How long the console keeps the screen after the last sign of a question on it: long
    /// enough to read the answer's outcome, and for a retry or the next disk that asks at
    /// once; a passphrase check slower than this shows the splash until the retry asks.
    static let consoleQuestionGrace = 2.0

    /// Watches the console for programs asking on it: the VT under a device display, or
    /// the tty `--question-tty` names.
    private func watchConsoleQuestions() {
        let path: String?
        switch options.questionTTY {
        case .vt: path = console?.isAvailable == true ? console?.path : nil
        case .path(let tty): path = tty
        case .none: path = nil
        }
        if let path { consoleReaders = ConsoleReaders(ttyPath: path, log: log) }
        do {
            consoleQuestionTimer = try FrameTimer(loop: loop) { [self] _ in checkConsoleQuestions() }
        } catch {
            log.info("cannot arm the console question timer: \(error); programs asking on the console are not noticed")
        }
        if let readers = consoleReaders { watchConsoleActivity(readers.nodePaths) }
        // Whoever already waits is found by a look at start.
        consoleLookUntil = MonotonicClock.now() + Self.consoleLookWindow
        updateConsoleQuestionTimer()
    }

    /// How long the processes are looked at after the console was opened or written: the
    /// asker's wait follows its open or prompt within moments.
    static let consoleLookWindow = 2.0

    private func watchConsoleActivity(_ paths: [String]) {
        do throws(SystemError) {
            let watch = try ConsoleActivityWatch(paths: paths, log: log)
            try loop.register(watch.fd, events: .readable) { [self] _ in
                guard watch.drain() else { return }
                consoleLookUntil = MonotonicClock.now() + Self.consoleLookWindow
                updateConsoleQuestionTimer()
            }
            consoleActivity = watch
        } catch {
            // Without the kernel's word, the look goes on for as long as the splash covers.
            log.info("console questions: cannot watch the console's nodes: \(error); looking four times a second")
            consoleLookUntil = .infinity
        }
    }

    /// Runs while the console has the screen for a question, and while the splash covers
    /// a watched console and there is reason to look (the console was just opened or
    /// written, or the screen asks and Caps Lock must be followed); disarmed otherwise, so a
    /// still splash makes no wakeups for it.
    private func updateConsoleQuestionTimer() {
        let covering = consoleReaders != nil && handover.owner == .gauge && (device != nil || displays == nil)
        let looking = MonotonicClock.now() < consoleLookUntil || questionShown != nil
        guard covering && looking || handover.consoleQuestion else {
            consoleQuestionTimer?.stop()
            return
        }
        do {
            try consoleQuestionTimer?.start(fps: 4)
        } catch {
            log.info("cannot arm the console question timer: \(error)")
        }
    }

    private func checkConsoleQuestions() {
        let now = MonotonicClock.now()
        // Caps Lock pressed alone sends no character: its notice follows here.
        if let questions, let entry = screen.model.entry, entry.capsLock != questions.capsLock { questionsChanged() }
        if let reader = consoleReaders?.scan() {
            consoleQuestionAsked(by: reader)
        } else if handover.consoleQuestion, now - consoleQuestionSeen >= Self.consoleQuestionGrace {
            log.info("nobody waits on the console any more: the splash comes back")
            // A retry or the next disk asks at once: keep looking a moment.
            consoleLookUntil = now + Self.consoleLookWindow
            updateHandover { $0.consoleQuestion = false }
            scheduleFrames()
        } else if now >= consoleLookUntil {
            updateConsoleQuestionTimer()
        }
    }

    /// Someone asks on the console (`reader`), or a refused Plymouth question sent its
    /// caller there, or systemd's password request was just answered (nil): the console
    /// gets the screen, or keeps it for `consoleQuestionGrace`.
    private func consoleQuestionAsked(by reader: ConsoleReaders.Reader?, quietly: Bool = false) {
        consoleQuestionSeen = MonotonicClock.now()
        guard !handover.consoleQuestion else { return }
        if let reader {
            log.info("\(reader.name) (pid \(reader.pid)) waits to read the console: the console gets the screen")
        } else if !quietly {
            log.info("a question refused on the screen is asked on the console: the console gets the screen")
        }
        updateHandover { $0.consoleQuestion = true }
        updateConsoleQuestionTimer()
        scheduleFrames()
    }

    /// Follows systemd's password requests: the console gets the screen while one waits.
    private func watchPasswordRequests(in directory: String) {
        do throws(SystemError) {
            let watch = try AskPasswordWatch(directory: directory)
            try loop.register(watch.fd, events: .readable) { [self] _ in
                if watch.update() { passwordRequestsChanged() }
            }
            askPassword = watch
            screenOwner.handover.passwordPending = watch.isPending
        } catch {
            log.info("cannot watch \(directory) for password requests: \(error)")
        }
    }

    private func passwordRequestsChanged() {
        guard let watch = askPassword else { return }
        log.info(watch.isPending ? "a password request is waiting: the console gets the screen" : "password request answered")
        // Answered: the console keeps the screen a moment, for a retry or the next disk.
        if !watch.isPending, handover.passwordPending { consoleQuestionAsked(by: nil, quietly: true) }
        updateHandover { $0.passwordPending = watch.isPending }
        scheduleFrames()
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
        boot.enteredNewRoot()
        // Paths resolve in the new root from now on; a watch on an ancestor in the old
        // root would never see the real one.
        if let watch = askPassword {
            let before = watch.isPending
            watch.rearm()
            if watch.isPending != before { passwordRequestsChanged() }
        }
        return nil
    }

    // MARK: - Boot progress

    /// The bar follows the boot's estimate from now on, updated four times a second.
    private func startBootEstimate() {
        boot.start()
        do {
            let timer = try FrameTimer(loop: loop) { [self] _ in updateBootEstimate() }
            try timer.start(fps: 4)
            estimateTimer = timer
        } catch {
            log.info("cannot arm the boot estimate's timer: \(error)")
        }
        updateBootEstimate()
    }

    private func updateBootEstimate() {
        let now = MonotonicClock.now()
        guard let percent = boot.valueToShow(at: now) else { return }
        screen.setProgress(percent, message: nil, at: now)
        scheduleFrames()
    }

    /// While a failure screen is up the boot's estimate holds, its timer stopped (a person
    /// reads it: not boot time, and a screen left up for good wakes nobody); taken down
    /// (a unit failed and the boot goes on), the bar goes on from where it was.
    private func holdBootEstimate() {
        updateBootPause()
        guard boot.isRunning else { return }
        guard screen.model.failure == nil else { return estimateTimer?.stop() ?? () }
        do throws(SystemError) {
            try estimateTimer?.start(fps: 4)
        } catch {
            log.info("cannot arm the boot estimate's timer again: \(error)")
        }
        updateBootEstimate()
    }

    private func endBootEstimate(because reason: String) {
        guard boot.isRunning else { return }
        boot.end(because: reason)
        estimateTimer?.close()
        estimateTimer = nil
    }

    package func statusJSON(at time: Double) -> String {
        screen.status(at: time, fps: options.fps, clients: server?.clientCount ?? 0).json()
    }

    /// Re-reads the theme file onto the defaults, discarding runtime `theme` changes. A
    /// file with a problem (a bad line, a font or logo that cannot be opened) changes
    /// nothing: the answer names the first problem's file and line, the log every one.
    private func reloadTheme() -> ProtocolError? {
        let loaded: (theme: Theme, problems: [ThemeFile.Problem], settings: [(key: String, value: String)])
        do {
            loaded = try Self.theme(from: options)
        } catch {
            log.info("\(error)")
            return ProtocolError(.io, error.description)
        }
        for problem in loaded.problems { log.info("theme: \(problem)") }
        if let first = loaded.problems.first {
            let more = loaded.problems.count > 1 ? " (and \(loaded.problems.count - 1) more in the log)" : ""
            log.info("theme not reloaded: the one in use stays")
            return ProtocolError(.syntax, "\(first)\(more); the theme in use stays")
        }
        screen.replaceTheme(loaded.theme)
        themeSettings = loaded.settings
        log.info("theme reloaded")
        return nil
    }

    /// The theme file (if any) on the defaults with its problems and the settings it
    /// made, `--rotate` over it.
    private static func theme(from options: DaemonOptions) throws(ThemeFileError)
        -> (theme: Theme, problems: [ThemeFile.Problem], settings: [(key: String, value: String)])
    {
        var theme = Theme()
        var problems: [ThemeFile.Problem] = []
        var settings: [(key: String, value: String)] = []
        if let path = options.themePath {
            problems = try ThemeFile.load(path, into: &theme, applied: &settings, themes: options.themesDirectory)
        }
        if let degrees = options.rotate {
            settings.removeAll { $0.key == "rotation" }
            settings.append(("rotation", String(degrees)))
        }
        var unique: [(key: String, value: String)] = []
        for setting in settings.reversed() where !unique.contains(where: { $0.key == setting.key }) {
            unique.insert(setting, at: 0)
        }
        return (overridden(theme, by: options), problems, unique)
    }

    /// `theme` alone: the theme file and the settings over the defaults, as JSON.
    private func activeThemeJSON() -> String {
        JSONValue.object([
            .init("file", options.themePath.map { .string($0) } ?? .null),
            .init("settings", .object(themeSettings.map { .init($0.key, .string($0.value)) })),
        ]).encoded
    }

    private static func overridden(_ theme: Theme, by options: DaemonOptions) -> Theme {
        var theme = theme
        if let degrees = options.rotate, let rotation = Rotation(degrees: degrees) { theme.rotation = rotation }
        return theme
    }

    // MARK: - Frames

    /// Draws a frame soon if anything may have changed; the timer runs only while needed.
    private func scheduleFrames() {
        guard let timing = pacer.wake() else { return }
        pacer.running = arm(timing)
    }

    /// Arms the frame timer as the pacer says; false (and a log line) when it cannot be.
    private func arm(_ timing: FramePacer.Timing) -> Bool {
        do {
            switch timing {
            case .rate(let fps, let immediately): try frameTimer?.start(fps: fps, immediately: immediately)
            case .steps(let period, let first): try frameTimer?.start(period: period, first: first)
            case .idle: frameTimer?.stop()
            }
            return true
        } catch {
            log.info("cannot arm the frame timer: \(error)")
            return false
        }
    }

    private func tick() {
        let now = MonotonicClock.now()
        let presented = screen.renderFrame(at: now)
        noteFirstFrame(presented: presented)
        pacer.owed = !presented
        displays?.checkDevice()
        // `wait` replies once the settled state is on the display, not merely computed.
        let indeterminate = screen.model.mode == .indeterminate
        if presented, screen.isSettled(at: now) || indeterminate, !waiters.isEmpty {
            let ready = waiters
            waiters = []
            let reply = indeterminate ? Reply.err(Self.waitIndeterminate) : Reply.ok(nil)
            for client in ready { client.complete(reply: reply.encoded) }
        }
        guard presented else { return }
        // While a question is on the screen the clock runs on, so its field is drawn on
        // every tick rather than at each key (`ProgressScreen.renderFrame`).
        let timing = pacer.afterFrame(
            animating: screen.isAnimating(at: now), keepTicking: !waiters.isEmpty || screen.isQuestionShown
        ) { screen.frameSteps(at: now) }
        _ = arm(timing)
    }

    /// Logs once how long after exec the first frame reached a display device: the
    /// start-up figure a boot splash is judged by.
    private func noteFirstFrame(presented: Bool) {
        guard presented, !firstDeviceFrameLogged, let device else { return }
        firstDeviceFrameLogged = true
        let milliseconds = (MonotonicClock.now() - CGL_start_seconds()) * 1000
        log.info("first frame on \(device.name) \(PlainDecimal.format((milliseconds * 10).rounded() / 10)) ms after exec")
    }

    private func stepDemo() {
        let elapsed = MonotonicClock.now() - demoStart
        let steps = DemoScript.steps
        while demoIndex < steps.count, steps[demoIndex].at <= elapsed {
            _ = apply(steps[demoIndex].request, from: nil, access: .daemon)
            demoIndex += 1
        }
        if demoIndex == steps.count {
            demoTimer?.stop()
        }
    }

    private func signal(_ number: Int32) {
        switch number {
        case SIGHUP where terminal == nil:
            _ = reloadTheme()
            scheduleFrames()
        case SIGWINCH:
            guard let terminal else { return }
            if (try? terminal.resize()) == true { screen.replaceDisplay(terminal) }
            screen.invalidate()
            scheduleFrames()
        case ConsoleVT.releaseSignal where screenOwner.hasVT:
            screenOwner.vtReleased()
        case ConsoleVT.acquireSignal where screenOwner.hasVT:
            if screenOwner.vtAcquired() { scheduleFrames() }
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
        pacer.owed = false
        updateConsoleQuestionTimer()
        if screenOwner.deviceChanged(to: next, settled: settled) { scheduleFrames() }
    }

    /// How `--display` picks a kernel device; nil for the displays that are not one.
    private static func devicePolicy(_ choice: DaemonOptions.DisplayChoice) -> DisplaySlot.Policy? {
        switch choice {
        case .auto: .best
        case .drm(let path): .named(DeviceNode(kind: .drm, path: path ?? "/dev/dri/card0"))
        case .fbdev(let path): .named(DeviceNode(kind: .fbdev, path: path ?? "/dev/fb0"))
        case .memory, .terminal, .none: nil
        }
    }

    private static func openDisplay(_ choice: DaemonOptions.DisplayChoice, log: Log) throws(DaemonError) -> (any Display)? {
        switch choice {
        case .none, .auto, .drm, .fbdev:
            return nil
        case .memory(let spec):
            do {
                return try MemoryDisplay(spec: spec)
            } catch {
                throw DaemonError("\(error)")
            }
        case .terminal:
            do {
                return try TerminalDisplay(scale: terminalScale)
            } catch {
                throw DaemonError("\(error)")
            }
        }
    }

    /// Pixels per half-cell of `--display terminal`: a third of the cell resolution, so
    /// the text still reads (80x24 cells are 240x144 pixels).
    package static let terminalScale = 3
}

/// Why the daemon could not start, as one log line.
package struct DaemonError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
