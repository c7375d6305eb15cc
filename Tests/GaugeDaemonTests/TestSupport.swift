import Foundation
import GaugeDaemon
import GaugeProtocol
import Glibc
import Testing
import GaugeSystem
import GaugeTestSupport

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

/// This boot's identifier, the first 8 hex digits of the kernel's boot ID: what a failure
/// screen's QR code and `status` carry.
let thisBoot: String = {
    let text = (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)) ?? ""
    let id = text.prefix { $0 != "-" }
    precondition(id.count == 8 && id.allSatisfy(\.isHexDigit), "no boot ID in /proc: \(text)")
    return String(id)
}()

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

/// A pty: the daemon reads the slave, the test types into the master.
final class TypingPTY {
    let master: Int32
    let slavePath: String

    init() throws {
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        // TIOCSPTLCK and TIOCGPTN: unlock the slave and learn its number.
        let ready = master >= 0 && ioctl(master, UInt(0x4004_5431), &unlock) == 0 && ioctl(master, UInt(0x8004_5430), &number) == 0
        slavePath = "/dev/pts/\(number)"
        try #require(ready, "cannot open a pty")
    }

    deinit { close(master) }

    /// The slave's settings, read through the master.
    var settings: termios {
        var settings = termios()
        _ = tcgetattr(master, &settings)
        return settings
    }

    /// The tty is in canonical mode with echo (as the daemon found it).
    var isCooked: Bool {
        var settings = termios()
        guard tcgetattr(master, &settings) == 0 else { return false }
        return settings.c_lflag & tcflag_t(ICANON) != 0 && settings.c_lflag & tcflag_t(ECHO) != 0
    }

    /// Canonical mode with echo, as systemd's reset of the console leaves a VT.
    func cook() {
        var settings = termios()
        #expect(tcgetattr(master, &settings) == 0)
        settings.c_lflag |= tcflag_t(ICANON | ECHO)
        #expect(tcsetattr(master, TCSANOW, &settings) == 0)
    }

    func type(_ keys: String) {
        let bytes = Array(keys.utf8)
        #expect(bytes.withUnsafeBytes { write(master, $0.baseAddress, $0.count) } == bytes.count)
    }
}

extension TypingPTY {
    /// What the programs wrote to the terminal, read until `text` shows (30 s at most).
    func read(until text: String) -> String {
        var seen = ""
        let deadline = monotonicNow() + 30
        var buffer = [UInt8](repeating: 0, count: 512)
        while !seen.contains(text), monotonicNow() < deadline {
            var entry = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) == 1 else { continue }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(master, $0.baseAddress, $0.count) }
            if count > 0 { seen += String(decoding: buffer[..<count], as: UTF8.self) }
        }
        return seen
    }

    var echoes: Bool {
        var settings = termios()
        guard tcgetattr(master, &settings) == 0 else { return true }
        return settings.c_lflag & tcflag_t(ECHO) != 0
    }
}

/// A program the test starts (standard input a tty, or /dev/null), and its output.
final class ChildProgram {
    let process = Process()
    private let out = Pipe()

    init(_ path: String, _ arguments: [String], input tty: String? = nil) throws {
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardInput = tty.map { FileHandle(forUpdatingAtPath: $0) } ?? FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// Its exit status and standard output once it exits (nil status: not within 30 s).
    func finish() -> (status: Int32?, stdout: String) {
        let deadline = monotonicNow() + 30
        while process.isRunning, monotonicNow() < deadline { usleep(2_000) }
        guard !process.isRunning else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return (nil, "")
        }
        // Until the end of the output, within the deadline: a grandchild left behind may
        // hold the pipe open.
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let fd = out.fileHandleForReading.fileDescriptor
        while monotonicNow() < deadline + 5 {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) == 1 else { continue }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            output += buffer[..<count]
        }
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
