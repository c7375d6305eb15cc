import GaugeProtocol
import Testing

@testable import GaugeDaemon

@Suite struct PlymouthQuestionsTests {
    private func type(_ questions: inout PlymouthQuestions, _ keys: [UInt8]) -> [PlymouthQuestions.Reply] {
        keys.withUnsafeBytes { questions.type($0) }
    }

    private func type(_ questions: inout PlymouthQuestions, _ keys: String) -> [PlymouthQuestions.Reply] {
        type(&questions, Array(keys.utf8))
    }

    @Test func answersAreWrittenAsPlymouthdWritesThem() {
        #expect(PlymouthReply.answer(Array("hunter2".utf8)) == [0x02, 7, 0, 0, 0] + Array("hunter2".utf8))
        #expect(PlymouthReply.answer([]) == [0x02, 0, 0, 0, 0])
        #expect(PlymouthReply.answer([UInt8](repeating: 0x61, count: 300)).prefix(5) == [0x02, 0x2C, 0x01, 0, 0])
        #expect(PlymouthReply.noAnswer == [0x05])
    }

    @Test func enterAnswersWhatWasTypedAndClearsIt() {
        var questions = PlymouthQuestions()
        questions.ask(.password, prompt: "Disk", owner: 7)
        #expect(type(&questions, "sec").isEmpty)
        #expect(questions.typedCount == 3)
        #expect(questions.echoedText == nil, "a password is never echoed")
        #expect(type(&questions, "ret\r") == [.init(owner: 7, bytes: PlymouthReply.answer(Array("secret".utf8)))])
        #expect(questions.current == nil && questions.typedCount == 0 && !questions.wantsKeys)
    }

    @Test func editingKeys() {
        var questions = PlymouthQuestions()
        questions.ask(.question, prompt: "Name?", owner: 1)
        _ = type(&questions, "abc\u{7F}d")
        #expect(questions.echoedText == "abd")
        _ = type(&questions, [0x15])
        #expect(questions.echoedText == "" && questions.typedCount == 0)
        // A multi-byte character counts once and Backspace removes it whole.
        _ = type(&questions, "xé€")
        #expect(questions.typedCount == 3)
        _ = type(&questions, [0x08])
        #expect(questions.echoedText == "xé")
        // Arrow keys and F1 are ignored, control characters are not typed.
        _ = type(&questions, [0x1B, 0x5B, 0x41, 0x1B, 0x5B, 0x5B, 0x41, 0x1B, 0x4F, 0x50, 0x01, 0x09])
        #expect(questions.echoedText == "xé")
        #expect(type(&questions, "\n") == [.init(owner: 1, bytes: PlymouthReply.answer(Array("xé".utf8)))])
    }

    @Test(arguments: [[UInt8]([0x1B]), [0x03], [0x04]])
    func escapeCancelsWithNoAnswer(_ key: [UInt8]) {
        var questions = PlymouthQuestions()
        questions.ask(.password, prompt: "", owner: 3)
        _ = type(&questions, "abc")
        #expect(type(&questions, key) == [.init(owner: 3, bytes: [0x05])])
        #expect(questions.typedCount == 0 && !questions.wantsKeys)
    }

    @Test func escapeWithoutAQuestionTogglesTheDetails() {
        var questions = PlymouthQuestions()
        #expect(!questions.detailsShown)
        #expect(type(&questions, [0x1B]).isEmpty)
        #expect(questions.detailsShown)
        // An arrow key is no Escape; a watched key still answers its watch.
        questions.watch(keys: nil, owner: 4)
        #expect(type(&questions, [0x1B, 0x5B, 0x41]).isEmpty && questions.detailsShown)
        #expect(type(&questions, [0x1B]).isEmpty && !questions.detailsShown, "Escape is never a keystroke")
        #expect(type(&questions, "k") == [.init(owner: 4, bytes: PlymouthReply.answer([0x6B]))])
        // While a question waits, Escape cancels it and leaves the details as they were.
        questions.ask(.password, prompt: "", owner: 5)
        #expect(type(&questions, [0x1B]) == [.init(owner: 5, bytes: [0x05])])
        #expect(!questions.detailsShown)
    }

