import GaugeProtocol
import Glibc
import GaugeSystem

/// The inputs existing boot tools write to: psplash's FIFO and Plymouth's boot socket.
/// Their translators turn what arrives into requests, which go to the same place as the
/// native socket's; Plymouth's answer bytes go back once the requests are applied, so an
/// ACK means done (a display manager's `deactivate` finds the display released). A quit
/// stops the loop only after the callback, so it is answered too.
final class CompatInputs {
    private let loop: EventLoop
    private let log: Log
    private let policy: PeerPolicy
    private let apply: (Request, Access) -> Void
    private var fifo: PsplashFIFO?
    private var psplash = PsplashCommands()
    private var plymouthListener: PlymouthListener?
    private var plymouthClients: [Int32: PlymouthSession] = [:]
    private var plymouthAccess: [Int32: Access] = [:]
    private var plymouthMessages = PlymouthMessages()
    private var buffer = [UInt8](repeating: 0, count: 4096)
    /// What Plymouth's `--has-active-vt` answers: whether the daemon has the console's VT.
    var hasActiveVT = false

    /// Plymouth connections served at once; more are closed at once.
    static let maxPlymouthClients = 16

    /// `apply` gets each request with the rights of whoever sent it.
    init(loop: EventLoop, log: Log, policy: PeerPolicy, apply: @escaping (Request, Access) -> Void) {
        self.loop = loop
        self.log = log
        self.policy = policy
        self.apply = apply
    }

    func openPsplashFIFO(path: String) throws(DaemonError) {
        do {
            let fifo = try PsplashFIFO(path: path)
            try loop.register(fifo.fd, events: .readable) { [unowned self] _ in readFIFO() }
            self.fifo = fifo
            log.info("psplash FIFO at \(path)")
        } catch {
            throw DaemonError("cannot open the psplash FIFO \(path): \(error)")
        }
    }

    func openPlymouthSocket() throws(DaemonError) {
        do {
            let listener = try PlymouthListener()
            try loop.register(listener.fd, events: .readable) { [unowned self] _ in acceptPlymouth() }
            plymouthListener = listener
            log.info("Plymouth boot protocol on @\(PlymouthListener.socketName)")
        } catch {
            throw DaemonError("cannot listen on Plymouth's socket: \(error)")
        }
    }

    func close() {
        if let fifo {
            loop.unregister(fifo.fd)
            fifo.close()
        }
        fifo = nil
        for fd in plymouthClients.keys { drop(fd) }
        if let listener = plymouthListener {
            loop.unregister(listener.fd)
            listener.close()
        }
        plymouthListener = nil
    }

    private func deliver(_ output: CompatOutput, source: String, access: Access) {
        for line in output.logs { log.info("\(source): \(line)") }
        for request in output.requests { apply(request, access) }
    }

    private func readFIFO() {
        guard let fifo else { return }
        do {
            let bytes = try fifo.readAvailable()
            deliver(psplash.consume(bytes), source: "psplash", access: .compatInput)
        } catch {
            log.info("psplash FIFO: \(error)")
        }
    }

    private func acceptPlymouth() {
        guard let listener = plymouthListener else { return }
        while true {
            let accepted: Int32?
            do {
                accepted = try listener.accept()
            } catch {
                log.info("Plymouth socket: \(error)")
                return
            }
            guard let fd = accepted else { return }
            guard plymouthClients.count < Self.maxPlymouthClients else {
                Syscall.close(fd)
                continue
            }
            let peer = try? PeerCredentials.of(socket: fd)
            let authorized = peer.map { policy.allows($0) } ?? false
            do {
                try loop.register(fd, events: .readable) { [unowned self] _ in readPlymouth(fd) }
                plymouthClients[fd] = PlymouthSession(authorized: authorized, rootPeer: peer?.uid == 0, hasActiveVT: hasActiveVT)
                plymouthAccess[fd] = peer.map { Access(peer: $0) } ?? .compatInput
            } catch {
                Syscall.close(fd)
            }
        }
    }

    private func readPlymouth(_ fd: Int32) {
        guard var session = plymouthClients[fd] else { return }
        let count: Int?
        do {
            count = try buffer.withUnsafeMutableBytes { raw throws(SystemError) in try Syscall.read(fd, into: raw) }
        } catch {
            drop(fd)
            return
        }
        guard let count else { return }
        guard count > 0 else {
            drop(fd)
            return
        }
        let output = session.consume(buffer[0..<count], messages: &plymouthMessages)
        plymouthClients[fd] = session
        deliver(output, source: "plymouth", access: plymouthAccess[fd] ?? .compatInput)
        if !output.reply.isEmpty {
            // One byte per request: it fits the socket buffer unless the client never reads.
            let written = output.reply.withUnsafeBytes { try? Syscall.write(fd, $0) }
            if written == nil { log.debug("Plymouth client not reading its answers") }
        }
        if session.pendingByteCount > 4096 {
            log.info("plymouth: request too long, connection closed")
            drop(fd)
        }
    }

    private func drop(_ fd: Int32) {
        loop.unregister(fd)
        Syscall.close(fd)
        plymouthClients[fd] = nil
        plymouthAccess[fd] = nil
    }
}
