import Foundation
import GaugeDaemon
import GaugeProtocol
import Glibc
import Testing
import GaugeSystem

/// A scratch directory under /tmp with a short name (socket paths must fit 108 bytes).
final class TemporaryDirectory {
    let path: String

    init() {
        var template = Array("/tmp/gauge-test-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    func appending(_ name: String) -> String { path + "/" + name }
}

/// Runs the loop until `condition` holds or `seconds` pass; false on timeout.
@discardableResult
func pump(_ loop: EventLoop, seconds: Double = 30, until condition: () -> Bool) throws -> Bool {
    let deadline = MonotonicClock.now() + seconds
    while !condition() {
        if MonotonicClock.now() > deadline { return false }
        try loop.runOnce(timeoutMilliseconds: 5)
    }
    return true
}

/// Runs the loop for `seconds` whatever happens.
func pump(_ loop: EventLoop, for seconds: Double) throws {
    let deadline = MonotonicClock.now() + seconds
    while MonotonicClock.now() < deadline { try loop.runOnce(timeoutMilliseconds: 5) }
}

let sockStream = Int32(SOCK_STREAM.rawValue)
let sockDgram = Int32(SOCK_DGRAM.rawValue)
let sockNonBlock = Int32(SOCK_NONBLOCK.rawValue)

/// A non-blocking client socket driven from the test's thread, between loop turns.
final class TestClient {
    let fd: Int32
    private(set) var received: [UInt8] = []
    private var sawEnd = false

    /// The daemon closed the connection (EOF or reset), after what it sent was read.
    var closedByPeer: Bool {
        poll()
        return sawEnd
    }

    init(path: String) throws {
        fd = try Syscall.socket(domain: AF_UNIX, type: sockStream | sockNonBlock)
        _ = try Syscall.connect(fd, to: UnixSocketAddress(path))
    }

    private var isClosed = false

    deinit { close() }

    /// Closes once: tests run in parallel, and a second close could hit a descriptor
    /// another test opened meanwhile.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        Syscall.close(fd)
    }

    /// Sends what the socket takes now; returns the count.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Int {
        let sent = bytes.withUnsafeBytes { buffer in
            Result { () throws(SystemError) in try Syscall.send(fd, buffer) }
        }
        return (try? sent.get() ?? 0) ?? 0
    }

    @discardableResult
    func send(_ text: String) -> Int { send(Array(text.utf8)) }

    /// Sends all of `bytes`, running the loop while the socket is full.
    func sendAll(_ bytes: [UInt8], loop: EventLoop) throws {
        var offset = 0
        let deadline = MonotonicClock.now() + 30
        while offset < bytes.count {
            offset += send(Array(bytes[offset...].prefix(256 * 1024)))
            try loop.runOnce(timeoutMilliseconds: 1)
            poll()
            try #require(MonotonicClock.now() < deadline, "sending timed out")
        }
    }

    /// Reads whatever has arrived.
    func poll() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !sawEnd {
            let result = buffer.withUnsafeMutableBytes { bytes in
                Result { () throws(SystemError) in try Syscall.read(fd, into: bytes) }
            }
            switch result {
            case .success(nil): return
            case .success(0?), .failure: sawEnd = true
            case .success(let count?): received += buffer[..<count]
            }
        }
    }

    /// Complete lines received so far.
    var lines: [String] {
        poll()
        var lines = String(decoding: received, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()  // the unfinished rest (empty after a final newline)
        return lines.map(String.init)
    }

    func shutdownWriting() { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }
}

/// A server on a temporary socket with a handler the test chooses.
final class ServerFixture {
    let directory = TemporaryDirectory()
    let path: String
    let loop: EventLoop
    let server: SocketServer

    /// Replies `ok <line>` to a line and `err <code> <message>` to a framing error.
    static func echo(_ connection: ClientConnection, _ item: LineFramer.Item) -> ReplyAction {
        switch item {
        case .line(let line): .reply("ok \(line)")
        case .error(let error): .reply("err \(error.code.rawValue) \(error.message)")
        }
    }

    init(
        configuration: SocketServerConfiguration = .init(),
        handler: @escaping SocketServer.RequestHandler = ServerFixture.echo
    ) throws {
        SignalSource.ignoreBrokenPipe()
        path = directory.appending("gauged.sock")
        loop = try EventLoop()
        let listener = try ListeningSocket.bind(path: path)
        server = SocketServer(loop: loop, listener: listener, configuration: configuration, log: .silent, handler: handler)
        try server.start()
    }

    deinit { server.close() }

    func client() throws -> TestClient { try TestClient(path: path) }
}
