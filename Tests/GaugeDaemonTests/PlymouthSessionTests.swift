import GaugeProtocol
import Testing

@testable import GaugeDaemon

/// Requests as `ply-boot-client.c` writes them.
func plymouthRequest(_ command: Character, _ argument: [UInt8]? = nil) -> [UInt8] {
    let byte = command.asciiValue!
    guard let argument else { return [byte, 0] }
    return [byte, 0x02, UInt8(argument.count + 1)] + argument + [0]
}

func plymouthRequest(_ command: Character, _ argument: String) -> [UInt8] {
    plymouthRequest(command, Array(argument.utf8))
}

@Suite struct PlymouthSessionTests {
    private let ack = PlymouthSession.ack
    private let nak = PlymouthSession.nak

    private func run(_ bytes: [UInt8], session: PlymouthSession = PlymouthSession()) -> CompatOutput {
        var session = session
        var messages = PlymouthMessages()
        return session.consume(bytes, messages: &messages)
    }

    @Test(arguments: [
        (plymouthRequest("P"), [Request](), true),
        (plymouthRequest("U", "fsck"), [.step("fsck")], true),
        (plymouthRequest("u", "42"), [.progress(42, message: nil)], true),
        (plymouthRequest("u", "100"), [.progress(100, message: nil)], true),
        // An update mode starts its own bar (PlymouthUpdatesTests).
        (plymouthRequest("C", "updates"), [.title("Installing updates"), .progress(0, message: PlymouthUpdates.warning)], true),
        (plymouthRequest("C", "system-upgrade"), [.title("Upgrading the system"), .progress(0, message: PlymouthUpdates.warning)], true),
        (plymouthRequest("C", "firmware-upgrade"), [.title("Updating firmware")], true),
        (plymouthRequest("C", "shutdown"), [.title("Shutting down")], true),
        (plymouthRequest("C", "reboot"), [.title("Restarting")], true),
        (plymouthRequest("C", "boot-up"), [.title("")], true),
        (plymouthRequest("M", "hi"), [.message("hi")], true),
        (plymouthRequest("$"), [.show], true),
        (plymouthRequest("H"), [.hide], true),
        (plymouthRequest("D"), [.deactivate], true),
        (plymouthRequest("r"), [.reactivate], true),
        (plymouthRequest("Q", [0]), [.quit(retain: false)], true),
        (plymouthRequest("Q", [1]), [.quit(retain: true)], true),
        (plymouthRequest("Q", []), [.quit(retain: false)], true),
        (plymouthRequest("A"), [], true),
        (plymouthRequest("a"), [], true),
        (plymouthRequest("S"), [], true),
        (plymouthRequest("R", "/sysroot"), [.newRoot(path: "/sysroot")], true),
        (plymouthRequest("R", "sysroot"), [], false),
        (plymouthRequest("R"), [], false),
        (plymouthRequest("!"), [], true),
        (plymouthRequest("L", "y"), [], true),
        (plymouthRequest("V"), [], false),
        (plymouthRequest("*"), [], false),
        (plymouthRequest("*", "Passphrase for /dev/sda2:"), [], false),
        (plymouthRequest("c"), [], false),
        (plymouthRequest("W", "Continue?"), [], false),
        (plymouthRequest("K"), [], false),
        (plymouthRequest("K", "yn"), [], false),
        (plymouthRequest("Z"), [], false),
    ] as [([UInt8], [Request], Bool)])
    func everyRequestGetsItsAnswer(bytes: [UInt8], requests: [Request], acknowledged: Bool) {
        let output = run(bytes)
        #expect(output.requests == requests)
        #expect(output.reply == [acknowledged ? ack : nak])
    }

    @Test func onlyRefusedQuestionsLendTheConsole() {
        for command in ["*", "c", "W"] {
            #expect(run(plymouthRequest(Character(command))).lendsConsole, "\(command)")
        }
        for command in ["P", "H", "$", "K", "U"] {
            #expect(!run(plymouthRequest(Character(command))).lendsConsole, "\(command)")
        }
        // Asked on the screen (`--ask`), a question lends nothing.
        #expect(!run(plymouthRequest("*"), session: PlymouthSession(asks: true)).lendsConsole)
    }

    @Test func refusalsAndUnknownRequestsAreLogged() {
        #expect(run(plymouthRequest("*")).logs.count == 1)
        #expect(run(plymouthRequest("Z")).logs == ["unknown request 0x5A"])
        #expect(run(plymouthRequest("P")).logs.isEmpty)
    }

    @Test func onlyRootMayMoveTheDaemonIntoANewRoot() {
        let group = PlymouthSession(authorized: true, rootPeer: false)
        let output = run(plymouthRequest("R", "/root"), session: group)
        #expect(output.requests.isEmpty)
        #expect(output.reply == [nak])
        #expect(output.logs.count == 1)
        #expect(run(plymouthRequest("R", "/root")).requests == [.newRoot(path: "/root")])
    }

    @Test func hasActiveVTFollowsTheDaemon() {
        #expect(run(plymouthRequest("V"), session: PlymouthSession(hasActiveVT: true)).reply == [ack])
    }

