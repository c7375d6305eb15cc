import CGaugeLinux
import GaugeProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// Why a call got no reply; exit status 3.
struct ConnectionFailure: Error {
    var message: String
    /// The daemon closed the connection while the request was being sent.
    var peerClosed = false
}

/// A point in time on the monotonic clock after which a call gives up.
struct Deadline {
    /// Nanoseconds on CLOCK_MONOTONIC; nil means never.
    private let end: UInt64?
    let seconds: Double?

    init(seconds: Double?) {
        self.seconds = seconds
        self.end = seconds.map { Self.now() &+ UInt64($0 * 1e9) }
    }

    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Milliseconds left for `poll` (rounded up, so a poll never ends early); -1 without
    /// a deadline; 0 once it has passed.
    var pollTimeout: Int32 {
        guard let end else { return -1 }
        let now = Self.now()
        guard end > now else { return 0 }
        let milliseconds = (end - now + 999_999) / 1_000_000
        return Int32(min(milliseconds, UInt64(Int32.max)))
    }

    var hasPassed: Bool {
        guard let end else { return false }
        return Self.now() >= end
    }
}

/// One request and its reply over the daemon's Unix socket, all within a deadline:
/// non-blocking connect, send and receive, each waiting with `poll` for the time left.
enum DaemonConnection {
    /// The longest reply line read (a status with a 4 KiB message fits many times over).
    static let maxReplyBytes = 1 << 20

    /// Sends `line` plus `\n` to the socket at `path` and returns the reply line without
    /// its `\n`. With `awaitingClose`, an `ok` reply is returned only once the daemon has
    /// closed the connection too. `passing`, a descriptor, goes with the line (SCM_RIGHTS).
    static func exchange(
        line: String, socketPath path: String, deadline: Deadline, awaitingClose: Bool = false,
        passing descriptor: Int32? = nil
    ) throws(ConnectionFailure) -> String {
        let socket = try connect(to: path, deadline: deadline)
        defer { close(socket) }
        if awaitingClose {
            let reply = try exchange(line: line, on: socket, path: path, deadline: deadline, passing: descriptor)
            if case .ok = Reply.parse(reply) { try waitForClose(socket, path: path, deadline: deadline) }
            return reply
        }
        return try exchange(line: line, on: socket, path: path, deadline: deadline, passing: descriptor)
    }

    private static func exchange(
        line: String, on socket: Int32, path: String, deadline: Deadline, passing descriptor: Int32?
    ) throws(ConnectionFailure) -> String {
        do {
            try send(Array((line + "\n").utf8), on: socket, path: path, deadline: deadline, passing: descriptor)
        } catch let failure where failure.peerClosed {
            // The daemon refuses a peer (`err denied`, too many clients) with one reply
            // line and closes at once, so the send can fail with EPIPE while that reply
            // waits in our receive queue: it, not the failed send, is the answer.
            if let reply = try? receiveLine(from: socket, path: path, deadline: deadline) { return reply }
            throw failure
        }
        return try receiveLine(from: socket, path: path, deadline: deadline)
    }

    static func timedOut(
        _ doing: String, _ path: String, _ deadline: Deadline, because reason: String = ""
    ) -> ConnectionFailure {
        let limit = deadline.seconds.map { PlainDecimal.format($0) } ?? "?"
        let why = reason.isEmpty ? "" : " (\(reason))"
        return ConnectionFailure(message: "timed out after \(limit) s \(doing) \(path)\(why)")
    }

    static func failure(_ what: String, _ path: String, _ code: Int32) -> ConnectionFailure {
        ConnectionFailure(message: "\(what) \(path): \(String(cString: strerror(code)))")
    }

