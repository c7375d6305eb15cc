import CGaugeLinux
import GaugeDisplay
import GaugeProtocol
import GaugeSystem

/// How `gauged` starts and stops: the order of its first steps (the socket bound before
/// anything is drawn, the signals taken before the console, the first frame before what it
/// does not need), the parts connected to the daemon, and the order they close in.
extension Daemon {
    /// Presents the first frame and sets up the loop's sources (`run()` calls it). `init`
    /// bound the sockets, made psplash's FIFO and Plymouth's pid file and blocked the
    /// signals the loop handles (what a client that had its answer may use next) before it
    /// opened the display, and the native socket answers a ping between the start's steps,
    /// the last time here before the first frame is drawn; any other request on it is
    /// carried out once the frame is up (`StartingDesk`). The signals are taken before the
    /// console is. What no part of the first frame needs (VT switching, the demo) is set up
    /// after it, so the splash is on screen sooner.
    package func start() throws(DaemonError) {
        guard let listeners else { throw DaemonError("cannot start twice") }
        try takeFramesAndSignals()
        // From here the parts take what `init` made for clients (`shutdown` undoes it before).
        self.listeners = nil
        connectParts()
        if options.psplashFIFO != nil || options.plymouth { startCompatInputs(listeners) }
        watchConsoleQuestions()
        if let directory = options.escapeInput { screenQuestions.watchKeyboards(in: directory) }
        if let server { startingDesk.serveWaiting(server, on: loop, log: log) }
        let showing = presentFirstFrame()
        try serve()
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

    /// The frame timer and the signals the loop handles.
    private func takeFramesAndSignals() throws(DaemonError) {
        do {
            // Before anything can schedule a frame (the boot estimate does).
            try frames.start(on: loop) { [self] in tick() }
            // Blocked since `init` (they wait for this source); read before the console is
            // put in graphics mode.
            var handled = Self.handledSignals
            if terminal != nil { handled.append(SIGWINCH) }
            signals = try SignalSource(loop: loop, signals: handled, restoring: signalMaskBefore) { [self] in signal($0) }
        } catch {
            throw DaemonError("cannot start: \(error)")
        }
    }

    /// psplash's FIFO and Plymouth's socket (`--psplash-fifo`, `--plymouth`), with
    /// Plymouth's questions asked on the screen (`--ask`).
    private func startCompatInputs(_ listeners: DaemonListeners) {
        let compat = CompatInputs(
            loop: loop, log: log, throttled: throttled, policy: PeerPolicy(groupID: listeners.groupID),
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
        compat.open(psplashFIFO: listeners.psplashFIFO, plymouth: listeners.plymouth, pidFile: listeners.plymouthPIDFile)
    }

    /// The title and mode asked for, the boot estimate, and the first frame, on the
    /// screen unless the console keeps it; whether it shows on a device.
    private func presentFirstFrame() -> Bool {
        if let title = options.title { screen.setTitle(title) }
        if options.shutdown { screen.setMode(.indeterminate) }
        if options.boot { boot.start() }
        let showing = screenOwner.takeForFirstFrame()
        if showing { screenOwner.watchHangup(on: loop) { [frames] in frames.schedule() } }
        screenQuestions.handoverChanged()
        if screen.renderFrame(at: MonotonicClock.now()) { frames.notePresented(on: device) }
        return showing
    }

    /// Serves every request on the native socket (those held while starting first), and
    /// starts the demo (`--demo`).
    private func serve() throws(DaemonError) {
        server?.onDisconnect = { [self] client in
            frames.forget(client)
            screenQuestions.forget(client)
        }
        startingDesk.open { [self] client, item in handle(item, from: client) }
        do {
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
        startingDesk.close()
        // A daemon that never started: what `init` made for clients, and the signals it blocked.
        listeners?.abandon()
        listeners = nil
        if signals == nil, let signalMaskBefore { _ = try? Syscall.signalMask(SIG_SETMASK, signalMaskBefore) }
    }

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
        consoleQuestions.watchConsole(options.questionTTY.path(console: console))
    }
}
