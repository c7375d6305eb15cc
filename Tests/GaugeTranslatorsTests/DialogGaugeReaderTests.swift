import GaugeProtocol
import GaugeTranslators
import Testing

@Suite struct DialogGaugeReaderTests {
    private func read(_ text: String, chunked: Bool = false) -> [DialogGaugeReader.Event] {
        var reader = DialogGaugeReader()
        var events: [DialogGaugeReader.Event] = []
        if chunked {
            for byte in text.utf8 { events += reader.consume([byte]) }
        } else {
            events += reader.consume(Array(text.utf8))
        }
        return events + reader.finish()
    }

    private func requests(_ text: String) -> [Request] {
        read(text).compactMap { if case .request(let request) = $0 { request } else { nil } }
    }

    @Test func numbersMoveTheBar() {
        #expect(requests("0\n10\n 42 \n99.5\r\n100\n") == [0, 10, 42, 99.5, 100].map { .progress($0, message: nil) })
    }

    @Test func outOfRangeNumbersAreClamped() {
        #expect(requests("150\n-5\n") == [.progress(100, message: nil), .progress(0, message: nil)])
    }

    @Test func blockSetsNumberAndText() {
        let stream = "XXX\n25\nCopying files\nto /target\nXXX\n50\nXXX\n75\nXXX\n"
        #expect(requests(stream) == [
            .progress(25, message: "Copying files to /target"),
            .progress(50, message: nil),
            .progress(75, message: nil), .message(""),
        ])
    }

    @Test func blockWithoutANumberSetsTextOnly() {
        #expect(requests("XXX\nJust text\nXXX\n") == [.message("Just text")])
    }

    @Test func literalBackslashNIsALineBreak() {
        #expect(requests("XXX\n10\nline one\\nline two\nXXX\n") == [.progress(10, message: "line one\u{2028}line two")])
        // Blanks stay in the message; the screen drops them at the ends of each line.
        #expect(requests("XXX\n10\none \\n  two \\n three\nXXX\n") == [.progress(10, message: "one \u{2028}  two \u{2028} three")])
        #expect(requests("XXX\n10\na backslash \\\\ stays, \\t too\nXXX\n") == [.progress(10, message: "a backslash \\\\ stays, \\t too")])
    }

    @Test func byteByByteGivesTheSameEvents() {
        let stream = "5\nXXX\n60\nGrüße 日本語\nXXX\n70"
        #expect(read(stream, chunked: true) == read(stream))
        #expect(requests(stream).last == .progress(70, message: nil))
    }

    @Test func unterminatedBlockIsAppliedAtEOF() {
        #expect(requests("XXX\n80\nAlmost") == [.progress(80, message: "Almost")])
        #expect(requests("XXX\n") == [])
    }

    @Test func otherLinesAreWarnedAboutAndIgnored() {
        let events = read("hello\n\n  \n4x\n12\n")
        #expect(events.count == 3)
        #expect(events.last == .request(.progress(12, message: nil)))
        guard case .warning(let text) = events[0] else {
            Issue.record("expected a warning first")
            return
        }
        #expect(text.hasPrefix("line 1: 'hello'"))
    }

    @Test func overlongLineIsDroppedWithAWarning() {
        var reader = DialogGaugeReader(maxLineBytes: 16)
        var events = reader.consume(Array(String(repeating: "9", count: 40).utf8))
        events += reader.consume(Array("\n33\n".utf8))
        #expect(events.count == 2)
        #expect(events.last == .request(.progress(33, message: nil)))
    }

    /// Found by fuzzing: a block kept every line until its closing `XXX`, so a script
    /// that never closes one grew `gaugectl gauge` without bound.
    @Test func aBlockThatNeverClosesHoldsOnlyWhatAMessageCanShow() {
        var reader = DialogGaugeReader()
        #expect(reader.consume(Array("XXX\n40\n".utf8)).isEmpty)
        let line = "0123456789 abcdefghi"
        var most = 0
        for _ in 0..<20_000 {
            #expect(reader.consume(Array((line + "\n").utf8)).isEmpty)
            most = max(most, reader.pendingByteCount)
        }
        #expect(most < 3 * Limits.maxLineBytes + 4 * CompatText.maxTextBytes, "held \(most) bytes for 420 000 sent")
        let joined = Array(repeating: line, count: 400).joined(separator: " ")
        let expected = String(joined.prefix(CompatText.maxTextBytes))
        #expect(reader.finish() == [.request(.progress(40, message: expected))])
    }

    @Test func blanksAroundALongBlocksTextAreTrimmedAsInAShortOne() {
        let blanks = String(repeating: "  \n", count: 3000)
        #expect(requests("XXX\n5\n" + blanks + "text\n" + blanks + "XXX\n") == [.progress(5, message: "text")])
        // Text past what a message shows, blank lines, then more text: the blanks are
        // inside the message, and the message is as long as it can be.
        let long = String(repeating: "y", count: CompatText.maxTextBytes - 2)
        let message = requests("XXX\n" + long + "\n" + blanks + "z\nXXX\n")
        #expect(message == [.message(long + String(repeating: " ", count: 2))])
        #expect(requests("XXX\n" + long + "\n" + blanks + "XXX\n") == [.message(long)])
    }

    @Test func everyRequestIsAValidLine() {
        let text = String(repeating: "ü\u{1B}", count: 3000)
        for request in requests("XXX\n1\n\(text)\nXXX\n") {
            #expect(Request.parse(request.encoded) == .success(request))
        }
    }
}
