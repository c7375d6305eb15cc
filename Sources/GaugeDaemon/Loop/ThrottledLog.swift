import GaugeSystem

/// Log lines about what peers send (bad input, refused connections), rate-limited per
/// source with a token bucket: a burst of `burst` lines, then `perSecond` lines a second.
/// Lines over the limit are counted, not written; the next line the source may write is
/// preceded by `<source>: N lines suppressed`. So a flood of bad input costs a few log
/// lines a second, not millions, and still shows in the log.
package final class ThrottledLog {
    private struct Bucket {
        var tokens: Double
        var updated: Double
        var suppressed = 0
    }

    private let log: Log
    private let burst: Double
    private let perSecond: Double
    private let clock: () -> Double
    private var buckets: [String: Bucket] = [:]

    package init(log: Log, burst: Int = 20, perSecond: Double = 2, clock: @escaping () -> Double = MonotonicClock.now) {
        self.log = log
        self.burst = Double(max(1, burst))
        self.perSecond = max(0, perSecond)
        self.clock = clock
    }

    /// Logs `<source>: <message>` if the source's bucket has a token.
    package func info(_ source: String, _ message: @autoclosure () -> String) {
        let now = clock()
        var bucket = buckets[source] ?? Bucket(tokens: burst, updated: now)
        bucket.tokens = min(burst, bucket.tokens + (now - bucket.updated) * perSecond)
        bucket.updated = now
        if bucket.tokens >= 1 {
            bucket.tokens -= 1
            if bucket.suppressed > 0 {
                log.info("\(source): \(bucket.suppressed) lines suppressed")
                bucket.suppressed = 0
            }
            log.info("\(source): \(message())")
        } else {
            bucket.suppressed += 1
        }
        buckets[source] = bucket
    }

    /// Lines of `source` held back since it last wrote.
    package func suppressedCount(_ source: String) -> Int { buckets[source]?.suppressed ?? 0 }
}
