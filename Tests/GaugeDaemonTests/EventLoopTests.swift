import GaugeDaemon
import Glibc
import Testing
import GaugeSystem

@Suite struct EventLoopTests {
    private func makePipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        for fd in fds { try Syscall.makeNonBlockingAndCloseOnExec(fd) }
        return (fds[0], fds[1])
    }

    @Test func handlersRunOnReadinessAndNotAfterUnregister() throws {
        let loop = try EventLoop()
        let pipe = try makePipe()
        defer { Syscall.close(pipe.read); Syscall.close(pipe.write) }
        var calls: [IOEvents] = []
        try loop.register(pipe.read, events: .readable) { calls.append($0) }
        #expect(try loop.runOnce(timeoutMilliseconds: 0) == 0)

        _ = Glibc.write(pipe.write, "x", 1)
        #expect(try loop.runOnce(timeoutMilliseconds: 1000) == 1)
        #expect(calls.count == 1 && calls[0].contains(.readable))

        loop.unregister(pipe.read)
        #expect(try loop.runOnce(timeoutMilliseconds: 0) == 0)
        #expect(calls.count == 1)
        #expect(loop.registeredCount == 0)
    }

    @Test func modifyChangesTheEventsWatched() throws {
        let loop = try EventLoop()
        let pipe = try makePipe()
        defer { Syscall.close(pipe.read); Syscall.close(pipe.write) }
        var calls = 0
        try loop.register(pipe.write, events: []) { _ in calls += 1 }
        #expect(try loop.runOnce(timeoutMilliseconds: 0) == 0)
        try loop.modify(pipe.write, events: .writable)
        #expect(try loop.runOnce(timeoutMilliseconds: 0) == 1)
        #expect(calls == 1)
    }

    @Test func stopEndsRunAfterTheCurrentHandlers() throws {
        let loop = try EventLoop()
        let pipe = try makePipe()
        defer { Syscall.close(pipe.read); Syscall.close(pipe.write) }
        var order: [String] = []
        try loop.register(pipe.read, events: .readable) { _ in
            order.append("handler")
            loop.execute { order.append("work") }
            loop.stop()
        }
        _ = Glibc.write(pipe.write, "x", 1)
        try loop.run()
        #expect(order == ["handler", "work"])
        loop.unregister(pipe.read)
    }

    @Test func aHandlerMayCloseAnotherDescriptorOfTheSameWakeup() throws {
        let loop = try EventLoop()
        let first = try makePipe()
        let second = try makePipe()
        defer { [first.read, first.write, second.read, second.write].forEach(Syscall.close) }
        var called: [String] = []
        try loop.register(first.read, events: .readable) { _ in
            called.append("first")
            loop.unregister(second.read)
        }
        try loop.register(second.read, events: .readable) { _ in
            called.append("second")
            loop.unregister(first.read)
        }
        _ = Glibc.write(first.write, "x", 1)
        _ = Glibc.write(second.write, "x", 1)
        try loop.runOnce(timeoutMilliseconds: 1000)
        #expect(called.count == 1)
    }

    @Test func frameTimerFiresAtItsRateAndStops() throws {
        let loop = try EventLoop()
        var expirations: UInt64 = 0
        let timer = try FrameTimer(loop: loop) { expirations += $0 }
        try timer.start(fps: 100)
        #expect(timer.isRunning)
        let started = MonotonicClock.now()
        try pump(loop) { expirations >= 20 }
        let elapsed = MonotonicClock.now() - started
        // 20 periods of 10 ms: about 0.2 s, never less.
        #expect(elapsed >= 0.19)
        #expect(elapsed < 1.0)

        timer.stop()
        #expect(!timer.isRunning)
        let stoppedAt = expirations
        #expect(try loop.runOnce(timeoutMilliseconds: 50) == 0)
        #expect(expirations == stoppedAt)
    }

    @Test func frameTimerCanFireItsFirstFrameAtOnce() throws {
        let loop = try EventLoop()
        var expirations: UInt64 = 0
        let timer = try FrameTimer(loop: loop) { expirations += $0 }
        // At 1 fps a first expiration one period away would take a second.
        try timer.start(fps: 1, immediately: true)
        let started = MonotonicClock.now()
        try pump(loop, seconds: 0.5) { expirations >= 1 }
        #expect(expirations == 1)
        #expect(MonotonicClock.now() - started < 0.25)
        timer.stop()
    }

    @Test func frameTimerRejectsNonsenseRates() throws {
        let loop = try EventLoop()
        let timer = try FrameTimer(loop: loop) { _ in }
        #expect(throws: SystemError.self) { try timer.start(fps: 0) }
        #expect(throws: SystemError.self) { try timer.start(fps: .nan) }
        #expect(!timer.isRunning)
    }

    @Test func monotonicClockAdvances() {
        let first = MonotonicClock.now()
        usleep(2000)
        #expect(MonotonicClock.now() - first >= 0.002)
    }

    @Test func sighupReachesTheHandlerThroughTheLoop() throws {
        let loop = try EventLoop()
        var received: [Int32] = []
        let signals = try SignalSource(loop: loop) { received.append($0) }
        defer { signals.close() }
        // The mask is per thread and the test runner has other threads that do not block
        // SIGHUP, so a process-wide kill() could land on one of them and end the process.
        // Send it to this thread, which reads the signalfd.
        pthread_kill(pthread_self(), SIGHUP)
        try pump(loop) { !received.isEmpty }
        #expect(received == [SIGHUP])
    }

    @Test func systemErrorNamesTheOperationAndTheReason() {
        let error = SystemError("bind /run/gauge/gauged.sock", errno: EADDRINUSE)
        #expect(error.description == "bind /run/gauge/gauged.sock: Address already in use")
        #expect(SystemError("send", errno: EPIPE).isDisconnect)
    }

    @Test func logWritesOneLinePerEvent() {
        final class Lines: @unchecked Sendable { var all: [String] = [] }
        let lines = Lines()
        var log = Log(verbose: false) { lines.all.append($0) }
        log.info("client said \"a\nb\"")
        log.debug("hidden")
        log.verbose = true
        log.debug("shown")
        #expect(lines.all == ["gauged: client said \"a\\nb\"\n", "gauged: shown\n"])
    }
}
