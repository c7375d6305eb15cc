import GaugeProtocol
import Testing

@Suite struct ReplyTests {
    @Test func encodesTheThreeForms() {
        #expect(Reply.ok(nil).encoded == "ok\n")
        #expect(Reply.ok("").encoded == "ok\n")
        #expect(Reply.ok("pong").encoded == "ok pong\n")
        #expect(Reply.err(ProtocolError(.range, "progress value -1 is outside 0...100")).encoded
            == "err range progress value -1 is outside 0...100\n")
        #expect(Reply.err(ProtocolError(.io, "")).encoded == "err io\n")
    }

    @Test(arguments: [
        "line\nbreak", "carriage\rreturn", "crlf\r\n", "\n", "nul\u{0}byte", "esc\u{1B}[0m",
        "del\u{7F}", "nel\u{85}", "many\n\n\nlines\n",
    ])
    func neverContainsAnInnerLineBreak(text: String) {
        for reply in [Reply.ok(text), .err(ProtocolError(.syntax, text))] {
            let line = reply.encoded
            #expect(line.hasSuffix("\n"))
            let body = line.dropLast()
            #expect(!body.unicodeScalars.contains { $0 == "\n" || $0 == "\r" })
            #expect(line.utf8.filter { $0 == UInt8(ascii: "\n") }.count == 1)
            #expect(Reply.parse(line) != nil)
        }
    }

    @Test(arguments: [
        Reply.ok(nil), .ok("pong"), .ok("{\"target\":42}"), .ok("  spaced  "), .ok("日本語 🎉"),
        .err(ProtocolError(.syntax, "empty line")),
        .err(ProtocolError(.unknown, "unknown command 'x'")),
        .err(ProtocolError(.toolong, "line longer than 4096 bytes")),
        .err(ProtocolError(.denied, "")),
    ] + ErrorCode.allCases.map { Reply.err(ProtocolError($0, "message for \($0)")) })
    func roundTrips(reply: Reply) {
        #expect(Reply.parse(reply.encoded) == reply)
    }

    @Test func parsesLinesWithoutOrWithCRLF() {
        #expect(Reply.parse("ok") == .ok(nil))
        #expect(Reply.parse("ok\r\n") == .ok(nil))
        #expect(Reply.parse("ok pong\r\n") == .ok("pong"))
        #expect(Reply.parse("err state not now\r\n") == .err(ProtocolError(.state, "not now")))
        #expect(Reply.parse("ok \u{301}x") == .ok("\u{301}x"))
    }

    @Test(arguments: ["", "OK", "okay", "err", "err ", "err bogus message", "error syntax x", " ok", "hello"])
    func refusesWhatIsNotAReply(line: String) {
        #expect(Reply.parse(line) == nil)
    }
}
