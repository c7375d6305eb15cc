import GaugeProtocol
import Testing

private func items(_ framer: inout LineFramer) -> [LineFramer.Item] {
    var out: [LineFramer.Item] = []
    while let item = framer.next() { out.append(item) }
    return out
}

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

@Suite struct LineFramerTests {
    @Test func splitsLinesAndKeepsTheRestPending() {
        var framer = LineFramer()
        framer.append(bytes("ping\nprogress 4"))
        #expect(items(&framer) == [.line("ping")])
        #expect(framer.pendingByteCount == 10)
        framer.append(bytes("2\n"))
        #expect(items(&framer) == [.line("progress 42")])
        #expect(framer.pendingByteCount == 0)
    }

    @Test func acceptsCRLF() {
        var framer = LineFramer()
        framer.append(bytes("ping\r\nmessage hi\r\n"))
        let lines = items(&framer)
        #expect(lines == [.line("ping"), .line("message hi")])
        #expect(lines.allSatisfy { item in
            if case .line(let text) = item { return (try? Request.parse(text).get()) != nil }
            return false
        })
    }

    @Test func linesSplitAcrossManyAppends() {
        let stream = bytes("progress 42 Grüße 日本語 🎉\nmessage hello\nping\n")
        for chunkSize in [1, 2, 3, 5, 7, 64] {
            var framer = LineFramer()
            var got: [LineFramer.Item] = []
            var index = 0
            while index < stream.count {
                let end = min(index + chunkSize, stream.count)
                framer.append(Array(stream[index..<end]))
                got += items(&framer)
                index = end
            }
            #expect(got == [.line("progress 42 Grüße 日本語 🎉"), .line("message hello"), .line("ping")])
        }
    }

    @Test(arguments: [8 * 1024, 1024 * 1024])
    func overlongLineYieldsOneTooLongThenTheNextLineParses(length: Int) throws {
        var framer = LineFramer()
        var got: [LineFramer.Item] = []
        // Deliver the long line in pieces, as a socket would.
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        var sent = 0
        while sent < length {
            let count = min(chunk.count, length - sent)
            framer.append(Array(chunk[0..<count]))
            got += items(&framer)
            sent += count
            #expect(framer.pendingByteCount <= Limits.maxLineBytes)
        }
        framer.append(bytes("\nprogress 42\n"))
        got += items(&framer)
        #expect(got.count == 2)
        guard got.count == 2 else { return }
        if case .error(let error) = got[0] {
            #expect(error.code == .toolong)
        } else {
            Issue.record("expected toolong, got \(got[0])")
        }
        if case .line(let line) = got[1] {
            #expect(try Request.parse(line).get() == .progress(42, message: nil))
        } else {
            Issue.record("expected a line, got \(got[1])")
        }
    }

    @Test func lineOfExactlyTheLimitIsAccepted() {
        var framer = LineFramer()
        let text = "message " + String(repeating: "x", count: Limits.maxLineBytes - 8)
        framer.append(bytes(text + "\n"))
        #expect(items(&framer) == [.line(text)])
        framer.append(bytes(text + "y\n"))
        guard case .error(let error)? = framer.next() else {
            Issue.record("expected toolong")
            return
        }
        #expect(error.code == .toolong)
    }

    @Test(arguments: [
        [0xFF, 0x0A], [0xC3, 0x28, 0x0A], [0xE2, 0x82, 0x0A], [0xED, 0xA0, 0x80, 0x0A],
        [0xF8, 0x88, 0x80, 0x80, 0x80, 0x0A], [0xC0, 0xAF, 0x0A],
    ] as [[UInt8]])
    func invalidUTF8IsUtf8Error(input: [UInt8]) {
        var framer = LineFramer()
        framer.append(Array("message ".utf8) + input + Array("ping\n".utf8))
        let got = items(&framer)
        #expect(got.count == 2)
        if case .error(let error)? = got.first { #expect(error.code == .utf8) } else { Issue.record("\(got)") }
        #expect(got.last == .line("ping"))
    }

    @Test func nulByteIsSyntaxError() {
        var framer = LineFramer()
        framer.append(Array("message a".utf8) + [0] + Array("b\nping\n".utf8))
        let got = items(&framer)
        #expect(got.count == 2)
        if case .error(let error)? = got.first { #expect(error.code == .syntax) } else { Issue.record("\(got)") }
        #expect(got.last == .line("ping"))
    }

    @Test func emptyLineIsALineThatFailsToParse() {
        var framer = LineFramer()
        framer.append(bytes("\n"))
        #expect(items(&framer) == [.line("")])
        if case .failure(let error) = Request.parse("") { #expect(error.code == .syntax) }
    }
}
