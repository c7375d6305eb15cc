import GaugeProtocol
import Testing

private let second: UInt64 = 1_000_000_000

@Suite struct ComplaintLimiterTests {
    /// A burst of 20, then 2 a second; what was held back is counted before the next one
    /// shown, and at the end.
    @Test func aBurstThenTwoASecondWithTheRestCounted() {
        var limiter = ComplaintLimiter()
        var shown: [String] = []
        for index in 0..<1000 { shown += limiter.lines(for: "bad \(index)", at: 0) }
        #expect(shown == (0..<20).map { "bad \($0)" })
        #expect(limiter.suppressed == 980)
        #expect(limiter.lines(for: "later", at: second / 2) == ["980 more complaints suppressed", "later"])
        #expect(limiter.lines(for: "too soon", at: second / 2) == [])
        #expect(limiter.heldBack() == "1 more complaint suppressed")
        #expect(limiter.heldBack() == nil)
        // Ten idle seconds fill the bucket again, up to the burst.
        var again: [String] = []
        for index in 0..<100 { again += limiter.lines(for: "\(index)", at: 11 * second) }
        #expect(again.count == 20)
    }

    /// A clock that goes back is no reason to show more.
    @Test func aClockGoingBackAddsNothing() {
        var limiter = ComplaintLimiter(burst: 1, perSecond: 1)
        #expect(limiter.lines(for: "a", at: 10 * second) == ["a"])
        #expect(limiter.lines(for: "b", at: 5 * second) == [])
        #expect(limiter.lines(for: "c", at: 10 * second) == [])
        #expect(limiter.lines(for: "d", at: 11 * second) == ["2 more complaints suppressed", "d"])
    }
}
