import CGaugeLinux
import GaugeDaemon
import GaugeProtocol
import GaugeSystem

/// The native socket end to end: the daemon's `Connection` (reads per turn, fair shares,
/// deferred replies, output buffering, end of stream) with a handler that parses every
/// line as the daemon does, fed by a real client over a Unix socket.
extension FuzzTarget {
    static let connection = FuzzTarget(
        name: "connection",
        summary: "bytes sent in pieces to a real SocketServer, `wait` answered a turn later, EINTR/EAGAIN "
            + "injected into the server's calls: exactly one reply per line, in order, as the reference "
            + "framing and Request.parse say, a last unterminated line answered, the connection closed after",
        maxLength: 20_000, dictionary: NativeSamples.dictionary + ["wait\n", "\n"],
        seeds: { [Array((NativeSamples.lines.joined(separator: "\n") + "\nwait\nping\nwait").utf8)] }
    ) { input, probe throws(FuzzFailure) in
        let fixture = try ConnectionFixture.shared()
        let expected = ReferenceLines.items(input, maxLineBytes: Limits.maxLineBytes).map { outcome in
            switch outcome {
            case .error(let code): return code.rawValue
            case .line(let line):
                switch Request.parse(line) {
                case .success: return "ok"
                case .failure(let error): return error.code.rawValue
                }
            }
        }
        probe.hit("replies", bucket(expected.count))
        var random = SplitMix64(seed: MutationFuzzer.hash(String(decoding: input.suffix(32), as: UTF8.self)))
        let transient = [EINTR, EAGAIN]
        let plan = SyscallFaults([
            "send": (0..<random.below(4)).map { _ in transient[Int(random.below(2))] },
            "accept": (0..<random.below(3)).map { _ in transient[Int(random.below(2))] },
            "epoll_wait": (0..<random.below(3)).map { _ in EINTR },
        ])
        let exchanged = SyscallFaults.$current.withValue(plan) {
            Result { () throws(FuzzFailure) in try fixture.exchange(input) }
        }
        let received = try exchanged.get()
        let lines = received.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast()
        try check(received.last == UInt8(ascii: "\n") || received.isEmpty, "the replies end without a newline")
        let codes = lines.map { line -> String in
            let text = String(decoding: line, as: UTF8.self)
            if text == "ok" { return "ok" }
            guard case .err(let error)? = Reply.parse(text) else { return "?" + text }
            return error.code.rawValue
        }
        try check(codes == expected, "replies \(codes.prefix(20)) (\(codes.count)), expected \(expected.prefix(20)) (\(expected.count))")
        try fixture.expectNoClients()
    }
}

/// One server for the whole run, on an abstract socket; each input gets a new client.
final class ConnectionFixture {
    nonisolated(unsafe) private static var instance: ConnectionFixture?

    let loop: EventLoop
    let server: SocketServer
    let address: UnixSocketAddress

    static func shared() throws(FuzzFailure) -> ConnectionFixture {
        if let instance { return instance }
        do {
            let made = try ConnectionFixture()
            instance = made
            return made
        } catch {
            throw FuzzFailure("cannot set up the server: \(error)")
        }
    }

    private init() throws {
        SignalSource.ignoreBrokenPipe()
        loop = try EventLoop()
        let name = "@gauge-fuzz-\(getpid())-connection"
        address = try UnixSocketAddress(name)
        let listener = try ListeningSocket.bind(path: name)
        var configuration = SocketServerConfiguration()
        configuration.idleTimeout = nil
        let loop = loop
        server = SocketServer(loop: loop, listener: listener, configuration: configuration, log: .silent) { connection, item in
            switch item {
            case .error(let error):
                return .reply(Reply.err(error).encoded)
            case .line(let line):
                switch Request.parse(line) {
                case .failure(let error):
                    return .reply(Reply.err(error).encoded)
                case .success(.wait):
                    loop.execute { connection.complete(reply: "ok") }
                    return .deferred
                case .success:
                    return .reply(Reply.ok.encoded)
                }
            }
        }
        try server.start()
    }

    /// Sends `input` in pieces from a new client, ends its writing side, and returns
    /// everything the server sent until it closed the connection. The client makes its
    /// calls itself, not through `Syscall`: the faults planned for the server's calls
    /// (`send` among them) must reach the server alone.
    func exchange(_ input: [UInt8]) throws(FuzzFailure) -> [UInt8] {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try check(fd >= 0, "socket: errno \(errno)")
        defer { close(fd) }
        let connected = address.withSockaddr { connect(fd, $0, $1) }
        try check(connected == 0, "connect: errno \(errno)")
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var sawEnd = false
        var turns = 0
        func turn() throws(FuzzFailure) {
            turns += 1
            try check(turns < 100_000, "no end after 100000 loop turns (\(received.count) bytes received)")
            do {
                _ = try loop.runOnce(timeoutMilliseconds: 0)
            } catch {
                throw FuzzFailure("the loop failed: \(error)")
            }
            while !sawEnd {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    received += buffer[..<count]
                } else if count == 0 || (errno != EAGAIN && errno != EINTR) {
                    sawEnd = true
                } else {
                    break
                }
            }
        }
        // The loop turns between pieces (at most 300 of them, so that a long input stays
        // quick) and whenever the socket is full.
        for chunk in FuzzBytes.chunks(input, maxPieces: 300) {
            var offset = chunk.startIndex
            while offset < chunk.endIndex {
                let sent = chunk[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent > 0 {
                    offset += sent
                } else {
                    try check(errno == EAGAIN || errno == EINTR, "send: errno \(errno)")
                    try turn()
                }
            }
            try turn()
        }
        shutdown(fd, Int32(SHUT_WR))
        while !sawEnd { try turn() }
        return received
    }

    /// The server let go of the connection whose end it saw.
    func expectNoClients() throws(FuzzFailure) {
        var turns = 0
        while server.clientCount > 0, turns < 1000 {
            _ = try? loop.runOnce(timeoutMilliseconds: 0)
            turns += 1
        }
        try check(server.clientCount == 0, "\(server.clientCount) connections left open")
    }
}
