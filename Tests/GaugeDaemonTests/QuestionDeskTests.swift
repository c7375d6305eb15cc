import Glibc
import GaugeProtocol
import GaugeSystem
import GaugeTestSupport
import Testing

@testable import GaugeDaemon

/// The desk with Plymouth's socket in this process, on a loop the test turns by hand.
@Suite struct QuestionDeskTests {
    /// The kernel may report the keyboard in a loop turn that does not yet report
    /// Plymouth's listening socket, although the asker connected and asked before the
    /// keys were typed. Such a turn is made here by handling every descriptor but the
    /// listening socket: the keys are still the answer of the question that came first.
    @Test func keysReadInATurnThatMissedTheirAskerAreItsAnswer() throws {
        let pty = try TypingPTY()
        let directory = TemporaryDirectory()
        let loop = try EventLoop()
        let log = Log(sink: { _ in })
        let compat = CompatInputs(
            loop: loop, log: log, throttled: ThrottledLog(log: log), policy: PeerPolicy(), idleTimeout: nil
        ) { _, _ in true }
        let desk = QuestionDesk(ttyPath: pty.slavePath, inputDirectory: nil, loop: loop, log: log)
        compat.questions = desk
        defer { compat.close() }
        desk.place = .splash
        let path = directory.appending("plymouth.sock")
        let listener = try ListeningSocket.bind(path: path)
        compat.open(psplashFIFO: nil, plymouth: listener, pidFile: nil)

        let client = try connectedSocket(path)
        defer { close(client) }
        let request = plymouthRequest("*", "Disk password")
        #expect(request.withUnsafeBytes { write(client, $0.baseAddress, $0.count) } == request.count)
        pty.type("secret\r")
        // Until the keys are there to read (a look through a descriptor of its own).
        let look = open(pty.slavePath, O_RDONLY | O_NOCTTY | O_NONBLOCK)
        try #require(look >= 0)
        var keys = pollfd(fd: look, events: Int16(POLLIN), revents: 0)
        _ = poll(&keys, 1, 5_000)
        close(look)
        #expect(keys.revents & Int16(POLLIN) != 0, "the keys reached the tty")

        try loop.handleReady(where: { $0 != listener.fd }, passes: 1)
        let deadline = monotonicNow() + 5
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while reply.count < 11, monotonicNow() < deadline {
            try loop.runOnce(timeoutMilliseconds: 50)
            var entry = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 0) == 1 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            reply += buffer[..<count]
        }
        #expect(reply == PlymouthReply.answer(Array("secret".utf8)))
    }
}

/// A stream socket connected to the Unix socket at `path`.
private func connectedSocket(_ path: String) throws -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    try #require(fd >= 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        Array(path.utf8).withUnsafeBytes { raw.copyMemory(from: $0) }
    }
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard connected == 0 else {
        let error = Glibc.errno
        close(fd)
        throw SystemError("connect \(path)", errno: error)
    }
    return fd
}
