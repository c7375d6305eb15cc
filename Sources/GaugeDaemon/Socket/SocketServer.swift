import CGaugeLinux
import GaugeProtocol
import GaugeSystem

package struct SocketServerConfiguration: Sendable {
    /// Connections served at once; the next one is refused and closed.
    package var maxClients = Limits.defaultMaxClients
    /// Slots only root (and the daemon's own user) may take: other peers get at most
    /// `maxClients - privilegedReserve`, so they cannot lock root out.
    var privilegedReserve = 4
    /// Who may connect. Others are refused and closed, or, with `servesRefused`, served
    /// as unauthorized (Plymouth's socket answers everyone, with NAKs).
    package var policy = PeerPolicy()
    var servesRefused = false
    package var client = ClientLimits()
    /// Connections accepted per readiness callback, so a connection storm cannot hold
    /// the loop.
    var acceptBatch = 16
    /// A connection that sends nothing for this long (and awaits no deferred answer) is
    /// closed, so idle connections cannot hold slots forever; nil: never.
    package var idleTimeout: Double? = 300

    package init() {}
}

/// Accepts connections on a `ListeningSocket` and serves each with a `Connection` of the
/// same decoder: checks each peer's credentials, keeps at most `maxClients` (with a
/// reserve for root), drops idle connections, and passes every message to the handler.
/// The native socket is a `SocketServer` (lines); Plymouth's socket uses the same type
/// with Plymouth's frames.
package final class ConnectionServer {
    /// Called when a connection is gone (its deferred answer, if any, will never be sent).
    package var onDisconnect: ((Connection) -> Void)?
    package private(set) var clients: [UInt64: Connection] = [:]

    private let loop: EventLoop
    private let listener: ListeningSocket
    private let configuration: SocketServerConfiguration
    private let log: Log
    private let throttled: ThrottledLog
    /// "client", "plymouth client": how log lines name a connection.
    private let name: String
    /// A new connection's decoder and handler; nil once the server is closed (what the
    /// handler holds is let go).
    private var makeInbox: (() -> Inbox)?
    /// The bytes a refused peer gets before it is closed.
    private let refusal: (ProtocolError) -> [UInt8]
    private let receivesDescriptors: Bool
    private let scratch: ReadBuffer
    private var idleTimer: FrameTimer?
    private var idleTimerRunning = false
    private var nextID: UInt64 = 1
    private var isListening = false
    private var acceptPaused = false

    /// Each connection gets a decoder of `makeDecoder`; `handler` serves its messages.
    package convenience init<Decoder: MessageDecoder>(
        loop: EventLoop, listener: ListeningSocket, configuration: SocketServerConfiguration = .init(),
        log: Log, throttled: ThrottledLog? = nil, name: String, makeDecoder: @escaping () -> Decoder,
        refusal: @escaping (ProtocolError) -> [UInt8], receivesDescriptors: Bool = false,
        handler: @escaping (Connection, Decoder.Message) -> ConnectionAction
    ) {
        self.init(
            loop: loop, listener: listener, configuration: configuration, log: log, throttled: throttled, name: name,
            makeInbox: { DecodingInbox(decoder: makeDecoder(), handler: handler) }, refusal: refusal,
            receivesDescriptors: receivesDescriptors)
    }

    private init(
        loop: EventLoop, listener: ListeningSocket, configuration: SocketServerConfiguration, log: Log,
        throttled: ThrottledLog?, name: String, makeInbox: @escaping () -> Inbox,
        refusal: @escaping (ProtocolError) -> [UInt8], receivesDescriptors: Bool
    ) {
        self.loop = loop
        self.listener = listener
        self.configuration = configuration
        self.log = log
        self.throttled = throttled ?? ThrottledLog(log: log)
        self.name = name
        self.makeInbox = makeInbox
        self.refusal = refusal
        self.receivesDescriptors = receivesDescriptors
        scratch = ReadBuffer(count: max(1, configuration.client.readBudget))
    }

    deinit {
        close()
    }

    package var clientCount: Int { clients.count }

    /// Whether `fd` is this server's: its listening socket or a connection's.
    func serves(_ fd: Int32) -> Bool {
        fd == listener.fd || clients.values.contains { $0.fd == fd }
    }

    /// Starts accepting connections.
    package func start() throws(SystemError) {
        guard !isListening else { return }
        try loop.register(listener.fd, events: .readable) { [self] _ in acceptClients() }
        isListening = true
        if configuration.idleTimeout != nil {
            idleTimer = try FrameTimer(loop: loop) { [self] _ in dropIdleConnections() }
        }
    }

    /// Stops listening (removing the socket file if this process created it) and closes
    /// every connection after one last attempt to send what it is owed.
    package func close() {
        if isListening {
            loop.unregister(listener.fd)
            isListening = false
        }
        listener.close()
        for client in Array(clients.values) { client.close() }
        clients = [:]
        idleTimer?.close()
        idleTimer = nil
        makeInbox = nil
        onDisconnect = nil
    }

    // MARK: Accepting

    /// Accepts the connections already queued now, rather than when the loop next reports
    /// the listening socket: a loop turn may report (and read) another descriptor whose
    /// data came after a connection that the same turn does not report yet.
    package func acceptWaiting() {
        guard isListening, !acceptPaused else { return }
        acceptClients()
    }

    private func acceptClients() {
        for _ in 0..<max(1, configuration.acceptBatch) {
            let fd: Int32?
            do throws(SystemError) {
                fd = try Syscall.accept(listener.fd)
            } catch {
                let outOfResources = [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(error.errno)
                throttled.info(name, "\(error)\(outOfResources ? "; not accepting until a connection closes" : "")")
                if outOfResources { setAcceptPaused(true) }
                return
            }
            guard let fd else { return }
            admit(fd)
        }
    }

    private func admit(_ fd: Int32) {
        guard let makeInbox else {
            Syscall.close(fd)
            return
        }
        let peer: PeerCredentials
        do throws(SystemError) {
            peer = try PeerCredentials.of(socket: fd)
        } catch {
            throttled.info(name, "\(error); connection closed")
            Syscall.close(fd)
            return
        }
        let authorized = configuration.policy.allows(peer)
        guard authorized || configuration.servesRefused else {
            throttled.info(name, "refused \(peer): not root, the daemon's user or a member of its group")
            refuse(fd, ProtocolError(.denied, "not allowed to talk to gauged (uid \(peer.uid))"))
            return
        }
        let privileged = configuration.policy.isPrivileged(peer)
        let slots = privileged
            ? configuration.maxClients : max(0, configuration.maxClients - configuration.privilegedReserve)
        guard clients.count < slots else {
            throttled.info(name, "refused \(peer): \(clients.count) connections already")
            refuse(fd, ProtocolError(.io, "too many clients"))
            return
        }
        let id = nextID
        nextID += 1
        let connection = Connection(
            fd: fd, id: id, label: "\(name) \(id)", peer: peer, isAuthorized: authorized, inbox: makeInbox(),
            loop: loop, limits: configuration.client, scratch: scratch, log: log, closesDescriptor: true,
            receivesDescriptors: receivesDescriptors, onClose: { [self] in connectionClosed($0) }
        )
        // Tracked before it starts: starting serves what the peer already sent, which
        // may end the connection at once.
        clients[id] = connection
        log.debug("\(name) \(id) connected (\(peer))")
        startIdleTimer()
        do throws(SystemError) {
            try connection.start()
        } catch {
            log.info("\(name) \(id): \(error); connection closed")
            connection.close()
        }
    }

    /// Best effort: the refusal, then close. Bytes the peer already sent are read
    /// first, so the kernel closes with a plain EOF rather than a reset that could make
    /// the peer miss the refusal.
    private func refuse(_ fd: Int32, _ error: ProtocolError) {
        let bytes = refusal(error)
        if !bytes.isEmpty { _ = bytes.withUnsafeBytes { try? Syscall.send(fd, $0) } }
        _ = try? Syscall.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: scratch.bytes.prefix(4096)))
        Syscall.close(fd)
    }

    private func connectionClosed(_ connection: Connection) {
        guard clients.removeValue(forKey: connection.id) != nil else { return }
        log.debug("\(connection.label) disconnected")
        setAcceptPaused(false)
        if clients.isEmpty { stopIdleTimer() }
        onDisconnect?(connection)
    }

    private func setAcceptPaused(_ paused: Bool) {
        guard isListening, paused != acceptPaused else { return }
        do throws(SystemError) {
            try loop.modify(listener.fd, events: paused ? [] : .readable)
            acceptPaused = paused
        } catch {
            log.info("\(error)")
        }
    }

    // MARK: Idle connections

    /// The check runs four times per timeout (so a silent connection goes after 1 to 1¼
    /// timeouts), and only while connections are open: no wakeups for an idle daemon.
    private func startIdleTimer() {
        guard !idleTimerRunning, let timeout = configuration.idleTimeout, let idleTimer else { return }
        let period = max(timeout / 4, 0.02)
        do throws(SystemError) {
            try idleTimer.start(fps: 1 / period)
            idleTimerRunning = true
        } catch {
            log.info("cannot arm the idle timer: \(error)")
        }
    }

    private func stopIdleTimer() {
        guard idleTimerRunning else { return }
        idleTimer?.stop()
        idleTimerRunning = false
    }

    private func dropIdleConnections() {
        guard let timeout = configuration.idleTimeout else { return }
        let now = MonotonicClock.now()
        for connection in Array(clients.values)
        where !connection.isAwaitingReply && !connection.hasQueuedMessages && now - connection.lastActivity >= timeout {
            throttled.info(name, "\(connection.label) (\(connection.peer.map { "\($0)" } ?? "")): idle for \(PlainDecimal.format(timeout)) s, closed")
            connection.close()
        }
    }
}

/// The native protocol's server: lines in, one reply line per request out.
package typealias SocketServer = ConnectionServer

extension ConnectionServer {
    package typealias RequestHandler = ClientConnection.RequestHandler

    package convenience init(
        loop: EventLoop, listener: ListeningSocket, configuration: SocketServerConfiguration = .init(),
        log: Log, throttled: ThrottledLog? = nil, handler: @escaping RequestHandler
    ) {
        let maxLineBytes = configuration.client.maxLineBytes
        self.init(
            loop: loop, listener: listener, configuration: configuration, log: log, throttled: throttled,
            name: "client", makeDecoder: { LineFramer(maxLineBytes: maxLineBytes) },
            refusal: { ClientConnection.replyLine("err \($0.code.rawValue) \($0.message)") },
            receivesDescriptors: true,
            handler: { connection, item in
                switch handler(connection, item) {
                case .reply(let reply): .send(ClientConnection.replyLine(reply))
                case .deferred: .deferred
                }
            })
    }
}
