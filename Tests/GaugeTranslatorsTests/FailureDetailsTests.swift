import GaugeProtocol
import GaugeTranslators
import Testing

/// The detail lines `gaugectl failure --details` makes of a producer's log bytes.
@Suite struct FailureDetailsTests {
    private func lines(_ bytes: [UInt8]) -> [String] {
        var details = FailureDetails()
        details.consume(bytes)
        details.finish()
        return details.lines
    }

    @Test(arguments: [
        (Array("plain\n".utf8), ["plain"]),
        ([0xC3, 0x28, 0x0A], ["\u{FFFD}("]),  // not UTF-8
        (Array("\u{1B}[1;31mred\u{1B}[0m\n".utf8), ["red"]),  // CSI
        (Array("\u{1B}]8;;http://x\u{1B}\\link\u{1B}]8;;\u{07}\n".utf8), ["link"]),  // OSC ended by ST and BEL
        (Array("\u{1B}(Bx\u{1B}7y\n".utf8), ["xy"]),  // charset designation, save cursor
        (Array("\u{9B}31mc1\n".utf8), ["c1"]),  // the C1 CSI, as UTF-8
        (Array("\u{1B}Pq#0\u{1B}\\dcs\n".utf8), ["dcs"]),  // DCS (sixel) up to ST
        (Array("bell\u{07} nul\u{00} del\u{7F}\n".utf8), ["bell nul del"]),
        (Array("a\tb\tc\n".utf8), ["a       b       c"]),
        (Array("10%\r50%\r100%\n".utf8), ["100%"]),
        (Array("crlf\r\n".utf8), [""]),
        (Array("one\n\nthree".utf8), ["one", "", "three"]),
    ])
    func cleans(bytes: [UInt8], expected: [String]) {
        #expect(lines(bytes) == expected)
        for line in lines(bytes) { #expect(Request.controlCharacterError(in: line) == nil) }
    }

    /// A line longer than a request can carry is cut between characters; a log of any
    /// length keeps only the newest lines, and counts the rest.
    @Test func boundsLinesAndBytes() {
        let long = lines(Array(String(repeating: "é", count: 10_000).utf8))
        #expect(long.count == 1 && long[0].utf8.count <= Limits.maxFailureTextBytes && long[0].utf8.count >= Limits.maxFailureTextBytes - 1)
        var details = FailureDetails()
        for n in 1...1000 { details.consume(Array("line \(n)\n".utf8)) }
        details.finish()
        #expect(details.lines.count == Limits.maxFailureLines && details.dropped == 1000 - Limits.maxFailureLines)
        #expect(details.lines.last == "line 1000")
        // A line of 100 KB of escape sequences is held within its bound, and shows as nothing.
        let noisy = lines(Array(String(repeating: "\u{1B}[0m", count: 25_000).utf8) + Array("end\n".utf8))
        #expect(noisy == [""])
    }
}
