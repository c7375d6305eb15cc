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

/// The daemon's side of running out of descriptors (the seam itself: GaugeSystemTests).
@Suite struct DescriptorExhaustionTests {
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
