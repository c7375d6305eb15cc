import CGaugeLinux
import GaugeProtocol
import GaugeSystem

/// The inputs existing boot tools write to: psplash's FIFO and Plymouth's boot socket.
/// Both are served by the daemon's one `Connection` type (Plymouth's socket by a
/// `ConnectionServer`, like the native one), so they get the same read budget, fairness,
/// connection slots and idle limit. Their translators turn what arrives into requests,
/// which go to the same place as the native socket's; Plymouth's answer bytes go back
/// once the requests are applied, so an ACK means done (a display manager's
/// `deactivate` finds the display released). A quit stops the loop only after the
/// callback, so it is answered too. Log lines about what they were sent are rate-limited.
final class CompatInputs {
    /// Plymouth's socket: the abstract name `/org/freedesktop/plymouthd`, trimmed (no
    /// trailing NULs in the address), as plymouthd binds it and its clients connect.
    static let plymouthSocket = "@/org/freedesktop/plymouthd"
    /// Plymouth connections served at once; more are closed at once.
    static let maxPlymouthClients = 16

    private let loop: EventLoop
    private let log: Log
    private let throttled: ThrottledLog
    private let policy: PeerPolicy
    private let limits: ClientLimits
    private let idleTimeout: Double?
    /// Applies a request with the peer's rights; false when the access policy refused it.
    private var apply: (Request, Access) -> Bool
    private var fifo: PsplashFIFO?
    private var fifoConnection: Connection?
    private var plymouth: ConnectionServer?
    private var plymouthMessages = PlymouthMessages(updates: PlymouthUpdates(read: CompatInputs.readPackageKitFile))
    /// Fires when an update mode's tool has said nothing for `PlymouthUpdates.stallSeconds`.
    private var updateStall: FrameTimer?
    private var updateActivity = 0
    private let scratch: ReadBuffer
    /// What Plymouth's `--has-active-vt` answers: whether the daemon has the console's VT.
    var hasActiveVT = false
    /// Serves Plymouth's questions and keystroke watches (`--ask`); nil refuses them.
    var questions: QuestionDesk?
    /// A question was refused, so its caller asks on the console: the console needs the screen.
    var onConsoleLent: (() -> Void)?
    /// A Plymouth client paused (true) or resumed (false) the boot's progress.
    var onPauseProgress: ((Bool) -> Void)?
    /// The pid file `claimPIDFile` created for this daemon, removed by `close`.
    private(set) var createdPIDFile: String?

    init(
        loop: EventLoop, log: Log, throttled: ThrottledLog, policy: PeerPolicy, limits: ClientLimits = .init(),
        idleTimeout: Double?, apply: @escaping (Request, Access) -> Bool
    ) {
        self.loop = loop
        self.log = log
        self.throttled = throttled
        self.policy = policy
        self.limits = limits
        self.idleTimeout = idleTimeout
        self.apply = apply
        scratch = ReadBuffer(count: limits.readBudget)
    }

    /// The translated Plymouth message list (for tests and status).
    var plymouthMessageCount: Int { plymouthMessages.displayed.count }

    /// Serves psplash's FIFO, made and opened by `DaemonListeners`.
    func servePsplashFIFO(_ fifo: PsplashFIFO) throws(DaemonError) {
        let path = fifo.path
        do throws(SystemError) {
            let connection = Connection(
                fd: fifo.fd, id: 0, label: "psplash FIFO", peer: nil, decoder: PsplashCommands(maxCommandBytes: limits.maxLineBytes),
                loop: loop, limits: limits, scratch: scratch, log: log, closesDescriptor: false,
                handler: { [self] _, output in
                    _ = deliver(output, source: "psplash", access: .compatInput)
                    return .send([])
                })
            try connection.start()
            self.fifo = fifo
            fifoConnection = connection
            log.info("psplash FIFO at \(path)")
        } catch {
            fifo.close()
            throw DaemonError("cannot read the psplash FIFO \(path): \(error)")
        }
    }

    /// Binds Plymouth's socket, which `openPlymouthSocket` then serves: the daemon binds it
    /// before it opens a display, so a client asking whether a splash runs (`plymouth
    /// --ping`) finds one from the daemon's first moments.
    static func bindPlymouthSocket() throws(DaemonError) -> ListeningSocket {
        do throws(ListenerError) {
            return try ListeningSocket.bind(path: plymouthSocket, backlog: 16)
        } catch {
            throw DaemonError("cannot listen on Plymouth's socket: \(error)")
        }
    }