    @Test func theMessageHistoryIsBounded() {
        var history = MessageHistory()
        #expect(history.append(" Starting\u{2028}disks ") && history.lines == ["Starting disks"])
        #expect(!history.append("Starting disks") && !history.append("  "), "a repeat or a blank adds nothing")
        for n in 0..<500 { _ = history.append("line \(n) " + String(repeating: "x", count: 1000)) }
        #expect(history.lines.count == MessageHistory.maxLines)
        #expect(history.lines.last?.hasPrefix("line 499 ") == true && history.lines.first?.hasPrefix("line 400 ") == true)
        #expect(history.lines.allSatisfy { $0.unicodeScalars.count <= MessageHistory.maxCharacters })
    }

    /// A description that comes after its step takes the step's line, only the newest.
    @Test func aLateDescriptionReplacesOnlyTheNewestLine() {
        var history = MessageHistory()
        _ = history.append("a.service")
        _ = history.append("b.service")
        let older = history.replaceLast("a.service", with: "A")
        #expect(!older && history.lines == ["a.service", "b.service"], "an older line stays")
        let newest = history.replaceLast("b.service", with: "B")
        #expect(newest && history.lines == ["a.service", "B"])
    }

    /// The table a client fills is bounded in units, name and text, and keeps no control
    /// character.
    @Test func stepDescriptionsAreBoundedAndClean() {
        var table = StepDescriptions()
        let set = table.set("a.service", to: " Journal\u{2028}Service\u{1B}\t")
        #expect(set == "Journal Service")
        #expect(table.text(for: "a.service") == "Journal Service" && table.text(for: "b.service") == nil)
        let again = table.set("a.service", to: "Again")
        #expect(again == "Again" && table.count == 1, "a unit once, the newest text")
        let long = table.set(String(repeating: "x", count: StepDescriptions.maxNameBytes + 1), to: "X")
        let blank = table.set("b.service", to: " \u{2029} ")
        #expect(long == nil && blank == nil && table.count == 1, "a name too long or a blank text is not kept")
        for n in 0..<2000 { _ = table.set("unit-\(n).service", to: String(repeating: "d", count: 5000)) }
        #expect(table.count == StepDescriptions.maxUnits)
        #expect(table.text(for: "unit-1999.service")?.unicodeScalars.count == MessageHistory.maxCharacters)
        #expect(table.text(for: "unit-0.service") == nil && table.text(for: "a.service") == nil, "the oldest forgotten")
    }

    @Test func questionsQueueInOrderAndAWithdrawnOneDisappears() {
        var questions = PlymouthQuestions()
        questions.ask(.password, prompt: "first", owner: 1)
        questions.ask(.question, prompt: "second", owner: 2)
        questions.ask(.password, prompt: "third", owner: 3)
        _ = type(&questions, "typed")
        questions.withdraw(owner: 1)
        #expect(questions.current?.prompt == "second")
        #expect(questions.typedCount == 0, "what was typed for a withdrawn question is gone")
        questions.withdraw(owner: 3)
        #expect(type(&questions, "y\r") == [.init(owner: 2, bytes: PlymouthReply.answer([0x79]))])
        #expect(!questions.wantsKeys)
    }

    @Test func typedBytesStopAtTheLimit() {
        var questions = PlymouthQuestions()
        questions.ask(.password, prompt: "", owner: 1)
        _ = type(&questions, String(repeating: "a", count: 400))
        #expect(questions.typedCount == PlymouthQuestions.maxEntryBytes)
    }

    @Test func keystrokesGoToTheOldestMatchingWatch() {
        var questions = PlymouthQuestions()
        questions.watch(keys: Array("yn".utf8), owner: 1)
        questions.watch(keys: nil, owner: 2)
        questions.watch(keys: [0x03], owner: 3)
        // Enter, Backspace and Escape are no keystrokes.
        #expect(type(&questions, [0x0D, 0x7F, 0x1B]).isEmpty)
        #expect(type(&questions, "n") == [.init(owner: 1, bytes: PlymouthReply.answer([0x6E]))])
        #expect(type(&questions, "n") == [.init(owner: 2, bytes: PlymouthReply.answer([0x6E]))])
        #expect(type(&questions, "x").isEmpty, "a key no watch wants is dropped")
        #expect(type(&questions, [0x03]) == [.init(owner: 3, bytes: PlymouthReply.answer([0x03]))])
        #expect(!questions.wantsKeys)
    }

    @Test func aQuestionTakesKeysBeforeWatches() {
        var questions = PlymouthQuestions()
        questions.watch(keys: nil, owner: 1)
        questions.ask(.question, prompt: "?", owner: 2)
        #expect(type(&questions, "a\r") == [.init(owner: 2, bytes: PlymouthReply.answer([0x61]))])
        #expect(type(&questions, "b") == [.init(owner: 1, bytes: PlymouthReply.answer([0x62]))])
    }

