import CGaugeLinux
import GaugeProtocol
import GaugeTranslators
import GaugeSystem

/// One connection to the daemon kept open for many requests (every long-running source's,
/// through its `RequestStream`, and `systemd --boot-estimate`'s): each request is sent and
/// its reply line read within its own deadline. A failure closes the connection; the next
/// request connects again.
final class DaemonSession {
    let socketPath: String
    let timeout: Double?
    private var fd: Int32 = -1
    private var received: [UInt8] = []
    /// Connections made so far.
    private(set) var connectionCount = 0

    init(socketPath: String, timeout: Double?) {
        self.socketPath = socketPath
        self.timeout = timeout
    }

    deinit { disconnect() }

    var isConnected: Bool { fd >= 0 }

    func disconnect() {
        if fd >= 0 { Syscall.close(fd) }
        fd = -1
        received.removeAll()
    }

    /// Connects unless connected; true when a new connection was made. A connection kept
    /// from an earlier request that the daemon has closed meanwhile (it drops connections
    /// idle too long, or it was restarted) is replaced. `waitingForDaemon`: wait, within
    /// the timeout, for a daemon that is not listening yet.
    func connect(waitingForDaemon: Bool) throws(ConnectionFailure) -> Bool {
        if fd >= 0, peerHasClosed() { disconnect() }
        guard fd < 0 else { return false }
        fd = try DaemonConnection.connect(
            to: socketPath, deadline: Deadline(seconds: timeout), waitingForDaemon: waitingForDaemon)
        connectionCount += 1
        return true
    }

    /// Sends `request` (connecting first when needed, without waiting for a daemon) and
    /// returns the daemon's reply.
    func send(_ request: Request) throws(ConnectionFailure) -> Reply {
        let deadline = Deadline(seconds: timeout)
        do throws(ConnectionFailure) {
            _ = try connect(waitingForDaemon: false)
            try DaemonConnection.send(Array((request.encoded + "\n").utf8), on: fd, path: socketPath, deadline: deadline)
            let line = try DaemonConnection.receiveLine(from: fd, buffered: &received, path: socketPath, deadline: deadline)
            guard let reply = Reply.parse(line) else {
                throw ConnectionFailure(message: "\(socketPath) sent something that is not a gauged reply")
            }
            return reply
        } catch {
            disconnect()
            throw error
        }
    }

    /// Sends `requests` in one write, then reads their replies in order (the daemon answers
    /// a connection's requests in the order they came), all within one timeout: the daemon
    /// takes a loop turn's worth at a time instead of one request a round trip, so a long
    /// batch (a failure screen's lines) costs a few of its turns and frames, not one each.
    /// A daemon that refuses the connection (`err` with its reason, then closed: too many
    /// clients) is answered by that reply: the replies end at an `err` the daemon closed after.
    func send(batch requests: [Request]) throws(ConnectionFailure) -> [Reply] {
        let deadline = Deadline(seconds: timeout)
        var replies: [Reply] = []
        do throws(ConnectionFailure) {
            _ = try connect(waitingForDaemon: false)
            let bytes = requests.flatMap { Array(($0.encoded + "\n").utf8) }
            do throws(ConnectionFailure) {
                try DaemonConnection.send(bytes, on: fd, path: socketPath, deadline: deadline)
            } catch let failure where failure.peerClosed {
                // Closed while the batch went out: its reply, if it sent one, is read below.
            }
            for _ in requests {
                let line = try DaemonConnection.receiveLine(from: fd, buffered: &received, path: socketPath, deadline: deadline)
                guard let reply = Reply.parse(line) else {
                    throw ConnectionFailure(message: "\(socketPath) sent something that is not a gauged reply")
                }
                replies.append(reply)
            }
            return replies
        } catch {
            disconnect()
            if case .err? = replies.last { return replies }
            throw error
        }
    }

    /// Reads until the daemon closes the connection (within the timeout), then disconnects.
    func waitForClose() throws(ConnectionFailure) {
        guard fd >= 0 else { return }
        defer { disconnect() }
        try DaemonConnection.waitForClose(fd, path: socketPath, deadline: Deadline(seconds: timeout))
    }

    /// The daemon closed the kept connection: it is readable with nothing sent for us
    /// (replies are read as they come, so anything readable now is the end of the stream).
    private func peerHasClosed() -> Bool {
        guard let events = try? Syscall.poll(fd, events: Int16(POLLIN), timeoutMilliseconds: 0) else { return true }
        return events != 0
    }
}

/// Sends the requests of a long-running source (`gauge`, `swupdate`, `bootc`, `systemd`,
/// `rauc`, `fwupd`), which must keep going when the daemon does not: an `err` reply is
/// reported and the stream goes on; a lost daemon is reported once, its requests are
/// dropped, and a new connection is tried at most once a second until one works. The
/// first connection waits for a daemon that is still starting (unless `--no-wait`); later
/// ones do not, so input keeps being read. After a reconnection (a restarted daemon knows
/// nothing of the stream) the title and the message are sent again before the next
/// request.
final class RequestStream {
    let session: DaemonSession
    private let label: String
    /// The source's complaints about its input, and the daemon's `err` replies to what it
    /// made of it: rate-limited, one shared limit.
    let complaints: Complaints
    private var waitsForDaemon: Bool
    private var lost = false
    private var lastAttempt: UInt64 = 0
    /// The last title and message sent (or meant to be), for a new connection.
    private var title: String?
    private var message: String?
    private(set) var sawError = false
    private(set) var sawFailure = false
    /// The part of the bar this command's progress is drawn in (`--range`); nil: all of it.
    var range: BarRange?

