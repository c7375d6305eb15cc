import Foundation
import Glibc
import Testing
import GaugeTestSupport

// Plymouth's pid file, which `gauged --ask` creates in Plymouth's place (`PIDFile`): never
// written through a link, a stale one replaced, a live daemon's left alone, removed on
// exit only while it is this daemon's, and removed by `gaugectl console-reset` after a
// SIGKILL (gauged.service runs it then).

private func lstatType(_ path: String) -> mode_t? {
    var info = stat()
    return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : nil
}

private func text(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

/// `gauged --ask` with its own network namespace (Plymouth's socket is abstract) and the
/// pid file at `pidFile`.
private func askingDaemon(pidFile: String, pty: TypingPTY) throws -> GaugedProcess {
    try GaugedProcess(
        ["--plymouth-compat", "--ask", "--ask-tty", pty.slavePath, "--plymouth-pid-file", pidFile],
        launcher: ["/usr/bin/unshare", "--net"])
}

@Suite struct GaugedPIDFileTests {
    /// A symbolic link planted at the pid file's path is replaced, not written through:
    /// neither an existing target nor a missing one is touched.
    @Test(.enabled(if: geteuid() == 0, "a private network namespace needs root"))
    func aLinkAtThePathIsReplacedNotFollowed() throws {
        let directory = TemporaryDirectory()
        let pty = try TypingPTY()
        let precious = directory.appending("precious")
        try "keep me\n".write(toFile: precious, atomically: false, encoding: .utf8)
        let pidFile = directory.appending("plymouth/pid")
        mkdir(directory.appending("plymouth"), 0o755)
        #expect(symlink(precious, pidFile) == 0)
        var daemon = try askingDaemon(pidFile: pidFile, pty: pty)
        #expect(text(precious) == "keep me\n", "the link's target keeps its bytes")
        #expect(lstatType(pidFile) == S_IFREG)
        #expect(text(pidFile) == "\(daemon.pid)\n")
        #expect(daemon.log.contains("replacing a stale \(pidFile)"), "\(daemon.log)")
        daemon.kill()

        let nowhere = directory.appending("created-through-the-link")
        #expect(unlink(pidFile) == 0 && symlink(nowhere, pidFile) == 0)
        daemon = try askingDaemon(pidFile: pidFile, pty: pty)
        #expect(lstatType(nowhere) == nil, "nothing created through the link")
        #expect(text(pidFile) == "\(daemon.pid)\n")
        #expect(try daemon.request("quit") == "ok")
        #expect(daemon.waitForExit(seconds: 30).flatMap(exitCode) == 0)
        #expect(lstatType(pidFile) == nil, "removed on exit")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: directory.appending("plymouth"))) == [], "no temporary file left")
    }

    /// After a SIGKILL the file stays (nothing can remove it then); the next daemon
    /// replaces it. A running daemon's file is left alone by a second one, which does not
    /// remove it when it exits either.
    @Test(.enabled(if: geteuid() == 0, "a private network namespace needs root"))
    func aStaleFileIsReplacedAndALiveDaemonsKept() throws {
        let directory = TemporaryDirectory()
        let pty = try TypingPTY()
        let pidFile = directory.appending("plymouth/pid")
        let killed = try askingDaemon(pidFile: pidFile, pty: pty)
        #expect(text(pidFile) == "\(killed.pid)\n")
        killed.kill()
        #expect(text(pidFile) == "\(killed.pid)\n", "left behind by SIGKILL")

        let running = try askingDaemon(pidFile: pidFile, pty: pty)
        #expect(text(pidFile) == "\(running.pid)\n", "the stale file replaced")
        #expect(running.log.contains("which is not a running gauged or plymouthd"), "\(running.log)")

        let second = try askingDaemon(pidFile: pidFile, pty: pty)
        #expect(text(pidFile) == "\(running.pid)\n", "a running daemon's file is kept")
        #expect(second.log.contains("belongs to gauged (pid \(running.pid)), which is running"), "\(second.log)")
        #expect(try second.request("quit") == "ok")
        #expect(second.waitForExit(seconds: 30).flatMap(exitCode) == 0)
        #expect(text(pidFile) == "\(running.pid)\n", "not removed by a daemon it does not name")

        #expect(try running.request("quit") == "ok")
        #expect(running.waitForExit(seconds: 30).flatMap(exitCode) == 0)
        #expect(lstatType(pidFile) == nil)
    }

    /// `gaugectl console-reset` (gauged.service's ExecStopPost after a SIGKILL) removes a
    /// file that names no running daemon, and keeps one that does.
    @Test(.enabled(if: geteuid() == 0, "a private network namespace needs root"))
    func consoleResetRemovesOnlyAStaleFile() throws {
        let directory = TemporaryDirectory()
        let pty = try TypingPTY()
        let pidFile = directory.appending("plymouth/pid")
        let killed = try askingDaemon(pidFile: pidFile, pty: pty)
        killed.kill()
        #expect(lstatType(pidFile) == S_IFREG)
        _ = try gaugectl(["console-reset", "--tty", pty.slavePath, "--pid-file", pidFile])
        #expect(lstatType(pidFile) == nil, "the stale file is gone")

        let running = try askingDaemon(pidFile: pidFile, pty: pty)
        _ = try gaugectl(["console-reset", "--tty", pty.slavePath, "--pid-file", pidFile])
        #expect(text(pidFile) == "\(running.pid)\n", "a running daemon's file is kept")
    }
}
