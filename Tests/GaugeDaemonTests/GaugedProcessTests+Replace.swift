@testable import GaugeDaemon
import Foundation
import Glibc
import Testing
import GaugeTestSupport

// `--replace`: a shutdown screen takes over from a boot screen still running (an offline
// update's restart), the old one asked to go leaving its frame while the cards are held.

extension GaugedProcessTests {
    /// The new daemon asks the old one to quit keeping its frame, waits for it, then listens
    /// on the same socket itself; the old one ends with status 0.
    @Test func aShutdownScreenReplacesTheBootScreenStillRunning() throws {
        let boot = try GaugedProcess(["--title", "Installing updates"])
        #expect(try boot.request("progress 60") == "ok")
        // (Its start's ping is the old daemon's answer: the new one listens after it.)
        let restart = try GaugedProcess(["--shutdown", "--replace", "--title", "Restarting"], socketPath: boot.socketPath)
        let ended = try #require(boot.waitForExit(seconds: 10), "the boot's daemon did not go")
        #expect(exitCode(ended) == 0)
        try restart.waitUntilAnswering()
        #expect(boot.log.contains("quit (retain) requested"), "asked to keep its frame: \(boot.log)")
        #expect(restart.log.contains("replaced the daemon on \(boot.socketPath)"), Comment(rawValue: restart.log))
        let status = try restart.status()
        #expect(status.title == "Restarting")
        #expect(status.mode == .indeterminate)
    }

    /// Without a daemon on the socket `--replace` starts as any daemon does, and says nothing.
    @Test func replaceWithNobodyThereJustStarts() throws {
        let alone = try GaugedProcess(["--shutdown", "--replace"])
        #expect(try alone.request("ping") == "ok")
        #expect(!alone.log.contains("replace"), Comment(rawValue: alone.log))
    }
}

@Suite struct DaemonReplacementTests {
    /// Open descriptors of this process that name `path`.
    private func held(_ path: String) -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == path }.count
    }

    /// Every card is open from before the old daemon is asked to go until the value goes,
    /// so the kernel sees no last close of a card in between.
    @Test func theCardsAreHeldWhileTheOldDaemonGoes() throws {
        let old = try GaugedProcess()
        let cards = TemporaryDirectory()
        for name in ["card0", "card1", "renderD128"] {
            #expect(FileManager.default.createFile(atPath: cards.appending(name), contents: Data()))
        }
        let lines = LogLines()
        let log = Log(sink: { lines.items.append($0) })
        var replacement: DaemonReplacement? = DaemonReplacement(socketPath: old.socketPath, cardDirectory: cards.path, log: log)
        let ended = try #require(old.waitForExit(seconds: 10))
        #expect(exitCode(ended) == 0)
        #expect(held(cards.appending("card0")) == 1 && held(cards.appending("card1")) == 1)
        #expect(held(cards.appending("renderD128")) == 0, "a render node is no display")
        #expect(lines.items.contains { $0.contains("2 cards held") }, Comment(rawValue: "\(lines.items)"))
        // The socket is free for the new daemon: nobody answers, the lock is not held.
        #expect(throws: (any Error).self) { try LineConnection(path: old.socketPath, timeout: 1) }
        withExtendedLifetime(replacement) {}
        replacement = nil
        #expect(held(cards.appending("card0")) == 0 && held(cards.appending("card1")) == 0)
    }
}

/// A log's lines, kept by the test's one thread.
private final class LogLines: @unchecked Sendable {
    var items: [String] = []
}