    static func connect(to path: String, deadline: Deadline) throws(ConnectionFailure) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity, !pathBytes.contains(0) else {
            throw ConnectionFailure(message: "socket path is too long (at most \(capacity - 1) bytes): \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
            raw[pathBytes.count] = 0
        }
        let kind = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let fd = Glibc.socket(AF_UNIX, kind, 0)
        guard fd >= 0 else { throw failure("cannot create a socket for", path, errno) }

        let length = socklen_t(MemoryLayout<sockaddr_un>.size)
        while true {
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
            }
            if result == 0 { return fd }
            let code = errno
            switch code {
            case EINTR:
                continue
            case EINPROGRESS:
                // Wait for the connection, then read its outcome.
                guard try wait(fd, for: Int16(POLLOUT), path: path, deadline: deadline) else {
                    close(fd)
                    throw timedOut("connecting to", path, deadline)
                }
                var error: Int32 = 0
                var size = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size)
                if error == 0 { return fd }
                close(fd)
                throw connectFailure(path, error)
            case EAGAIN:
                // The daemon's listen backlog is full: Unix sockets do not queue a
                // non-blocking connect, so retry until the deadline.
                guard !deadline.hasPassed else {
                    close(fd)
                    throw timedOut("connecting to", path, deadline, because: "its listen backlog is full")
                }
                let pause = deadline.pollTimeout < 0 ? 10 : min(10, deadline.pollTimeout)
                poll(nil, 0, pause)
            default:
                close(fd)
                throw connectFailure(path, code)
            }
        }
    }

    private static func connectFailure(_ path: String, _ code: Int32) -> ConnectionFailure {
        switch code {
        case ENOENT, ENOTDIR:
            return ConnectionFailure(message: "no daemon socket at \(path) (is gauged running?)")
        case ECONNREFUSED:
            return ConnectionFailure(message: "no daemon listening on \(path) (connection refused)")
        case EACCES, EPERM:
            return ConnectionFailure(message: "not allowed to connect to \(path) (permission denied)")
        default:
            return failure("cannot connect to", path, code)
        }
    }

    /// Polls `fd` for `events` until the deadline; false when it passed first.
    static func wait(_ fd: Int32, for events: Int16, path: String, deadline: Deadline) throws(ConnectionFailure) -> Bool {
        while true {
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&entry, 1, deadline.pollTimeout)
            if ready > 0 { return true }
            if ready == 0 {
                if deadline.hasPassed { return false }
                continue  // woke a little early (rounding)
            }
            if errno != EINTR { throw failure("cannot wait for", path, errno) }
        }
    }

    /// Sends all of `bytes`; `passing` goes with the first of them.
    static func send(
        _ bytes: [UInt8], on fd: Int32, path: String, deadline: Deadline, passing descriptor: Int32? = nil
    ) throws(ConnectionFailure) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { raw in
                if let descriptor, offset == 0 { return CGL_send_with_descriptor(fd, raw.baseAddress, raw.count, descriptor) }
                return Glibc.send(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL))
            }
            if sent >= 0 {
                offset += sent
                continue
            }
            let code = errno
            switch code {
            case EINTR:
                continue
            case EAGAIN:
                guard try wait(fd, for: Int16(POLLOUT), path: path, deadline: deadline) else {
                    throw timedOut("sending to", path, deadline)
                }
            case EPIPE, ECONNRESET:
                throw ConnectionFailure(message: "\(path) closed the connection before the request was sent", peerClosed: true)
            default:
                throw failure("cannot send to", path, code)
            }
        }
    }

    /// Reads until the daemon closes the connection (what follows the reply is ignored).
    private static func waitForClose(_ fd: Int32, path: String, deadline: Deadline) throws(ConnectionFailure) {
        var chunk = [UInt8](repeating: 0, count: 512)
        while true {
            guard try wait(fd, for: Int16(POLLIN), path: path, deadline: deadline) else {
                throw timedOut("waiting for the daemon to exit on", path, deadline)
            }
            let count = chunk.withUnsafeMutableBytes { raw in recv(fd, raw.baseAddress, raw.count, 0) }
            if count == 0 { return }
            if count < 0 {
                let code = errno
                if code == EINTR || code == EAGAIN { continue }
                if code == ECONNRESET { return }
                throw failure("cannot read from", path, code)
            }
        }
    }

    private static func receiveLine(from fd: Int32, path: String, deadline: Deadline) throws(ConnectionFailure) -> String {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let newline = received.firstIndex(of: UInt8(ascii: "\n")) {
                return String(decoding: received[..<newline], as: UTF8.self)
            }
            guard received.count <= maxReplyBytes else {
                throw ConnectionFailure(message: "reply from \(path) is longer than \(maxReplyBytes) bytes")
            }
            guard try wait(fd, for: Int16(POLLIN), path: path, deadline: deadline) else {
                throw timedOut("waiting for a reply from", path, deadline)
            }
            let count = chunk.withUnsafeMutableBytes { raw in
                recv(fd, raw.baseAddress, raw.count, 0)
            }
            if count > 0 {
                received += chunk[..<count]
            } else if count == 0 {
                throw ConnectionFailure(message: "\(path) closed the connection without a reply")
            } else {
                let code = errno
                if code == EINTR || code == EAGAIN { continue }
                if code == ECONNRESET {
                    throw ConnectionFailure(message: "\(path) closed the connection without a reply")
                }
                throw failure("cannot read from", path, code)
            }
        }
    }
}
