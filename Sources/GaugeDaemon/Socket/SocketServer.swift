import GaugeProtocol
import Glibc
import GaugeSystem

package struct SocketServerConfiguration: Sendable {
    /// Clients served at once; the next one gets `err io too many clients` and is closed.
    package var maxClients = Limits.defaultMaxClients
    /// Who may connect; others get `err denied` and are closed.
    package var policy = PeerPolicy()
    package var client = ClientLimits()
    /// Connections accepted per readiness callback, so a connection storm cannot hold
    /// the loop.
    package var acceptBatch = 16

    package init() {}
}

/// The native protocol's server: accepts clients on a `ListeningSocket`, checks each
/// peer's credentials, keeps at most `maxClients`, and gives every client a
/// `ClientConnection` that passes its lines to the request handler.
package final class SocketServer {
    package typealias RequestHandler = ClientConnection.RequestHandler

    /// Called when a client is gone (its deferred reply, if any, will never be sent).
    package var onDisconnect: ((ClientConnection) -> Void)?
    package private(set) var clients: [UInt64: ClientConnection] = [:]

    private let loop: EventLoop
    private let listener: ListeningSocket
    private let configuration: SocketServerConfiguration
    private let log: Log
    private let handler: RequestHandler
    private let scratch: ReadBuffer
    private var nextID: UInt64 = 1
    private var isListening = false
    private var acceptPaused = false

    package init(
        loop: EventLoop, listener: ListeningSocket, configuration: SocketServerConfiguration = .init(),
        log: Log, handler: @escaping RequestHandler
    ) {
        self.loop = loop
        self.listener = listener
        self.configuration = configuration
        self.log = log
        self.handler = handler
        scratch = ReadBuffer(count: max(1, configuration.client.readBudget))
    }

    deinit {
        close()
    }

    package var clientCount: Int { clients.count }

    /// Starts accepting clients.
    package func start() throws(SystemError) {
        guard !isListening else { return }
        try loop.register(listener.fd, events: .readable) { [weak self] _ in self?.acceptClients() }
        isListening = true
    }

    /// Stops listening (removing the socket file if this process created it) and closes
    /// every client after one last attempt to send what it is owed.
    package func close() {
        if isListening {
            loop.unregister(listener.fd)
            isListening = false
        }
        listener.close()
        for client in Array(clients.values) { client.close() }
        clients = [:]
    }

    // MARK: Accepting

    private func acceptClients() {
        for _ in 0..<max(1, configuration.acceptBatch) {
            let fd: Int32?
            do throws(SystemError) {
                fd = try Syscall.accept(listener.fd)
            } catch {
                let outOfResources = [EMFILE, ENFILE, ENOBUFS, ENOMEM].contains(error.errno)
                log.info("\(error)\(outOfResources ? "; not accepting until a client leaves" : "")")
                if outOfResources { setAcceptPaused(true) }
                return
            }
            guard let fd else { return }
            admit(fd)
        }
    }

    private func admit(_ fd: Int32) {
        let peer: PeerCredentials
        do throws(SystemError) {
            peer = try PeerCredentials.of(socket: fd)
        } catch {
            log.info("\(error); connection closed")
            Syscall.close(fd)
            return
        }
        guard configuration.policy.allows(peer) else {
            log.info("refused \(peer): not root, the daemon's user or a member of its group")
            refuse(fd, ProtocolError(.denied, "not allowed to talk to gauged (uid \(peer.uid))"))
            return
        }
        guard clients.count < configuration.maxClients else {
            log.info("refused \(peer): \(clients.count) clients connected already")
            refuse(fd, ProtocolError(.io, "too many clients"))
            return
        }
        let id = nextID
        nextID += 1
        let connection = ClientConnection(
            fd: fd, id: id, peer: peer, loop: loop, limits: configuration.client, scratch: scratch,
            log: log, handler: handler, onClose: { [weak self] in self?.connectionClosed($0) }
        )
        do throws(SystemError) {
            try connection.start()
        } catch {
            log.info("client \(id): \(error); connection closed")
            connection.close()
            return
        }
        clients[id] = connection
        log.debug("client \(id) connected (\(peer))")
    }

    /// Best effort: the reply line, then close. Bytes the client already sent are read
    /// first, so the kernel closes with a plain EOF rather than a reset that could make
    /// the client miss the reply.
    private func refuse(_ fd: Int32, _ error: ProtocolError) {
        let line = Array("err \(error.code.rawValue) \(error.message)\n".utf8)
        _ = line.withUnsafeBytes { try? Syscall.send(fd, $0) }
        _ = try? Syscall.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: scratch.bytes.prefix(4096)))
        Syscall.close(fd)
    }

    private func connectionClosed(_ connection: ClientConnection) {
        guard clients.removeValue(forKey: connection.id) != nil else { return }
        log.debug("client \(connection.id) disconnected")
        setAcceptPaused(false)
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
}