    init(session: DaemonSession, label: String, waitsForDaemon: Bool = true) {
        complaints = Complaints(label: label)
        self.session = session
        self.label = label
        self.waitsForDaemon = waitsForDaemon
    }

    /// The stream a command that follows a source opens: to the invocation's socket, with
    /// its timeout, waiting for a daemon unless `--no-wait`.
    convenience init(invocation: Invocation, label: String) {
        self.init(
            session: DaemonSession(socketPath: invocation.socketPath, timeout: invocation.timeout), label: label,
            waitsForDaemon: invocation.waitsForDaemon)
    }

    /// 0 when every request was answered `ok`, 1 when one got `err`, 3 when one could
    /// not be delivered.
    var exitStatus: ExitStatus {
        sawFailure ? .noDaemon : sawError ? .daemonError : .ok
    }

    /// Sends each of `requests` in turn.
    func send(_ requests: [Request]) {
        for request in requests { send(request) }
    }

    /// Sends `request`; true when the daemon answered it `ok`.
    @discardableResult
    func send(_ original: Request) -> Bool {
        let request = range?.map(original) ?? original
        remember(request)
        let now = Deadline.now()
        if lost && now &- lastAttempt < 1_000_000_000 {
            sawFailure = true
            return false
        }
        lastAttempt = now
        do {
            let hadConnection = session.connectionCount > 0
            let wait = waitsForDaemon
            waitsForDaemon = false
            if try session.connect(waitingForDaemon: wait), hadConnection {
                for context in contextRequests(before: request) { try exchange(context) }
            }
            let answeredOK = try exchange(request)
            if lost { printError("gaugectl: \(label): \(session.socketPath) answers again") }
            lost = false
            return answeredOK
        } catch {
            sawFailure = true
            if !lost { printError("gaugectl: \(label): \(error.message); requests are dropped until it answers") }
            lost = true
            return false
        }
    }

    /// `settings` with the stall time of the daemon's theme (its status' `stall_time`)
    /// when it is to come from there; the settings as they are when the daemon does not
    /// answer or does not say (an older daemon). Waits for the daemon as `send` does.
    func withThemeStall(_ settings: HonestBar.Settings) -> HonestBar.Settings {
        guard settings.stallFromTheme else { return settings }
        var resolved = settings
        resolved.stallFromTheme = false
        do {
            let wait = waitsForDaemon
            waitsForDaemon = false
            _ = try session.connect(waitingForDaemon: wait)
            guard case .ok(let payload?) = try session.send(.status), let status = Status.parse(json: payload),
                let seconds = status.stallTime
            else { return resolved }
            resolved.stallSeconds = seconds > 0 ? seconds : nil
        } catch {
            // The first request says so, and tries again.
        }
        return resolved
    }

    /// After a `quit` was answered: waits (within the timeout) until the daemon has
    /// closed the connection, that is, given the display back and gone.
    func waitForClose() {
        do {
            try session.waitForClose()
        } catch {
            sawFailure = true
            printError("gaugectl: \(label): \(error.message)")
        }
    }

    @discardableResult
    private func exchange(_ request: Request) throws(ConnectionFailure) -> Bool {
        guard case .err(let error) = try session.send(request) else { return true }
        sawError = true
        complaints.report("'\(request.encoded)': \(error.code.rawValue): \(error.message)")
        return false
    }

    private func remember(_ request: Request) {
        switch request {
        case .title(let text): title = text
        case .message(let text): message = text
        case .progress(_, let text?), .state(_, let text?): message = text
        default: break
        }
    }

    /// What a new daemon needs before `request` to show what the stream has set: the
    /// title and the message, unless `request` sets them itself.
    private func contextRequests(before request: Request) -> [Request] {
        var context: [Request] = []
        if let title, !title.isEmpty, request != .title(title) { context.append(.title(title)) }
        if let message, !message.isEmpty {
            switch request {
            case .message, .progress(_, _?), .state(_, _?): break
            default: context.append(.message(message))
            }
        }
        return context
    }
}

extension DaemonSession {
    /// A session for a command that feeds gauged from elsewhere (`label`, its name in
    /// messages), connected at once: with no daemon (turned off, never started) there is
    /// nothing to feed, and nothing to wait for on the other side, so the command ends (exit 3).
    static func connectedOrExit(_ invocation: Invocation, label: String) -> DaemonSession {
        let session = DaemonSession(socketPath: invocation.socketPath, timeout: invocation.timeout)
        do throws(ConnectionFailure) {
            _ = try session.connect(waitingForDaemon: invocation.waitsForDaemon)
        } catch {
            printError("gaugectl: \(label): \(error.message)")
            finish(.noDaemon)
        }
        return session
    }
}
