import GaugeProtocol
import GaugeTranslators
import Testing

/// OSC 9;4 in a command's terminal output (`gaugectl run`): the bytes passed on and the
/// events taken, whole or split anywhere, and the bar they make.
@Suite struct TerminalProgressTests {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Whole, byte by byte, and in pieces of 3: the same output and items.
    static func filtered(_ input: [UInt8]) -> (output: [UInt8], items: [TerminalProgressFilter.Item]) {
        var results: [(output: [UInt8], items: [TerminalProgressFilter.Item])] = []
        for size in [input.count, 1, 3] where size > 0 {
            var filter = TerminalProgressFilter()
            var output: [UInt8] = []
            var items: [TerminalProgressFilter.Item] = []
            var start = 0
            while start < input.count {
                let piece = filter.consume(input[start..<min(start + size, input.count)])
                output += piece.output
                items += piece.items
                start += size
            }
            let end = filter.finish()
            results.append((output + end.output, items + end.items))
        }
        #expect(results.allSatisfy { $0.output == results[0].output && $0.items == results[0].items }, "split reads differ")
        return results[0]
    }

    @Test func progressSequencesAreTakenOutOfTheOutputEndedByBELOrST() {
        let input = Self.bytes("one\u{1B}]9;4;1;30\u{07}two\u{1B}]9;4;3\u{1B}\\three\u{1B}]9;4;4;55\u{07}\u{1B}]9;4;2\u{07}\u{1B}]9;4;0\u{07}\u{1B}]9;4;1;250\u{07}")
        let (output, items) = Self.filtered(input)
        #expect(output == Self.bytes("onetwothree"))
        #expect(items == [
            .progress(.value(30)), .progress(.indeterminate), .progress(.paused(55)), .progress(.error(nil)), .progress(.clear),
            .progress(.value(100)),
        ])
    }

    @Test func otherEscapeSequencesPassThroughWhole() {
        // Colours (CSI), a window title (OSC 0), a link (OSC 8), OSC 9's notification form,
        // and an ESC ] 9 ; 4 look-alike that turns out to be OSC 94.
        let text = "\u{1B}[1;31mred\u{1B}[0m\u{1B}]0;title\u{07}\u{1B}]8;;http://x\u{1B}\\link\u{1B}]8;;\u{1B}\\"
            + "\u{1B}]9;Done\u{07}\u{1B}]94;x\u{07}\u{1B}\u{1B}]9;4;1;5\u{07}end"
        let (output, items) = Self.filtered(Self.bytes(text))
        #expect(output == Self.bytes(text.replacingAll("\u{1B}]9;4;1;5\u{07}", with: "")))
        #expect(items == [.progress(.value(5))])
    }

    @Test func malformedSequencesAreDroppedWithAComplaintAndOverlongOnesPassThrough() {
        let (output, items) = Self.filtered(Self.bytes("a\u{1B}]9;4;7;10\u{07}b\u{1B}]9;4;1;x\u{07}c\u{1B}]9;4;1;1\u{1B}[0md"))
        #expect(output == Self.bytes("abc\u{1B}[0md"))
        #expect(items.count == 3 && items.allSatisfy { if case .problem = $0 { true } else { false } }, "\(items)")

        let long = "\u{1B}]9;4;1;" + String(repeating: "9", count: 40) + "\n"
        let passed = Self.filtered(Self.bytes(long + "after"))
        #expect(passed.output == Self.bytes(long + "after"), "not a progress sequence: passed on")
        #expect(passed.items.count == 1)

        let cut = Self.filtered(Self.bytes("x\u{1B}]9;4;1;4"))
        #expect(cut.output == Self.bytes("x\u{1B}]9;4;1;4"), "the output's end inside one: passed on")
        #expect(cut.items.count == 1)
    }

    @Test func theBarRisesHoldsAndEndsWithTheCommand() {
        var translator = TerminalProgressTranslator(name: "sysupdate", settings: HonestBar.Settings(stallSeconds: nil, creepHalfSeconds: nil))
        var sent = translator.start(message: nil, at: 0)
        #expect(sent == [.progress(0, message: nil), .state(.running, message: "Running sysupdate")])
        #expect(translator.requests(for: .value(40), at: 1) == [.progress(40, message: nil)])
        // The next operation counts from 0: the bar holds.
        #expect(translator.requests(for: .value(10), at: 2) == [])
        #expect(translator.requests(for: .clear, at: 3) == [])
        #expect(translator.requests(for: .indeterminate, at: 4) == [.mode(.indeterminate)])
        #expect(translator.requests(for: .value(60), at: 5) == [.mode(.determinate), .progress(60, message: nil)])
        sent = translator.requests(for: .error(nil), at: 6)
        #expect(sent == [.state(.failure, message: "sysupdate reports an error")])
        #expect(translator.requests(for: .value(70), at: 7) == [.state(.running, message: "Running sysupdate"), .progress(70, message: nil)])
        #expect(translator.requests(for: .paused(nil), at: 8) == [.message("sysupdate paused")])
        #expect(translator.finish(failure: nil) == [.state(.success, message: "Done")])

        var failing = TerminalProgressTranslator(name: "dnf5")
        _ = failing.start(message: "Upgrading", at: 0)
        #expect(failing.finish(failure: "dnf5 failed (exit status 1)") == [.state(.failure, message: "dnf5 failed (exit status 1)")])
    }
}

extension String {
    /// Every occurrence of `target` replaced (without Foundation).
    fileprivate func replacingAll(_ target: String, with replacement: String) -> String {
        var out = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: target) {
            out += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return out + rest
    }
}