    @Test func badSystemUpdateValuesAreAcknowledgedButIgnored() {
        for value in ["", "-1", "101", "4x", "42.5", " 42", "1000"] {
            let output = run(plymouthRequest("u", value))
            #expect(output.requests.isEmpty, "\(value)")
            #expect(output.reply == [ack])
            #expect(output.logs.count == 1)
        }
    }

    @Test func unknownModeChangesNothing() {
        let output = run(plymouthRequest("C", "party"))
        #expect(output.requests.isEmpty)
        #expect(output.reply == [ack])
        #expect(output.logs.count == 1)
    }

    @Test func pauseAndUnpauseStopAndRestartTheBootClock() {
        #expect(run(plymouthRequest("A")).pausesProgress == true)
        #expect(run(plymouthRequest("a")).pausesProgress == false)
        #expect(run(plymouthRequest("A") + plymouthRequest("a")).pausesProgress == false, "the last one counts")
        #expect(run(plymouthRequest("P")).pausesProgress == nil)
    }

    @Test func customModeTitles() {
        let titles = PlymouthModeTitles(["updates": "Mise à jour"])
        let output = run(plymouthRequest("C", "updates"), session: PlymouthSession(modeTitles: titles))
        #expect(output.requests == [.title("Mise à jour"), .progress(0, message: PlymouthUpdates.warning)])
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() {
        // What `plymouth ask-for-password` sends: pause-progress, then the password request.
        let output = run(plymouthRequest("A") + plymouthRequest("*") + plymouthRequest("u", "7") + plymouthRequest("P"))
        #expect(output.reply == [ack, nak, ack, ack])
        // The refused question lends the console to the caller's own prompt; nothing is
        // hidden for good.
        #expect(output.requests == [.progress(7, message: nil)])
        #expect(output.lendsConsole)
    }

    @Test func requestsSplitAtEveryByteGiveTheSameResult() {
        let stream = plymouthRequest("M", "Grüße") + plymouthRequest("u", "55") + plymouthRequest("Q", [1])
        var session = PlymouthSession()
        var messages = PlymouthMessages()
        var output = CompatOutput()
        for byte in stream { output.append(session.consume([byte], messages: &messages)) }
        #expect(output.requests == [.message("Grüße"), .progress(55, message: nil), .quit(retain: true)])
        #expect(output.reply == [ack, ack, ack])
        #expect(session.pendingByteCount == 0)
    }

    @Test func partialRequestWaits() {
        var session = PlymouthSession()
        var messages = PlymouthMessages()
        #expect(session.consume([UInt8(ascii: "M"), 0x02, 10, UInt8(ascii: "a")], messages: &messages).isEmpty)
        #expect(session.pendingByteCount == 4)
        let output = session.consume(Array("bcdefghi".utf8) + [0], messages: &messages)
        #expect(output.requests == [.message("abcdefghi")])
    }

    @Test func argumentStopsAtItsFirstNulAndControlCharactersBecomeSpaces() {
        #expect(run([UInt8(ascii: "M"), 0x02, 6] + Array("ab".utf8) + [0] + Array("cd".utf8) + [0]).requests == [.message("ab")])
        #expect(run(plymouthRequest("M", "line1\nline2")).requests == [.message("line1 line2")])
        // A 255-byte argument wraps the length byte to 0 in ply-boot-client: an empty
        // argument, an update with no step to name.
        #expect(run([UInt8(ascii: "U"), 0x02, 0, UInt8(ascii: "P"), 0]).requests == [])
    }

    @Test func unauthorizedClientsGetNakForEverything() {
        let session = PlymouthSession(authorized: false)
        for bytes in [plymouthRequest("P"), plymouthRequest("Q", [0]), plymouthRequest("u", "5")] {
            let output = run(bytes, session: session)
            #expect(output.requests.isEmpty)
            #expect(output.reply == [nak])
            #expect(output.logs.count == 1)
        }
    }

    @Test func hideMessageRemovesThatMessageOnly() {
        var messages = PlymouthMessages()
        var first = PlymouthSession()
        var second = PlymouthSession()
        #expect(first.consume(plymouthRequest("M", "one"), messages: &messages).requests == [.message("one")])
        #expect(second.consume(plymouthRequest("M", "two"), messages: &messages).requests == [.message("two")])
        // Hiding a message not on top changes nothing shown.
        #expect(first.consume(plymouthRequest("m", "one"), messages: &messages).requests == [])
        #expect(first.consume(plymouthRequest("M", "three"), messages: &messages).requests == [.message("three")])
        #expect(first.consume(plymouthRequest("m", "absent"), messages: &messages).requests == [])
        #expect(first.consume(plymouthRequest("m", "three"), messages: &messages).requests == [.message("two")])
        #expect(second.consume(plymouthRequest("m", "two"), messages: &messages).requests == [.message("")])
        #expect(messages.displayed.isEmpty)
    }

    @Test func everyRequestEncodesToAValidLine() {
        let output = run(plymouthRequest("U", String(repeating: "ü", count: 127)))
        for request in output.requests {
            #expect(Request.parse(request.encoded) == .success(request))
        }
    }
}
