import CGaugeLinux
import GaugeProtocol
import GaugeSystem

/// Why a call got no reply; exit status 3.
struct ConnectionFailure: Error {
    var message: String
    /// The daemon closed the connection while the request was being sent.
    var peerClosed = false
    /// Set when nothing listens on the socket (yet), as a daemon still starting looks:
    /// ENOENT (no socket file) or ECONNREFUSED.
    var noListenerErrno: Int32? = nil
    /// The socket's permissions refused this user (exit status 4, not "no daemon").
    var denied = false
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

    static func now() -> UInt64 { MonotonicClock.nanoseconds() }

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
    /// `waitingForDaemon`: see `connect`.
    static func exchange(
        line: String, socketPath path: String, deadline: Deadline, waitingForDaemon: Bool = false,
        announcingWait: Bool = false, awaitingClose: Bool = false, passing descriptor: Int32? = nil
    ) throws(ConnectionFailure) -> String {
        let socket = try connect(
            to: path, deadline: deadline, waitingForDaemon: waitingForDaemon, announcingWait: announcingWait)
        defer { Syscall.close(socket) }
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
        var received: [UInt8] = []
        do {
            try send(Array((line + "\n").utf8), on: socket, path: path, deadline: deadline, passing: descriptor)
        } catch let failure where failure.peerClosed {
            // The daemon refuses a peer (`err denied`, too many clients) with one reply
            // line and closes at once, so the send can fail with EPIPE while that reply
            // waits in our receive queue: it, not the failed send, is the answer.
            if let reply = try? receiveLine(from: socket, buffered: &received, path: path, deadline: deadline) { return reply }
            throw failure
        }
        return try receiveLine(from: socket, buffered: &received, path: path, deadline: deadline)
    }

    static func timedOut(
        _ doing: String, _ path: String, _ deadline: Deadline, because reason: String = ""
    ) -> ConnectionFailure {
        let limit = deadline.seconds.map { PlainDecimal.format($0) } ?? "?"
        let why = reason.isEmpty ? "" : " (\(reason))"
        return ConnectionFailure(message: "timed out after \(limit) s \(doing) \(path)\(why)")
    }

    static func failure(_ what: String, _ path: String, _ code: Int32) -> ConnectionFailure {
        ConnectionFailure(message: "\(what) \(path): \(errnoText(code))")
    }

    /// Connects to `path` (`@name`: the abstract namespace, as the daemon's `--socket`
    /// takes it). `waitingForDaemon`: a socket file that does not exist yet (ENOENT) or
    /// that nobody listens on yet (ECONNREFUSED) is what a daemon still starting looks
    /// like, so both are tried again until the deadline; without it they fail at once.
    /// `announcingWait`: a wait past a moment says so on stderr (not for `wait-ready`,
    /// whose job the wait is).
    static func connect(
        to path: String, deadline: Deadline, waitingForDaemon: Bool = false, announcingWait: Bool = false
    ) throws(ConnectionFailure) -> Int32 {
        var pause: Int32 = 2
        let started = Deadline.now()
        var said = false
        var arrival: Int32? = nil
        var watched = false
        defer { if let arrival { Syscall.close(arrival) } }
        while true {
            do throws(ConnectionFailure) {
                return try connectOnce(to: path, deadline: deadline)
            } catch let failure where waitingForDaemon && failure.noListenerErrno != nil {
                if !watched, failure.noListenerErrno == ENOENT {
                    // Watched from here, then tried once more: a socket made in between is not missed.
                    watched = true
                    arrival = SocketArrival.watch(path)
                    if arrival != nil { continue }
                }
                guard !deadline.hasPassed else {
                    throw connectFailure(path, failure.noListenerErrno!, waited: deadline.seconds)
                }
                // A daemon spawned just before listens within milliseconds; past a short
                // while, say what the wait is for rather than stay silent for seconds.
                if announcingWait, !said, Deadline.now() &- started >= noticeAfterNanoseconds {
                    said = true
                    let limit = deadline.seconds.map { "up to \(PlainDecimal.format($0)) s (--timeout)" } ?? "with no limit"
                    printError("gaugectl: no daemon on \(path) yet; waiting \(limit) for one to start")
                }
                // No socket file, its folder watched: until something arrives there (or the
                // deadline, or the moment to say what the wait is for); then, or without a
                // watch, quick at first (bind makes the file just before the daemon
                // listens), then every 50 ms.
                let left = deadline.pollTimeout
                if let watch = arrival {
                    let missing = failure.noListenerErrno == ENOENT
                    let notice: Int32 = announcingWait && !said ? 250 : -1
                    if missing, !SocketArrival.wait(watch, milliseconds: left < 0 || notice >= 0 && notice < left ? notice : left) {
                        continue
                    }
                    Syscall.close(watch)
                    arrival = nil
                    if missing {
                        pause = 1
                        continue
                    }
                }
                _ = try? Syscall.poll(-1, events: 0, timeoutMilliseconds: left < 0 ? pause : min(pause, left))
                pause = min(50, pause * 2)
            }
        }
    }

