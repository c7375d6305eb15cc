import Foundation
import GaugeProtocol
import GaugeRender
import Glibc
import Testing
import GaugeTestSupport

// systemd's part against the real gauged: socket activation (LISTEN_FDS), READY=1 on
// $NOTIFY_SOCKET, SIGTERM / SIGINT, SIGHUP re-reading the theme file.

/// A datagram socket standing in for systemd's notification socket.
private final class NotifySocket {
    let path: String
    let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(fd >= 0)
        try #require(bindUnix(fd, path) == 0, "bind \(path): errno \(errno)")
    }

    deinit { close(fd) }

    /// The next datagram, or nil after `seconds`.
    func receive(seconds: Double) -> String? {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&entry, 1, Int32(seconds * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return count >= 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
    }
}

private func bindUnix(_ fd: Int32, _ path: String) -> Int32 {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: Array(path.utf8) + [0]) }
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
}

/// A listening Unix stream socket on `path`, close-on-exec, never descriptor 3 (which
/// posix_spawn's dup2 onto itself would leave close-on-exec).
private func systemdListener(at path: String) throws -> Int32 {
    var fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    try #require(fd >= 0 && bindUnix(fd, path) == 0 && listen(fd, 16) == 0)
    if fd == 3 {
        let moved = fcntl(fd, F_DUPFD_CLOEXEC, 10)
        close(fd)
        fd = moved
    }
    return fd
}

/// `sh` sets LISTEN_PID to its own pid and execs gauged in the same process, so the
/// variable names the daemon, as systemd does it.
private let listenPIDLauncher = ["/bin/sh", "-c", #"export LISTEN_PID=$$; exec "$0" "$@""#]

@Suite struct GaugedProcessSystemdTests {
    @Test func socketActivationServesThePassedSocketAndReadyFollowsIt() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("activated.sock")
        let listener = try systemdListener(at: path)
        defer { close(listener) }
        let notify = try NotifySocket(path: directory.appending("notify.sock"))

        let daemon = try GaugedProcess(
            socketPath: path, environment: ["LISTEN_FDS": "1", "NOTIFY_SOCKET": notify.path],
            passing: listener, launcher: listenPIDLauncher, waitForPing: false)
        let ready = notify.receive(seconds: 5)
        #expect(ready == "READY=1", "\(daemon.log)")
        // At READY=1 the socket is served already.
        let start = monotonicNow()
        #expect(try daemon.request("ping") == "ok")
        #expect(monotonicNow() - start < 0.2)
        #expect(try daemon.request("progress 33") == "ok")
        #expect(try daemon.status().target == 33)

        // The socket belongs to systemd: the daemon leaves its file in place on exit.
        let exit = daemon.signalAndWait(SIGTERM)
        #expect(exit.flatMap(exitCode) == 0)
        #expect(notify.receive(seconds: 2) == "STOPPING=1")
        #expect(FileManager.default.fileExists(atPath: path), "an adopted socket's file is not ours to remove")
    }

    @Test func aListenPIDForAnotherProcessIsIgnored() throws {
        // LISTEN_PID of the test process, not the daemon: the daemon binds its own socket.
        let directory = TemporaryDirectory()
        let path = directory.appending("activated.sock")
        let listener = try systemdListener(at: path)
        defer { close(listener) }
        let daemon = try GaugedProcess(
            environment: ["LISTEN_FDS": "1", "LISTEN_PID": String(getpid())], passing: listener)
        #expect(try daemon.request("ping") == "ok")
        #expect(FileManager.default.fileExists(atPath: daemon.socketPath))
    }

    @Test func readyAfterTheSocketAnswersAndSigtermExitsCleanly() throws {
        let directory = TemporaryDirectory()
        let notify = try NotifySocket(path: directory.appending("notify.sock"))
        let daemon = try GaugedProcess(environment: ["NOTIFY_SOCKET": notify.path], waitForPing: false)
        #expect(notify.receive(seconds: 5) == "READY=1", "\(daemon.log)")
        #expect(try daemon.request("ping") == "ok", "READY=1 comes once the socket answers")

        let exit = daemon.signalAndWait(SIGTERM)
        #expect(exit.flatMap(exitCode) == 0, "SIGTERM exits 0")
        #expect(notify.receive(seconds: 2) == "STOPPING=1")
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath), "the socket file is removed")
    }

    @Test func sigintExitsZeroToo() throws {
        let daemon = try GaugedProcess()
        #expect(daemon.signalAndWait(SIGINT).flatMap(exitCode) == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
    }

    @Test func sighupRereadsTheThemeFile() throws {
        let directory = TemporaryDirectory()
        let themePath = directory.appending("gauge.theme")
        func writeTheme(_ fill: String) throws {
            try "animate = false\ntransition_duration = 0\nfill_color = \(fill)\n"
                .write(toFile: themePath, atomically: false, encoding: .utf8)
        }
        func expected(_ fill: String) throws -> PNG.Image {
            var theme = Theme()
            #expect(try ThemeFile.load(themePath, into: &theme).isEmpty)
            #expect(theme.fillColor == Color(parsing: fill))
            return try renderedFrame(settledModel(60), theme: theme, width: 320, height: 240)
        }
        try writeTheme("#cc2200")
        let daemon = try GaugedProcess(["--theme", themePath])
        let snapshotPath = directory.appending("frame.png")
        func snapshot() throws -> PNG.Image {
            #expect(try daemon.request("snapshot \(snapshotPath)") == "ok")
            return try PNG.read(snapshotPath)
        }

        #expect(try daemon.request("progress 60") == "ok")
        #expect(try daemon.status().animating == false, "the file's animate = false holds")
        let red = try expected("#cc2200")
        #expect(differingPixels(try snapshot(), red) == 0)

        // A runtime change, then SIGHUP: the new file wins and the runtime change is gone.
        #expect(try daemon.request("theme flat=true") == "ok")
        try writeTheme("#2288ff")
        let blue = try expected("#2288ff")
        kill(daemon.pid, SIGHUP)
        let deadline = monotonicNow() + 3
        var frame = try snapshot()
        while differingPixels(frame, blue) != 0, monotonicNow() < deadline {
            usleep(10_000)
            frame = try snapshot()
        }
        #expect(differingPixels(frame, blue) == 0, "the snapshot shows the re-read fill colour")
        #expect(try daemon.status().target == 60, "a reload keeps the state")

        // `reload` does the same on request; a vanished file is an io error and changes nothing.
        try writeTheme("#22aa44")
        #expect(try daemon.request("reload") == "ok")
        #expect(differingPixels(try snapshot(), try expected("#22aa44")) == 0)
        try FileManager.default.removeItem(atPath: themePath)
        #expect(try daemon.request("reload").hasPrefix("err io "))
        try writeTheme("#22aa44")
        #expect(differingPixels(try snapshot(), try expected("#22aa44")) == 0)
        #expect(daemon.signalAndWait(SIGTERM).flatMap(exitCode) == 0)
    }
}
