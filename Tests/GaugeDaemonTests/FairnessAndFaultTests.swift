import GaugeDaemon
import GaugeProtocol
import GaugeSystem
import Glibc
import Testing

@Suite struct FairnessTests {
    /// Both clients' bytes are waiting before the loop runs: the 100-line batch is
    /// served 16 lines a turn, the other client's ping in the first turn.
    @Test func aPipelinedBatchIsServedInSharesAndTheOtherClientGoesFirst() throws {
        var order: [String] = []
        let fixture = try ServerFixture { connection, item in
            if case .line(let line) = item { order.append(line) }
            return ServerFixture.echo(connection, item)
        }
        let batch = try fixture.client()
        let other = try fixture.client()
        try pump(fixture.loop) { fixture.server.clientCount == 2 }
        batch.send(String((0..<100).map { "b\($0)\n" }.joined()))
        other.send("ping\n")
        try pump(fixture.loop) { batch.lines.count == 100 && other.lines.count == 1 }
        let ping = try #require(order.firstIndex(of: "ping"))
        #expect(ping <= 16, "the ping came \(ping)th")
        #expect(order.filter { $0 != "ping" } == (0..<100).map { "b\($0)" }, "the batch keeps its order")
        #expect(batch.lines == (0..<100).map { "ok b\($0)" })
    }

    @Test func aSlowRequestEndsTheTurnOfItsClient() throws {
        var order: [String] = []
        var configuration = SocketServerConfiguration()
        configuration.client.maxSecondsPerTurn = 0
        let fixture = try ServerFixture(configuration: configuration) { connection, item in
            if case .line(let line) = item { order.append(line) }
            return ServerFixture.echo(connection, item)
        }
        let batch = try fixture.client()
        let other = try fixture.client()
        try pump(fixture.loop) { fixture.server.clientCount == 2 }
        batch.send("a\nb\nc\nd\n")
        other.send("x\ny\n")
        try pump(fixture.loop) { batch.lines.count == 4 && other.lines.count == 2 }
        // One message per turn each: the two streams interleave.
        #expect(order.firstIndex(of: "x")! < order.firstIndex(of: "c")!)
        #expect(order.firstIndex(of: "y")! < order.firstIndex(of: "d")!)
    }
}

@Suite struct ThrottledLogTests {
    final class Lines: @unchecked Sendable {
        var all: [String] = []
    }

    @Test func aBurstThenSomeLinesASecondWithACountOfTheRest() {
        let lines = Lines()
        var now = 100.0
        let throttled = ThrottledLog(log: Log(sink: { lines.all.append($0) }), burst: 5, perSecond: 2, clock: { now })
        for index in 0..<50 { throttled.info("psplash", "bad \(index)") }
        #expect(lines.all.count == 5)
        #expect(throttled.suppressedCount("psplash") == 45)
        throttled.info("plymouth", "other source")
        #expect(lines.all.last == "gauged: plymouth: other source\n", "each source has its own bucket")
        now += 1
        throttled.info("psplash", "after a second")
        #expect(lines.all.suffix(2) == ["gauged: psplash: 45 lines suppressed\n", "gauged: psplash: after a second\n"])
        #expect(throttled.suppressedCount("psplash") == 0)
    }
}

@Suite struct LineSplitterTests {
    private func split(_ text: String, max: Int = 8, nulToo: Bool = false) -> ([LineSplitter.Piece], LineSplitter.Piece?) {
        var splitter = nulToo
            ? LineSplitter(maxLineBytes: max) { $0 == 0 || $0 == UInt8(ascii: "\n") } : LineSplitter(maxLineBytes: max)
        var pieces: [LineSplitter.Piece] = []
        splitter.split(Array(text.utf8)) { pieces.append($0) }
        return (pieces, splitter.finish())
    }

