/// Complaints about input (a bad line, a skipped message) rate-limited with a token
/// bucket, as the daemon's log is (`ThrottledLog`): a burst of `burst`, then `perSecond`
/// a second. A complaint over the limit is counted, not shown; the next one shown is
/// preceded by how many were held back. So input that is all garbage costs a few lines a
/// second on stderr, not one per bad line, and still says so. Time is given by the caller
/// in nanoseconds on any monotonic clock.
package struct ComplaintLimiter: Sendable {
    private let burst: Double
    private let perSecond: Double
    private var tokens: Double
    private var updated: UInt64?
    /// Complaints held back since the last one shown.
    package private(set) var suppressed = 0

    package init(burst: Int = 20, perSecond: Double = 2) {
        self.burst = Double(max(1, burst))
        self.perSecond = max(0, perSecond)
        tokens = self.burst
    }

    /// The lines to show for `complaint` at `now`: none while over the limit, else the
    /// complaint, after a count of those held back if any were.
    package mutating func lines(for complaint: String, at now: UInt64) -> [String] {
        if let updated, now > updated {
            tokens = min(burst, tokens + Double(now - updated) / 1e9 * perSecond)
        }
        updated = max(updated ?? now, now)
        guard tokens >= 1 else {
            suppressed += 1
            return []
        }
        tokens -= 1
        var lines: [String] = []
        if let held = heldBack() { lines.append(held) }
        lines.append(complaint)
        return lines
    }

    /// The count of complaints held back since the last one shown, as a line (nil when
    /// none were), for the end of the input; counting starts again.
    package mutating func heldBack() -> String? {
        guard suppressed > 0 else { return nil }
        defer { suppressed = 0 }
        return suppressed == 1 ? "1 more complaint suppressed" : "\(suppressed) more complaints suppressed"
    }
}
