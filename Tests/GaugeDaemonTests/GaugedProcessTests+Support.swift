import Foundation
import GaugeDisplay
import GaugeProtocol
import GaugeRender
import Glibc
import Testing
import GaugeTestSupport

// Support for the tests that run the real `gauged` (and `gaugectl`) binaries: finding
// them, spawning gauged on a temporary socket with the memory display, talking to it
// over raw sockets, and always killing it at the end.

struct SpawnError: Error, CustomStringConvertible {
    var description: String
}

/// Starts `path` with `arguments` through posix_spawn: stdin from /dev/null, stdout and
/// stderr appended to `outputPath`, `passing` duplicated onto descriptor 3, and every
/// other descriptor of the test process closed in the child (tests run in parallel and
/// must not leak their sockets into each other's daemons).
func spawn(
    _ path: String, _ arguments: [String], environment: [String: String], outputPath: String,
    passing passed: Int32? = nil
) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    var firstClosed: Int32 = 3
    if let passed {
        precondition(passed != 3, "dup2 onto itself would keep close-on-exec")
        posix_spawn_file_actions_adddup2(&actions, passed, 3)
        firstClosed = 4
    }
    try #require(addCloseFrom(&actions, firstClosed) == 0)

    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    // A signal mask or ignored signals of a test thread must not reach the daemon.
    var noSignals = sigset_t()
    sigemptyset(&noSignals)
    posix_spawnattr_setsigmask(&attributes, &noSignals)
    var defaults = sigset_t()
    sigfillset(&defaults)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        for pointer in argv { free(pointer) }
        for pointer in envp { free(pointer) }
    }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
    guard result == 0 else { throw SpawnError(description: "posix_spawn \(path): \(String(cString: strerror(result)))") }
    return pid
}

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), which the Glibc module
/// does not import (it is behind `__USE_GNU`).
private let addCloseFrom: @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32 = {
    let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np")
    precondition(symbol != nil, "glibc without posix_spawn_file_actions_addclosefrom_np")
    return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
}()

/// Waits for `pid` to exit for at most `seconds`; its wait status, or nil on timeout.
func reap(_ pid: pid_t, within seconds: Double) -> Int32? {
    let deadline = monotonicNow() + seconds
    while true {
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid { return status }
        if result < 0 && errno != EINTR { return nil }
        if monotonicNow() > deadline { return nil }
        usleep(2_000)
    }
}

/// The exit code of a wait status, or nil when the process was killed by a signal.
func exitCode(_ status: Int32) -> Int32? {
    (status & 0x7f) == 0 ? (status >> 8) & 0xff : nil
}

// MARK: - A blocking line client

/// A connection to the daemon with blocking I/O bounded by timeouts, so a test can fail
/// but never hang.
final class LineConnection: @unchecked Sendable {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var isClosed = false

