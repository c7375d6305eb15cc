import Foundation
import GaugeProtocol
import Glibc
import Testing
import GaugeTestSupport

// gaugectl against the real gauged: its exit statuses, and the daemon's peer check
// (SO_PEERCRED) for users that are not allowed.

@Suite struct GaugedProcessClientTests {
    @Test func gaugectlExitStatusesAgainstTheRealDaemon() throws {
        let daemon = try GaugedProcess()
        let socket = ["--socket", daemon.socketPath, "--timeout", "2"]

        var run = try gaugectl(socket + ["ping"])
        #expect(run.status == 0 && run.stdout == "" && run.stderr == "", "\(run.stderr)")
        run = try gaugectl(socket + ["progress", "42", "--message", "From gaugectl"])
        #expect(run.status == 0, "\(run.stderr)")
        run = try gaugectl(socket + ["status", "--json"])
        #expect(run.status == 0)
        let status = try #require(Status.parse(json: String(run.stdout.dropLast())))
        #expect(status.target == 42 && status.message == "From gaugectl")
        run = try gaugectl(socket + ["wait"])
        #expect(run.status == 0)
        #expect(try daemon.status().shown == 42, "gaugectl wait returned after the transition")

        run = try gaugectl(socket + ["send", "progress 400"])
        #expect(run.status == 1, "err → 1")
        #expect(run.stderr.hasPrefix("gaugectl: range: "), "\(run.stderr)")
        run = try gaugectl(socket + ["theme", "no_such_key=1"])
        #expect(run.status == 1 && run.stderr.hasPrefix("gaugectl: unknown theme key "), "\(run.stderr)")

        run = try gaugectl(socket + ["frobnicate"])
        #expect(run.status == 2, "usage → 2")
        run = try gaugectl(socket + ["progress"])
        #expect(run.status == 2)
        run = try gaugectl(["--timeout", "soon", "ping"])
        #expect(run.status == 2)
        #expect(try daemon.request("ping") == "ok")
    }

    @Test func gaugectlExitsThreeWhenNothingListens() throws {
        let directory = TemporaryDirectory()
        var run = try gaugectl(["--socket", directory.appending("absent.sock"), "--timeout", "2", "--no-wait", "ping"])
        #expect(run.status == 3 && run.seconds < 1.5, "\(run.stderr)")

        // A socket file nobody listens on (a daemon that died).
        let path = directory.appending("dead.sock")
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8) + [0])
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0)
        run = try gaugectl(["--socket", path, "--timeout", "2", "--no-wait", "ping"])
        #expect(run.status == 3 && run.seconds < 1.5, "\(run.stderr)")
        #expect(run.stderr.contains("connection refused"), "\(run.stderr)")
    }

    @Test func gaugectlExitsThreeWithinItsTimeoutWhenTheDaemonIsStopped() throws {
        let daemon = try GaugedProcess()
        kill(daemon.pid, SIGSTOP)
        defer { kill(daemon.pid, SIGCONT) }
        let run = try gaugectl(["--socket", daemon.socketPath, "--timeout", "1", "ping"])
        #expect(run.status == 3, "\(run.stderr)")
        #expect(run.seconds >= 0.95 && run.seconds < 1.8, "timed out after \(run.seconds) s with --timeout 1")
        #expect(run.stderr.contains("timed out"), "\(run.stderr)")
        kill(daemon.pid, SIGCONT)
        #expect(try daemon.request("ping") == "ok", "the daemon goes on after SIGCONT")
    }

    /// The socket lives in a 0755 directory so other users can reach the file; its own
    /// mode (0660, group `users` with `--group users`) is the first gate. To prove the
    /// daemon's own check (SO_PEERCRED), the test then opens the file to everybody (0666):
    /// a user who is neither root, the daemon's user, nor in the group now connects and
    /// must get `err denied` from the daemon itself.
    @Test(.enabled(if: geteuid() == 0, "runs gaugectl as nobody through setpriv"))
    func peersOutsideTheGroupAreDeniedMembersServed() throws {
        let directory = TemporaryDirectory()
        chmod(directory.path, 0o755)
        let daemon = try GaugedProcess(["--group", "users"], socketPath: directory.appending("gauged.sock"))
        var info = stat()
        try #require(stat(daemon.socketPath, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o660)
        #expect(info.st_gid == getgrnam("users").pointee.gr_gid, "the socket belongs to the configured group")

        let client = try reachableGaugectl(in: directory)
        let outsider = ["--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        let supplementary = ["--reuid=nobody", "--regid=nogroup", "--groups=users"]
        let primary = ["--reuid=nobody", "--regid=users", "--clear-groups"]
        let socket = ["--socket", daemon.socketPath, "--timeout", "2"]

        // The file's mode keeps the outsider out before the daemon sees it: a status of
        // its own (not 3, "no daemon"), naming the group that may.
        var run = try gaugectl(socket + ["ping"], asUser: outsider, binary: client)
        #expect(run.status == 4 && run.stderr.contains("permission denied"), "\(run.stderr)")
        #expect(run.stderr.contains("members of group users"), "\(run.stderr)")

        // Group members are served, by supplementary or primary group.
        run = try gaugectl(socket + ["progress", "12"], asUser: supplementary, binary: client)
        #expect(run.status == 0, "\(run.stderr)")
        run = try gaugectl(socket + ["message", "member"], asUser: primary, binary: client)
        #expect(run.status == 0, "\(run.stderr)")

        chmod(daemon.socketPath, 0o666)
        run = try gaugectl(socket + ["progress", "99"], asUser: outsider, binary: client)
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.hasPrefix("gaugectl: denied: "), "\(run.stderr)")

        let status = try daemon.status()
        #expect(status.target == 12 && status.message == "member", "the denied request changed nothing")
        #expect(daemon.log.contains("refused"), "\(daemon.log)")
    }

    @Test(.enabled(if: geteuid() == 0, "runs gaugectl as nobody through setpriv"))
    func withoutAGroupOnlyRootAndTheDaemonsUserAreServed() throws {
        let directory = TemporaryDirectory()
        chmod(directory.path, 0o755)
        let daemon = try GaugedProcess(socketPath: directory.appending("gauged.sock"))
        chmod(daemon.socketPath, 0o666)
        let client = try reachableGaugectl(in: directory)
        let socket = ["--socket", daemon.socketPath, "--timeout", "2"]
        var run = try gaugectl(socket + ["ping"], asUser: ["--reuid=nobody", "--regid=nogroup", "--groups=users"], binary: client)
        #expect(run.status == 1 && run.stderr.hasPrefix("gaugectl: denied: "), "\(run.stderr)")
        // Root's group but not root's uid is not enough either.
        run = try gaugectl(socket + ["ping"], asUser: ["--reuid=nobody", "--regid=root", "--clear-groups"], binary: client)
        #expect(run.status == 1 && run.stderr.hasPrefix("gaugectl: denied: "), "\(run.stderr)")
        run = try gaugectl(socket + ["ping"])
        #expect(run.status == 0, "root is served")
    }
}

/// A copy of gaugectl in `directory` (mode 0755), so that nobody can run it even when
/// the build directory lies under a home directory closed to other users.
func reachableGaugectl(in directory: TemporaryDirectory) throws -> String {
    let path = directory.appending("gaugectl")
    // The file itself: a release build's gaugectl is a relative link to gauged.
    let built = URL(fileURLWithPath: try BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl")).resolvingSymlinksInPath()
    try FileManager.default.copyItem(atPath: built.path, toPath: path)
    chmod(path, 0o755)
    return path
}