    @Test func linesAtTheSeparatorAndTheLastOneAtTheEnd() {
        let (pieces, last) = split("ab\ncd\nef")
        #expect(pieces == [.line(Array("ab".utf8)), .line(Array("cd".utf8))])
        #expect(last == .line(Array("ef".utf8)))
        #expect(split("ab\0cd\n", nulToo: true).0 == [.line(Array("ab".utf8)), .line(Array("cd".utf8))])
    }

    @Test func anOverlongLineIsReportedOnceAndSkipped() {
        let (pieces, last) = split("0123456789abc\nok\n0123456789")
        #expect(pieces == [.tooLong, .line(Array("ok".utf8)), .tooLong])
        #expect(last == nil, "the rest of an overlong line is not a line")
    }

    @Test func aLastRequestWithoutItsNewlineIsAnswered() {
        var framer = LineFramer()
        framer.append(Array("ping\nstatus".utf8))
        #expect(framer.next() == .line("ping"))
        #expect(framer.next() == nil)
        #expect(framer.finish() == .line("status"))
        #expect(framer.finish() == nil)
    }
}

@Suite struct SyscallFaultTests {
    private func pipeWith(_ text: String) throws -> [Int32] {
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        try Syscall.makeNonBlockingAndCloseOnExec(fds[0])
        _ = Array(text.utf8).withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
        return fds
    }

    /// One `Syscall.read` of up to 16 bytes: the count (nil: nothing yet) and the bytes.
    private func readOnce(_ fd: Int32) throws(SystemError) -> (Int?, [UInt8]) {
        var buffer = [UInt8](repeating: 0, count: 16)
        let result = buffer.withUnsafeMutableBytes { raw in
            Result { () throws(SystemError) in try Syscall.read(fd, into: raw) }
        }
        let count = try result.get()
        return (count, Array(buffer.prefix(count ?? 0)))
    }

    @Test func interruptedCallsAreRetried() throws {
        let fds = try pipeWith("data")
        defer { fds.forEach(Syscall.close) }
        let plan = SyscallFaults(["read": [EINTR, EINTR]])
        let (count, bytes) = try SyscallFaults.$current.withValue(plan) { try readOnce(fds[0]) }
        #expect(count == 4 && bytes == Array("data".utf8))
        #expect(plan.injected.map(\.errno) == [EINTR, EINTR])
        #expect(plan.remainingCount == 0)
    }

    @Test func wouldBlockIsNotAnErrorAndOtherErrorsNameTheCall() throws {
        let fds = try pipeWith("x")
        defer { fds.forEach(Syscall.close) }
        let plan = SyscallFaults(["read": [EAGAIN, EIO]])
        try SyscallFaults.$current.withValue(plan) { () throws in
            #expect(try readOnce(fds[0]).0 == nil)
            #expect(throws: SystemError("read", errno: EIO)) { try readOnce(fds[0]) }
            #expect(try readOnce(fds[0]).0 == 1, "the plan used up, the real call runs")
        }
        #expect(try readOnce(fds[0]).0 == nil, "outside the plan: a real EAGAIN")
    }

    /// Out of descriptors: the server stops accepting (no busy loop on a listener that
    /// stays readable) and starts again when a client leaves.
    @Test func runningOutOfDescriptorsPausesAcceptingUntilAClientLeaves() throws {
        let fixture = try ServerFixture()
        let first = try fixture.client()
        first.send("one\n")
        try pump(fixture.loop) { first.lines.count == 1 }
        let plan = SyscallFaults(["accept": [EMFILE]])
        let second = try fixture.client()
        second.send("two\n")
        try SyscallFaults.$current.withValue(plan) {
            for _ in 0..<5 { try fixture.loop.runOnce(timeoutMilliseconds: 20) }
        }
        #expect(plan.injected.map(\.name) == ["accept"], "accept was tried once, then not again")
        #expect(second.lines.isEmpty && fixture.server.clientCount == 1)
        first.close()
        try pump(fixture.loop) { second.lines.count == 1 }
        #expect(second.lines == ["ok two"])
    }
}