    /// Connects to `path`; throws the errno when the connection is refused or fails.
    init(path: String, timeout: Double = 30) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SpawnError(description: "socket: errno \(errno)") }
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        precondition(bytes.count < MemoryLayout.size(ofValue: address.sun_path))
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if result != 0 {
            let code = errno
            Glibc.close(fd)
            isClosed = true
            throw ConnectError(errno: code)
        }
    }

    struct ConnectError: Error, CustomStringConvertible {
        var errno: Int32
        var description: String { "connect: \(String(cString: strerror(errno)))" }
    }

    deinit { close() }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        Glibc.close(fd)
    }

    /// Sends every byte (MSG_NOSIGNAL: a closed peer is an error, not a signal).
    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EINTR { continue }
                throw SpawnError(description: "send: \(String(cString: strerror(errno)))")
            }
            offset += sent
        }
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// The next line without its `\n`; nil at EOF (or a reset) before a full line.
    func readLine() throws -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeFirst(newline + 1)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer += chunk[..<count]
            } else if count == 0 || errno == ECONNRESET {
                return nil
            } else if errno == EINTR {
                continue
            } else if errno == EAGAIN {
                throw SpawnError(description: "timed out waiting for a reply")
            } else {
                throw SpawnError(description: "recv: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Sends one request line and returns its reply line.
    func request(_ line: String) throws -> String {
        try send(line + "\n")
        return try #require(try readLine(), "connection closed before the reply to '\(line.prefix(60))'")
    }

    /// `status`, parsed.
    func status() throws -> Status {
        let reply = try request("status")
        guard case .ok(let payload?) = Reply.parse(reply) else {
            throw SpawnError(description: "status replied '\(reply)'")
        }
        return try #require(Status.parse(json: payload), "unreadable status JSON: \(payload)")
    }
}

// MARK: - The daemon under test

/// A real `gauged` on a socket in a temporary directory, memory display by default.
/// Killed (SIGKILL) and reaped on deinit if the test did not stop it; its log stays in
/// `logPath` until then, and is attached to the failure when it does not come up.
final class GaugedProcess {
    let directory = TemporaryDirectory()
    let socketPath: String
    let logPath: String
    let pid: pid_t
    private var exited = false

    /// Starts gauged with `--socket` in its own directory plus `arguments` and waits until
    /// it answers `ping` (unless `waitForPing` is false).
    init(
        _ arguments: [String] = [], display: String? = "memory:320x240", socketPath: String? = nil,
        environment: [String: String] = [:], passing passed: Int32? = nil, launcher: [String] = [],
        waitForPing: Bool = true
    ) throws {
        let gauged = try BuiltBinary.require(BuiltBinary.gauged, "gauged")
        self.socketPath = socketPath ?? directory.appending("gauged.sock")
        logPath = directory.appending("gauged.log")
        var all = ["--socket", self.socketPath]
        if let display { all += ["--display", display] }
        all += arguments
        let program = launcher.first ?? gauged
        let argv = launcher.isEmpty ? all : Array(launcher.dropFirst()) + [gauged] + all
        pid = try spawn(program, argv, environment: childEnvironment(environment), outputPath: logPath, passing: passed)
        if waitForPing {
            do {
                try waitUntilAnswering()
            } catch {
                kill()
                throw error
            }
        }
    }

    deinit { kill() }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Polls with `ping` until the daemon answers `ok` (`seconds` at most). A connection
    /// closed before its answer is polled again, not recorded: a daemon told to go by the
    /// one that replaces it (`--replace`) closes, unanswered, the connections it had not
    /// read yet, such as a ping of this poll's that came at the same moment.
    func waitUntilAnswering(seconds: Double = 30) throws {
        let deadline = monotonicNow() + seconds
        while true {
            if let connection = try? LineConnection(path: socketPath, timeout: 1),
                (try? connection.send("ping\n")) != nil, (try? connection.readLine()) == "ok"
            {
                return
            }
            if exited || reap(pid, within: 0) != nil {
                exited = true
                Issue.record("gauged exited during start-up; its log:\n\(log)")
                throw SpawnError(description: "gauged exited")
            }
            if monotonicNow() > deadline {
                Issue.record("gauged did not answer ping within \(seconds) s; its log:\n\(log)")
                throw SpawnError(description: "gauged not answering")
            }
            usleep(5_000)
        }
    }

    func connect(timeout: Double = 30) throws -> LineConnection {
        try LineConnection(path: socketPath, timeout: timeout)
    }

    /// One request on a connection of its own.
    func request(_ line: String) throws -> String {
        try connect().request(line)
    }

    func status() throws -> Status { try connect().status() }

    /// Polls `status` until `condition` holds (5 s at most), retrying refused connections.
    @discardableResult
    func waitForStatus(seconds: Double = 30, _ condition: (Status) -> Bool) throws -> Status {
        let deadline = monotonicNow() + seconds
        while true {
            // A refusal (the daemon still full of clients that just went) is retried too.
            guard let status = try? self.status() else {
                if monotonicNow() > deadline { return try self.status() }
                usleep(2_000)
                continue
            }
            if condition(status) { return status }
            guard monotonicNow() < deadline else {
                Issue.record("status never met the condition; last: \(status.json())")
                return status
            }
            usleep(2_000)
        }
    }

    /// Sends `signal` and returns the wait status once the daemon exits (nil on timeout).
    func signalAndWait(_ signal: Int32, seconds: Double = 30) -> Int32? {
        guard !exited else { return nil }
        Glibc.kill(pid, signal)
        return waitForExit(seconds: seconds)
    }

    /// The wait status once the daemon exits by itself (nil on timeout).
    func waitForExit(seconds: Double = 30) -> Int32? {
        guard !exited else { return nil }
        let status = reap(pid, within: seconds)
        if status != nil { exited = true }
        return status
    }

    /// SIGKILL and reap, unless already gone.
    func kill() {
        guard !exited else { return }
        exited = true
        Glibc.kill(pid, SIGCONT)
        Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    /// A line of /proc/PID/status, e.g. `VmRSS` in kB or `voluntary_ctxt_switches`.
    func procStatus(_ key: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
            return Int(line.dropFirst(key.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }
}

// MARK: - Frames

/// The frame an in-process `Scene` draws for `model` with `theme` on a memory display of
/// the given size and format: what the daemon's snapshot must hold for the same state.
func renderedFrame(
    _ model: ScreenModel, theme: Theme, width: Int, height: Int, format: PixelFormat = .xrgb8888, at time: Double = 0
) throws -> PNG.Image {
    let display = try MemoryDisplay(width: width, height: height, format: format)
    let scene = Scene(theme: theme, width: width, height: height)
    scene.render(model, at: time, into: display.framebuffer)
    return PNG.image(of: display.framebuffer)
}

/// A settled screen model: `value` reached, with these texts.
func settledModel(
    _ value: Double, message: String = "", title: String = "", mode: DisplayMode = .determinate,
    state: RunState = .running
) -> ScreenModel {
    var model = ScreenModel()
    model.setTarget(value)
    model.message = message
    model.title = title
    model.mode = mode
    model.state = state
    return model
}

/// Pixels whose largest channel difference exceeds `tolerance`.
func differingPixels(_ a: PNG.Image, _ b: PNG.Image, tolerance: Int = 0) -> Int {
    guard a.width == b.width, a.height == b.height else { return Int.max }
    var count = 0
    for pixel in 0..<(a.width * a.height) {
        let i = pixel * 4
        for channel in 0..<3 where abs(Int(a.rgba[i + channel]) - Int(b.rgba[i + channel])) > tolerance {
            count += 1
            break
        }
    }
    return count
}

// MARK: - Running gaugectl and other programs

/// Runs the built gaugectl with `arguments`, as another user when `asUser` holds
/// `setpriv` options (e.g. `--reuid=nobody --regid=nogroup --clear-groups`).
func gaugectl(_ arguments: [String], asUser setprivOptions: [String]? = nil, binary: String? = nil) throws -> ProgramRun {
    let client = try binary ?? BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl")
    guard let setprivOptions else { return try runProgram(client, arguments) }
    return try runProgram("/usr/bin/setpriv", setprivOptions + ["--", client] + arguments)
}