    private static func connectOnce(to path: String, deadline: Deadline) throws(ConnectionFailure) -> Int32 {
        let address: UnixSocketAddress
        do throws(SystemError) {
            address = try UnixSocketAddress(path)
        } catch {
            throw ConnectionFailure(message: error.errno == ENAMETOOLONG
                ? "socket path is too long (at most 107 bytes): \(path)" : "not a socket path: \(path)")
        }
        let fd: Int32
        do throws(SystemError) {
            fd = try Syscall.socket(domain: CGL_AF_UNIX, type: CGL_SOCK_STREAM | CGL_SOCK_NONBLOCK)
        } catch {
            throw failure("cannot create a socket for", path, error.errno)
        }
        while true {
            do throws(SystemError) {
                if try Syscall.connect(fd, to: address) { return fd }
            } catch {
                Syscall.close(fd)
                throw connectFailure(path, error.errno)
            }
            // EAGAIN: the daemon's listen backlog is full. Unix sockets do not queue a
            // non-blocking connect, so retry until the deadline.
            guard !deadline.hasPassed else {
                Syscall.close(fd)
                throw timedOut("connecting to", path, deadline, because: "its listen backlog is full")
            }
            let pause = deadline.pollTimeout < 0 ? 10 : min(10, deadline.pollTimeout)
            _ = try? Syscall.poll(-1, events: 0, timeoutMilliseconds: pause)
        }
    }

    /// How long a wait for a daemon stays silent.
    static let noticeAfterNanoseconds: UInt64 = 250_000_000

    /// Why connecting failed; `waited`: the seconds spent waiting for a daemon to start.
    private static func connectFailure(_ path: String, _ code: Int32, waited: Double? = nil) -> ConnectionFailure {
        let after = waited.map { " after waiting \(PlainDecimal.format($0)) s" } ?? ""
        // Something that is no socket at the path waits for nothing (no daemon makes it one).
        if code == ECONNREFUSED || code == ENOTSOCK, !path.hasPrefix("@"),
            let status = try? Syscall.lstat(path), status.st_mode & UInt32(S_IFMT) != UInt32(S_IFSOCK)
        {
            let kind = status.st_mode & UInt32(S_IFMT) == UInt32(S_IFDIR) ? "a directory" : "a file"
            return ConnectionFailure(message: "\(path) is not a socket (\(kind)); give gauged's socket with --socket or GAUGE_SOCKET")
        }
        switch code {
        case ENOENT:
            return ConnectionFailure(
                message: "no daemon socket at \(path)\(after) (is gauged running?)", noListenerErrno: code)
        case ENOTDIR:
            return ConnectionFailure(message: "no daemon socket at \(path) (a part of the path is not a directory)")
        case ECONNREFUSED:
            return ConnectionFailure(
                message: "no daemon listening on \(path)\(after) (connection refused)", noListenerErrno: code)
        case EACCES, EPERM:
            var who = ""
            if !path.hasPrefix("@"), let status = try? Syscall.lstat(path), let group = getgrgid(status.st_gid) {
                let name = String(cString: group.pointee.gr_name)
                who = name == "root" ? "; only root may use it" : "; only root and the members of group \(name) may use it (gauged --group \(name))"
            }
            return ConnectionFailure(message: "not allowed to connect to \(path) (permission denied)\(who)", denied: true)
        default:
            return failure("cannot connect to", path, code)
        }
    }

