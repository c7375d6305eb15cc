import GaugeProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// One connection to the daemon kept open for many requests (`gauge`, `swupdate`):
/// each request is sent and its reply line read within its own deadline. A failure
/// closes the connection; the next request connects again.
final class DaemonSession {
    let socketPath: String
    let timeout: Double?
    private var fd: Int32 = -1
    private var received: [UInt8] = []

    init(socketPath: String, timeout: Double?) {
        self.socketPath = socketPath
        self.timeout = timeout
    }

    deinit { disconnect() }

    var isConnected: Bool { fd >= 0 }

    func disconnect() {
        if fd >= 0 { close(fd) }
        fd = -1
        received.removeAll()
    }

    /// Sends `request` and returns the daemon's reply.
    func send(_ request: Request) throws(ConnectionFailure) -> Reply {
        let deadline = Deadline(seconds: timeout)
        do throws(ConnectionFailure) {
            if fd < 0 { fd = try DaemonConnection.connect(to: socketPath, deadline: deadline) }
            try DaemonConnection.send(Array((request.encoded + "\n").utf8), on: fd, path: socketPath, deadline: deadline)
            let line = try receiveLine(deadline: deadline)
            guard let reply = Reply.parse(line) else {
                throw ConnectionFailure(message: "\(socketPath) sent something that is not a gauged reply")
            }
            return reply
        } catch {
            disconnect()
            throw error
        }
    }

    private func receiveLine(deadline: Deadline) throws(ConnectionFailure) -> String {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let newline = received.firstIndex(of: UInt8(ascii: "\n")) {
                defer { received.removeFirst(newline + 1) }
                return String(decoding: received[..<newline], as: UTF8.self)
            }
            guard received.count <= DaemonConnection.maxReplyBytes else {
                throw ConnectionFailure(message: "reply from \(socketPath) is longer than \(DaemonConnection.maxReplyBytes) bytes")
            }
            guard try DaemonConnection.wait(fd, for: Int16(POLLIN), path: socketPath, deadline: deadline) else {
                throw DaemonConnection.timedOut("waiting for a reply from", socketPath, deadline)
            }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += chunk[..<count]
            } else if count == 0 {
                throw ConnectionFailure(message: "\(socketPath) closed the connection without a reply")
            } else {
                let code = errno
                if code == EINTR || code == EAGAIN { continue }
                if code == ECONNRESET {
                    throw ConnectionFailure(message: "\(socketPath) closed the connection without a reply")
                }
                throw DaemonConnection.failure("cannot read from", socketPath, code)
            }
        }
    }
}

/// Sends a stream of requests for `gauge` and `swupdate`, which must keep going when
/// the daemon does not: an `err` reply is reported and the stream goes on; a lost
/// daemon is reported once, its requests are dropped, and a new connection is tried at
/// most once a second until one works.
final class RequestStream {
    let session: DaemonSession
    private let label: String
    private var lost = false
    private var lastAttempt: UInt64 = 0
    private(set) var sawError = false
    private(set) var sawFailure = false

    init(session: DaemonSession, label: String) {
        self.session = session
        self.label = label
    }

    /// 0 when every request was answered `ok`, 1 when one got `err`, 3 when one could
    /// not be delivered.
    var exitStatus: ExitStatus {
        sawFailure ? .noDaemon : sawError ? .daemonError : .ok
    }

    func send(_ request: Request) {
        let now = Deadline.now()
        if lost && now &- lastAttempt < 1_000_000_000 {
            sawFailure = true
            return
        }
        lastAttempt = now
        do {
            let reply = try session.send(request)
            if lost { printError("gaugectl: \(label): \(session.socketPath) answers again") }
            lost = false
            if case .err(let error) = reply {
                sawError = true
                printError("gaugectl: \(label): '\(request.encoded)': \(error.code.rawValue): \(error.message)")
            }
        } catch {
            sawFailure = true
            if !lost { printError("gaugectl: \(label): \(error.message); requests are dropped until it answers") }
            lost = true
        }
    }
}