    @Test func ignoreEndsTheWatchForTheSameKeys() {
        var questions = PlymouthQuestions()
        questions.watch(keys: Array("yn".utf8), owner: 1)
        questions.watch(keys: nil, owner: 2)
        #expect(questions.ignore(keys: Array("c".utf8)).isEmpty)
        #expect(questions.ignore(keys: nil) == [.init(owner: 2, bytes: [0x05])])
        #expect(questions.ignore(keys: Array("yn".utf8)) == [.init(owner: 1, bytes: [0x05])])
        #expect(!questions.wantsKeys)
    }

    @Test func cancelAllAnswersEveryone() {
        var questions = PlymouthQuestions()
        questions.ask(.password, prompt: "", owner: 1)
        questions.watch(keys: nil, owner: 2)
        #expect(questions.cancelAll().map(\.owner).sorted() == [1, 2])
        #expect(!questions.wantsKeys)
    }

    @Test func sessionAsksOnlyWhenEnabled() {
        var messages = PlymouthMessages()
        let asking = PlymouthSession(asks: true)
        func answer(_ session: PlymouthSession, _ bytes: [UInt8]) -> CompatOutput {
            var decoder = PlymouthFrameDecoder()
            bytes.withUnsafeBytes { decoder.append($0) }
            return session.answer(decoder.next()!, messages: &messages)
        }
        #expect(answer(asking, plymouthRequest("*", "Disk password")) == CompatOutput(ask: .password(prompt: "Disk password")))
        #expect(answer(asking, plymouthRequest("*")) == CompatOutput(ask: .password(prompt: "")))
        #expect(answer(asking, plymouthRequest("W", "Continue?")) == CompatOutput(ask: .question(prompt: "Continue?")))
        #expect(answer(asking, plymouthRequest("K", "yn")) == CompatOutput(ask: .watchKeystroke(keys: Array("yn".utf8))))
        #expect(answer(asking, plymouthRequest("K")) == CompatOutput(ask: .watchKeystroke(keys: nil)))
        #expect(answer(asking, plymouthRequest("L", "yn")) == CompatOutput(reply: [0x06], ask: .ignoreKeystroke(keys: Array("yn".utf8))))
        #expect(answer(asking, plymouthRequest("c")) == CompatOutput(reply: [0x05]))
        // Only root may ask at the screen: a passphrase typed there is root's; and every
        // watch being root's, only root may end one.
        for request in [plymouthRequest("*"), plymouthRequest("W", "?"), plymouthRequest("K"), plymouthRequest("L", "yn")] {
            #expect(answer(PlymouthSession(rootPeer: false, asks: true), request).reply == [0x15])
        }
        // Unauthorized peers are still refused.
        #expect(answer(PlymouthSession(authorized: false, asks: true), plymouthRequest("*")).reply == [0x15])

        let refusing = PlymouthSession()
        #expect(answer(refusing, plymouthRequest("*", "Disk")).reply == [0x15])
        #expect(answer(refusing, plymouthRequest("K")).reply == [0x15])
        #expect(answer(refusing, plymouthRequest("L")) == CompatOutput(reply: [0x06]))
    }

    /// Keys nothing took are held for a second: a question asked meanwhile, by a client
    /// that connected before they came, takes them (an Enter among them answers it);
    /// keys from before its asker connected, or older than a second, are no answer.
    @Test func keysThatBeatTheQuestionAreKeptForIt() {
        var questions = PlymouthQuestions()
        func type(_ keys: String, at time: Double) -> [PlymouthQuestions.Reply] {
            Array(keys.utf8).withUnsafeBytes { questions.type($0, at: time) }
        }
        #expect(type("early", at: 10.0).isEmpty)
        #expect(type("pass", at: 10.5).isEmpty)
        #expect(questions.heldCount == 9 && questions.heldExpiry == 11.0)
        // The asker connected at 10.2: "early" is not its.
        #expect(questions.ask(.password, prompt: "", owner: 1, since: 10.2, at: 10.6).isEmpty)
        #expect(questions.typedCount == 4 && questions.heldCount == 0)
        #expect(type("\r", at: 10.7) == [.init(owner: 1, bytes: PlymouthReply.answer(Array("pass".utf8)))])

        // Typed whole, Enter included, before the question was read: answered at once.
        #expect(type("pw\r", at: 20.0).isEmpty)
        #expect(questions.ask(.password, prompt: "", owner: 2, since: 20.0, at: 20.0)
                == [.init(owner: 2, bytes: PlymouthReply.answer(Array("pw".utf8)))])

