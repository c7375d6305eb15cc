import GaugeDaemon
import Glibc
import Testing
import GaugeSystem
import GaugeTestSupport

@Suite struct ListeningSocketTests {
    @Test func createsParentDirectoriesAndSetsTheSocketMode() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("run/gauge/gauged.sock")
        let listener = try ListeningSocket.bind(path: path)
        let socketStatus = try #require(try Syscall.lstat(path))
        #expect(socketStatus.st_mode & S_IFMT == S_IFSOCK)
        #expect(socketStatus.st_mode & 0o777 == 0o660)
        let parentStatus = try #require(try Syscall.lstat(directory.appending("run/gauge")))
        #expect(parentStatus.st_mode & 0o777 == 0o755)
        listener.close()
        #expect(try Syscall.lstat(path) == nil)
    }

    @Test func refusesToStartWhileAnotherDaemonListens() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("gauged.sock")
        let running = try ListeningSocket.bind(path: path)
        defer { running.close() }
        #expect(throws: ListenerError.alreadyRunning(path: path)) { try ListeningSocket.bind(path: path) }
        // The live daemon's socket is left alone.
        #expect(try Syscall.lstat(path) != nil)
    }

    @Test func removesAStaleSocketFile() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("gauged.sock")
        let dead = try Syscall.socket(domain: AF_UNIX, type: sockStream)
        try Syscall.bind(dead, to: UnixSocketAddress(path))
        Syscall.close(dead)  // the file stays, nobody listens
        let listener = try ListeningSocket.bind(path: path)
        defer { listener.close() }
        let client = try TestClient(path: path)
        #expect(client.fd >= 0)
    }

    @Test func leavesAnythingButASocketAlone() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("gauged.sock")
        let file = try Syscall.open(path, flags: O_WRONLY | O_CREAT, mode: 0o644)
        Syscall.close(file)
        #expect(throws: ListenerError.notASocket(path: path)) { try ListeningSocket.bind(path: path) }
        #expect(try Syscall.lstat(path) != nil)
    }

    @Test func doesNotRemoveASocketFileThatIsNoLongerItsOwn() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("gauged.sock")
        let old = try ListeningSocket.bind(path: path)
        // Someone replaced the file.
        try Syscall.unlink(path)
        let newer = try Syscall.socket(domain: AF_UNIX, type: sockStream)
        defer { Syscall.close(newer) }
        try Syscall.bind(newer, to: UnixSocketAddress(path))
        old.close()
        #expect(try Syscall.lstat(path) != nil)
    }

    /// The start race: a socket that is bound but not yet listening looks stale to a
    /// second daemon's probe. The lock beside the socket decides first.
    @Test func aSecondDaemonLosesOnTheLockWhateverTheSocketFileLooksLike() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("gauged.sock")
        let first = try ListeningSocket.bind(path: path)
        try Syscall.unlink(path)
        let dead = try Syscall.socket(domain: AF_UNIX, type: sockStream)
        try Syscall.bind(dead, to: UnixSocketAddress(path))
        Syscall.close(dead)  // a socket file nobody listens on: what the probe calls stale
        #expect(throws: ListenerError.alreadyRunning(path: path)) { try ListeningSocket.bind(path: path) }
        #expect(try Syscall.lstat(path) != nil, "the loser removed nothing")
        #expect(try Syscall.lstat(ListeningSocket.lockPath(for: path)) != nil)
        first.close()
        let second = try ListeningSocket.bind(path: path)
        second.close()
    }

    @Test func listensInTheAbstractNamespace() throws {
        let name = "@gauge-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let listener = try ListeningSocket.bind(path: name)
        defer { listener.close() }
        let client = try TestClient(path: name)
        #expect(client.fd >= 0)
        #expect(throws: ListenerError.alreadyRunning(path: name)) { try ListeningSocket.bind(path: name) }
    }

    @Test func refusesAPathTooLongForAnAddress() throws {
        let path = "/tmp/" + String(repeating: "p", count: 200)
        #expect(throws: ListenerError.system(SystemError("socket address \(path)", errno: ENAMETOOLONG))) {
            try ListeningSocket.bind(path: path)
        }
    }

    @Test func adoptsOnlyAListeningUnixStreamSocket() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("passed.sock")
        let passed = try Syscall.socket(domain: AF_UNIX, type: sockStream)
        try Syscall.bind(passed, to: UnixSocketAddress(path))
        try Syscall.listen(passed, backlog: 8)
        let adopted = try ListeningSocket.adopt(fd: passed)
        #expect(adopted.path == nil)
        #expect(try Syscall.fcntl(passed, F_GETFL) & O_NONBLOCK != 0)
        adopted.close()
        // The socket file belongs to whoever passed the socket.
        #expect(try Syscall.lstat(path) != nil)

        let notListening = try Syscall.socket(domain: AF_UNIX, type: sockStream)
        defer { Syscall.close(notListening) }
        #expect(throws: ListenerError.notAListeningUnixStreamSocket(fd: notListening)) {
            try ListeningSocket.adopt(fd: notListening)
        }
        let datagram = try Syscall.socket(domain: AF_UNIX, type: sockDgram)
        defer { Syscall.close(datagram) }
        #expect(throws: ListenerError.notAListeningUnixStreamSocket(fd: datagram)) {
            try ListeningSocket.adopt(fd: datagram)
        }
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { fds.forEach(Syscall.close) }
        #expect(throws: ListenerError.notAListeningUnixStreamSocket(fd: fds[0])) {
            try ListeningSocket.adopt(fd: fds[0])
        }
    }

    @Test func usesThePassedSocketWhenThereIsOne() throws {
        let directory = TemporaryDirectory()
        let passedPath = directory.appending("passed.sock")
        let passed = try Syscall.socket(domain: AF_UNIX, type: sockStream)
        try Syscall.bind(passed, to: UnixSocketAddress(passedPath))
        try Syscall.listen(passed, backlog: 8)
        let ownPath = directory.appending("own.sock")

        let adopted = try ListeningSocket.passedOrBound(path: ownPath, passed: passed..<(passed + 1))
        #expect(adopted.fd == passed && adopted.path == nil)
        #expect(try Syscall.lstat(ownPath) == nil)
        adopted.close()

        let bound = try ListeningSocket.passedOrBound(path: ownPath, passed: 3..<3)
        #expect(bound.path == ownPath)
        bound.close()
    }
}
