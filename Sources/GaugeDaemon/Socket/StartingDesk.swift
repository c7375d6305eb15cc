import GaugeProtocol
import GaugeSystem

/// The native socket's requests while the daemon starts: between its steps (its socket
/// bound, its libraries loaded, its display opened, its scene built, before the first frame
/// is drawn), the start lets its server take what has come (`serveWaiting`). A `ping` is
/// answered then: the daemon is up and will serve, which is all a ping asks (a script's
/// `wait-ready`, a unit waiting for the splash). Any other request waits, its connection
/// with it, in the order it came, and is carried out by the daemon once it serves
/// (`open`), as if it had come then.
final class StartingDesk {
    private var handler: ClientConnection.RequestHandler?
    private var waiting: [(client: ClientConnection, item: LineFramer.Item)] = []

    func handle(_ item: LineFramer.Item, from client: ClientConnection) -> ReplyAction {
        if let handler { return handler(client, item) }
        // A connection whose request waits sends nothing more until it is answered, so a
        // ping here never overtakes one of its own.
        if case .line(let line) = item, case .success(.ping) = Request.parse(line) {
            return .reply(Reply.ok(nil).encoded)
        }
        waiting.append((client, item))
        return .deferred
    }

    /// Lets `server` accept and read what has come on its sockets, without waiting. Called
    /// between the start's steps: kept out of line, one copy for them all.
    @inline(never)
    func serveWaiting(_ server: SocketServer, on loop: EventLoop, log: Log) {
        do throws(SystemError) {
            try loop.handleReady(where: server.serves)
        } catch {
            log.info("cannot serve the socket while starting: \(error)")
        }
    }

    /// From now on `handler` serves every request; those that waited are carried out
    /// first, in the order they came.
    func open(to handler: @escaping ClientConnection.RequestHandler) {
        self.handler = handler
        let held = waiting
        waiting = []
        for (client, item) in held {
            if case .reply(let reply) = handler(client, item) { client.complete(reply: reply) }
        }
    }

    /// Drops the handler (and the daemon it holds) and what waits, once the server is closed.
    func close() {
        handler = nil
        waiting = []
    }
}
