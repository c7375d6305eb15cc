import GaugeProtocol
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

    @Test func literalBackslashNBecomesASpace() {
        #expect(requests("XXX\n10\nline one\\nline two\nXXX\n") == [.progress(10, message: "line one line two")])
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

    @Test func everyRequestIsAValidLine() {
        let text = String(repeating: "ü\u{1B}", count: 3000)
        for request in requests("XXX\n1\n\(text)\nXXX\n") {
            #expect(Request.parse(request.encoded) == .success(request))
        }
    }
}