        // Older than heldKeyLife: dropped.
        #expect(type("stale", at: 30.0).isEmpty)
        questions.expireHeld(at: 31.5)
        #expect(questions.heldCount == 0 && questions.heldExpiry == nil)
        #expect(questions.ask(.password, prompt: "", owner: 3, since: 29.0, at: 31.5).isEmpty)
        #expect(questions.typedCount == 0)
        _ = questions.cancelAll()

        // Escape with nothing asked (the details view) drops what is held; a watch takes
        // its key, which is then not held.
        #expect(type("ab\u{1B}", at: 40.0).isEmpty && questions.heldCount == 0)
        questions.watch(keys: Array("y".utf8), owner: 4)
        #expect(type("y", at: 41.0) == [.init(owner: 4, bytes: PlymouthReply.answer(Array("y".utf8)))])
        #expect(questions.heldCount == 0)
        // Without a time of connection (the splash was not on screen), nothing is taken.
        #expect(type("xyz", at: 42.0).isEmpty)
        #expect(questions.ask(.question, prompt: "", owner: 5, since: nil, at: 42.1).isEmpty)
        #expect(questions.echoedText == "")
    }

    @Test func askOptions() {
        guard case .run(let options) = DaemonOptions.parse(["--plymouth-compat", "--ask", "--ask-tty", "/dev/tty3"]) else {
            Issue.record("--ask with --plymouth-compat is refused")
            return
        }
        #expect(options.ask && options.askTTY == "/dev/tty3" && options.plymouthPIDFile == "/run/plymouth/pid")
        #expect(!options.askFromInputDevices && options.keymapPath == nil)
        let input = DaemonOptions.parse(["--plymouth-compat", "--ask", "--ask-tty", "input", "--keymap", "/etc/kb.bmap"])
        guard case .run(let fromInput) = input else {
            Issue.record("--ask-tty input is refused: \(input)")
            return
        }
        #expect(fromInput.askFromInputDevices && fromInput.askTTY == nil && fromInput.keymapPath == "/etc/kb.bmap")
        #expect(DaemonOptions.parse(["--keymap", "kb.bmap"]) == .error("--keymap takes an absolute file path"))
        #expect(DaemonOptions.parse(["--ask-tty", "tty3"]) == .error("--ask-tty takes an absolute tty path or input"))
        #expect(!DaemonOptions().ask, "off by default: questions are refused so the console asks")
        guard case .error = DaemonOptions.parse(["--ask"]) else {
            Issue.record("--ask without Plymouth's socket is accepted")
            return
        }
        guard case .run(let none) = DaemonOptions.parse(["--plymouth-compat", "--ask", "--plymouth-pid-file", "none"]) else {
            Issue.record("--plymouth-pid-file none is refused")
            return
        }
        #expect(none.plymouthPIDFile == nil)
    }

    /// However a boot screen is started (initramfs script, dracut's systemd initrd, the
    /// unit), `gauge.ask=1` on the kernel command line is what turns asking on.
    @Test func theKernelCommandLineTurnsOnAskingForABootScreenOnly() {
        let cmdline = "BOOT_IMAGE=/vmlinuz root=/dev/vda1 quiet gauge.ask=1\n"
        func asks(_ arguments: [String], _ line: String) -> Bool? {
            guard case .run(let options) = DaemonOptions.parse(arguments, kernelCommandLine: line) else { return nil }
            return options.ask
        }
        #expect(asks(["--boot", "--plymouth-compat"], cmdline) == true)
        #expect(asks(["--boot", "--plymouth-compat"], "quiet gauge.ask=1") == true, "the last word, without a newline")
        #expect(asks(["--boot", "--plymouth-compat"], "quiet gauge.ask=0\n") == false)
        #expect(asks(["--boot", "--plymouth-compat"], "quiet xgauge.ask=1 gauge.ask=10\n") == false, "whole words only")
        #expect(asks(["--plymouth-compat"], cmdline) == false, "not a boot screen: only --ask asks")
        #expect(asks(["--boot"], cmdline) == false, "no Plymouth socket for the questions to come over")
    }
}