    func openPlymouthSocket(_ listener: ListeningSocket) throws(DaemonError) {
        var configuration = SocketServerConfiguration()
        configuration.maxClients = Self.maxPlymouthClients
        configuration.policy = policy
        configuration.servesRefused = true
        configuration.client = limits
        configuration.idleTimeout = idleTimeout
        let server = ConnectionServer(
            loop: loop, listener: listener, configuration: configuration, log: log, throttled: throttled,
            name: "plymouth client", makeDecoder: { PlymouthFrameDecoder() }, refusal: { _ in [] },
            handler: { [self] connection, frame in
                let session = PlymouthSession(
                    authorized: connection.isAuthorized, rootPeer: connection.peer?.uid == 0, hasActiveVT: hasActiveVT,
                    asks: questions != nil)
                let output = session.answer(frame, messages: &plymouthMessages)
                let allowed = deliver(output, source: "plymouth", access: connection.peer.map { Access(peer: $0) } ?? .compatInput)
                watchUpdate()
                // Refused by the access policy: NAK, as plymouthd answers what it will not do.
                if !allowed { return .send([PlymouthSession.nak]) }
                if let ask = output.ask, let questions {
                    guard let now = questions.ask(ask, from: connection) else { return .deferred }
                    return .send(output.reply + now)
                }
                return .send(output.reply)
            })
        server.onDisconnect = { [self] connection in questions?.disconnected(connection) }
        do throws(SystemError) {
            try server.start()
        } catch {
            server.close()
            throw DaemonError("cannot listen on Plymouth's socket: \(error)")
        }
        plymouth = server
        questions?.acceptWaitingAskers = { [self] in plymouth?.acceptWaiting() }
        log.info("Plymouth boot protocol on \(Self.plymouthSocket)")
    }

    func close() {
        questions?.close()
        fifoConnection?.close()
        fifoConnection = nil
        fifo?.close()
        fifo = nil
        plymouth?.close()
        plymouth = nil
        updateStall?.close()
        updateStall = nil
        apply = { _, _ in false }
        onConsoleLent = nil
        onPauseProgress = nil
        if let path = createdPIDFile { PIDFile.remove(path, ifNaming: getpid()) }
        createdPIDFile = nil
    }

    /// Serves psplash's FIFO (`psplashFIFO`, made by `DaemonListeners`) and Plymouth's socket
    /// (`plymouth`, bound by `bindPlymouthSocket`), and removes at `close` the pid file
    /// claimed with it (`pidFile`, `claimPIDFile`). Another splash may hold any of them; the
    /// native socket still serves, so each failure is logged and the rest go on.
    func open(psplashFIFO: PsplashFIFO?, plymouth: ListeningSocket?, pidFile: String?) {
        do throws(DaemonError) {
            if let psplashFIFO { try servePsplashFIFO(psplashFIFO) }
        } catch {
            log.info("\(error)")
        }
        createdPIDFile = pidFile
        do throws(DaemonError) {
            if let plymouth { try openPlymouthSocket(plymouth) }
        } catch {
            log.info("\(error)")
            // No Plymouth socket served: systemd's agents must not send questions to it.
            if let pidFile { PIDFile.remove(pidFile, ifNaming: getpid()) }
            createdPIDFile = nil
        }
    }

    /// `/run/plymouth/pid` with the questions asked here: systemd's console password agent
    /// stays away and its Plymouth agent forwards questions to Plymouth's socket while the
    /// file exists. Created new, never through a link; a stale one is replaced, a live
    /// daemon's left alone (`PIDFile`). Whether it was created.
    static func claimPIDFile(_ path: String, log: Log) -> Bool {
        switch PIDFile.holder(of: path) {
        case .live(let pid, let name) where pid != getpid():
            log.info("\(path) belongs to \(name) (pid \(pid)), which is running: it stays, and this daemon does not claim it")
            return false
        case .stale(let reason):
            log.info("replacing a stale \(path): \(reason)")
        default:
            break
        }
        do throws(SystemError) {
            try PIDFile.create(path, pid: getpid())
            log.info("questions are asked on the screen; \(path) tells systemd to send its password requests here")
            return true
        } catch {
            log.info("cannot create \(path) (\(error)): systemd's password requests stay on the console")
            return false
        }
    }

    /// In an update mode, (re)arms the stall timer on each word from the tool; outside, stops it.
    private func watchUpdate() {
        let updates = plymouthMessages.updates
        guard updates.isActive else {
            updateStall?.stop()
            return
        }
        guard updates.activity != updateActivity || updateStall == nil else { return }
        updateActivity = updates.activity
        do throws(SystemError) {
            if updateStall == nil {
                updateStall = try FrameTimer(loop: loop) { [self] _ in
                    updateStall?.stop()
                    _ = deliver(CompatOutput(requests: plymouthMessages.updates.stalled()), source: "plymouth", access: .compatInput)
                }
            }
            try updateStall?.start(period: PlymouthUpdates.stallSeconds, first: MonotonicClock.now() + PlymouthUpdates.stallSeconds)
        } catch {
            log.info("cannot arm the update's stall timer: \(error)")
        }
    }

    /// One of PackageKit's small key files under /var/lib/PackageKit (read whole, non-blocking,
    /// a regular file only; see `PlymouthUpdates`); nil when it is not there.
    @Sendable static func readPackageKitFile(_ path: String) -> [UInt8]? {
        try? RegularFile.read(path, maxBytes: 64 * 1024)
    }

    /// Applies what a translator made; false when the access policy refused a request.
    private func deliver(_ output: CompatOutput, source: String, access: Access) -> Bool {
        for line in output.logs { throttled.info(source, line) }
        var allowed = true
        for request in output.requests where !apply(request, access) { allowed = false }
        if output.lendsConsole { onConsoleLent?() }
        if let pauses = output.pausesProgress { onPauseProgress?(pauses) }
        return allowed
    }
}