    /// Polls `fd` for `events` until the deadline; false when it passed first.
    static func wait(_ fd: Int32, for events: Int16, path: String, deadline: Deadline) throws(ConnectionFailure) -> Bool {
        while true {
            let ready: Int16
            do throws(SystemError) {
                ready = try Syscall.poll(fd, events: events, timeoutMilliseconds: deadline.pollTimeout)
            } catch {
                throw failure("cannot wait for", path, error.errno)
            }
            if ready != 0 { return true }
            if deadline.hasPassed { return false }
            // Woke a little early (rounding) or by a signal.
        }
    }

    /// Sends all of `bytes`; `passing` goes with the first of them.
    static func send(
        _ bytes: [UInt8], on fd: Int32, path: String, deadline: Deadline, passing descriptor: Int32? = nil
    ) throws(ConnectionFailure) {
        var offset = 0
        while offset < bytes.count {
            let result = bytes[offset...].withUnsafeBytes { raw in
                Result { () throws(SystemError) in
                    if let descriptor, offset == 0 { return try Syscall.send(fd, raw, passing: descriptor) }
                    return try Syscall.send(fd, raw)
                }
            }
            switch result {
            case .success(let sent?):
                offset += sent
            case .success(nil):
                guard try wait(fd, for: Int16(POLLOUT), path: path, deadline: deadline) else {
                    throw timedOut("sending to", path, deadline)
                }
            case .failure(let error) where error.errno == EPIPE || error.errno == ECONNRESET:
                throw ConnectionFailure(message: "\(path) closed the connection before the request was sent", peerClosed: true)
            case .failure(let error):
                throw failure("cannot send to", path, error.errno)
            }
        }
    }

    /// Reads what is there (waiting for it until the deadline) onto `received`; false at
    /// the end of the stream.
    static func receive(
        from fd: Int32, onto received: inout [UInt8], path: String, deadline: Deadline
    ) throws(ConnectionFailure) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            guard try wait(fd, for: Int16(POLLIN), path: path, deadline: deadline) else {
                throw timedOut("waiting for a reply from", path, deadline)
            }
            let result = chunk.withUnsafeMutableBytes { raw in
                Result { () throws(SystemError) in try Syscall.read(fd, into: raw) }
            }
            switch result {
            case .success(nil):
                continue
            case .success(0?):
                return false
            case .success(let count?):
                received += chunk[..<count]
                return true
            case .failure(let error) where error.errno == ECONNRESET:
                return false
            case .failure(let error):
                throw failure("cannot read from", path, error.errno)
            }
        }
    }

    /// Reads until the daemon closes the connection (what follows the reply is ignored).
    static func waitForClose(_ fd: Int32, path: String, deadline: Deadline) throws(ConnectionFailure) {
        var ignored: [UInt8] = []
        while try receive(from: fd, onto: &ignored, path: path, deadline: deadline) {
            ignored.removeAll(keepingCapacity: true)
        }
    }

    /// The next reply line: taken from the front of `received` (what an earlier read left
    /// there), reading more until it holds a whole line.
    static func receiveLine(
        from fd: Int32, buffered received: inout [UInt8], path: String, deadline: Deadline
    ) throws(ConnectionFailure) -> String {
        while true {
            if let newline = received.firstIndex(of: UInt8(ascii: "\n")) {
                defer { received.removeFirst(newline + 1) }
                return String(decoding: received[..<newline], as: UTF8.self)
            }
            guard received.count <= maxReplyBytes else {
                throw ConnectionFailure(message: "reply from \(path) is longer than \(maxReplyBytes) bytes")
            }
            guard try receive(from: fd, onto: &received, path: path, deadline: deadline) else {
                throw ConnectionFailure(message: "\(path) closed the connection without a reply")
            }
        }
    }
}
