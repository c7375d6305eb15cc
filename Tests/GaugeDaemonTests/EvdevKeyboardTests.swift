import Foundation
import GaugeSystem
import Glibc
import Testing

@testable import GaugeDaemon
import GaugeTestSupport

private let leftShift: UInt16 = 42, rightShift: UInt16 = 54, control: UInt16 = 29, capsLock: UInt16 = 58

/// "Hunter2!" typed with both Shift keys, Backspace, Ctrl-U, Caps Lock, a repeat and Enter.
private let typing: [UInt8] =
    inputRecord(code: leftShift, value: 1) + tap(35) + inputRecord(code: leftShift, value: 0)  // H
    + tap(22) + tap(49) + tap(20) + tap(18) + tap(19)  // unter
    + tap(3)  // 2
    + inputRecord(code: rightShift, value: 1) + tap(2) + inputRecord(code: rightShift, value: 0)  // !
    + inputRecord(type: 4, code: 4, value: 0x1E)  // EV_MSC scan code: no key
    + tap(14)  // Backspace
    + inputRecord(code: control, value: 1) + tap(22) + inputRecord(code: control, value: 0)  // Ctrl-U
    + tap(capsLock) + tap(30) + inputRecord(code: leftShift, value: 1) + tap(30) + inputRecord(code: leftShift, value: 0)
    + tap(capsLock)  // Caps Lock: A, Shift gives a
    + inputRecord(code: 12, value: 1) + inputRecord(code: 12, value: 2) + inputRecord(code: 12, value: 0)  // '-' held: repeats
    + tap(103) + tap(59)  // Up and F1: no character
    + tap(71) + tap(1) + tap(28)  // keypad 7, Escape, Enter

private let typed = Array("Hunter2!".utf8) + [0x7F, 0x15] + Array("Aa--7".utf8) + [0x1B, 0x0D]

@Suite struct EvdevKeyboardTests {
    @Test func usLayoutWithShiftCapsLockAndControl() {
        var keymap = EvdevKeymap()
        var out: [UInt8] = []
        typing.withUnsafeBytes { keymap.feed($0, into: &out) }
        #expect(out == typed)
    }

    @Test(arguments: [1, 5, 23, 24, 25, 1000])
    func recordsSplitAcrossReadsDecodeTheSame(_ chunk: Int) {
        var keymap = EvdevKeymap()
        var out: [UInt8] = []
        var index = 0
        while index < typing.count {
            let end = min(typing.count, index + chunk)
            typing[index..<end].withUnsafeBytes { keymap.feed($0, into: &out) }
            index = end
        }
        #expect(out == typed)
    }

    /// The reader the daemon uses with no VT, fed through a socket pair standing in for
    /// an input device (the uinput module is not there in every test environment).
    @Test func theReaderDeliversWhatIsTyped() throws {
        let loop = try EventLoop()
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        try Syscall.makeNonBlockingAndCloseOnExec(fds[0])
        defer { close(fds[1]) }
        var received: [UInt8] = []
        let lines = LogLines()
        let keyboard = EvdevKeyboard(directory: "/nonexistent", loop: loop, log: Log(sink: { lines.all.append($0) })) {
            received += Array($0)
        }
        keyboard.attach(fds[0], path: "test-device")
        #expect(keyboard.isReading)
        var index = 0
        let deadline = monotonicNow() + 30
        while received.count < typed.count, monotonicNow() < deadline {
            if index < typing.count {
                let end = min(typing.count, index + 37)
                let sent = typing[index..<end].withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
                #expect(sent == end - index)
                index = end
            }
            _ = try loop.runOnce(timeoutMilliseconds: 100)
        }
        #expect(received == typed)
        #expect(!lines.all.contains { $0.contains("Hunter") || $0.contains("unter2") }, "nothing typed is logged")
        // The device going away ends the reading, with a log line.
        close(fds[1])
        fds[1] = -1
        while keyboard.isReading, monotonicNow() < deadline { _ = try loop.runOnce(timeoutMilliseconds: 100) }
        #expect(!keyboard.isReading)
        #expect(lines.all.contains { $0.contains("test-device: gone") })
        // With no keyboard at all, a question cannot be asked (its asker gets no answer).
        #expect(!keyboard.start())
    }
}

/// Keys pressed with a modifier held: `modifier` down, the taps, `modifier` up.
private func holding(_ modifier: UInt16, _ codes: UInt16...) -> [UInt8] {
    inputRecord(code: modifier, value: 1) + codes.flatMap { tap($0) } + inputRecord(code: modifier, value: 0)
}

/// The German layout as console-setup makes it (`ckbcomp de > de.kmap; loadkeys -u -b de.kmap`,
/// console-setup 1.221 and kbd 2.5.1 of Debian 12): Caps Lock locks a modifier there rather
/// than the VT's Caps Lock flag, AltGr has its own tables, and the dead keys are the kernel's.
private let germanKeymap = ConsoleKeymap.Fixture.path("de.bmap")

@Suite struct ConsoleKeymapTests {
    @Test func theGermanLayoutTypesWhatItsKeysSay() throws {
        var keymap = EvdevKeymap(map: try ConsoleKeymap(path: germanKeymap))
        let altGr: UInt16 = 100
        let typing: [UInt8] =
            tap(21) + tap(44) + tap(40) + tap(39)  // Y Z ' ; keys: z y ä ö
            + holding(leftShift, 3) + tap(12)  // Shift-2: ", then ß
            + holding(altGr, 16, 18)  // AltGr-Q: @, AltGr-E: €
            + tap(capsLock) + tap(30) + holding(leftShift, 30) + tap(capsLock) + tap(30)  // A a, then a
            + tap(13) + tap(18)  // dead acute, e: é
            + tap(41) + tap(57)  // dead circumflex, Space: ^
            + holding(leftShift, 13) + tap(30)  // dead grave, a: à
            + tap(13) + tap(45)  // dead acute, x: no such letter: ' then x
            + holding(control, 21) + tap(28)  // Ctrl-Z on the Y key (Ctrl-Z), Enter
        var out: [UInt8] = []
        var capsSeen: [Bool] = []
        typing.withUnsafeBytes { raw in
            // Fed in record-sized pieces, to read Caps Lock as the keys go.
            var index = 0
            while index < raw.count {
                let end = min(raw.count, index + EvdevKeymap.recordSize)
                keymap.feed(UnsafeRawBufferPointer(rebasing: raw[index..<end]), into: &out)
                capsSeen.append(keymap.capsLock)
                index = end
            }
        }
        #expect(String(decoding: out, as: UTF8.self) == "zyäö\"ß@€Aaaé^à'x\u{1A}\r")
        #expect(capsSeen.contains(true) && capsSeen.last == false, "Caps Lock shows while locked, and not after")
    }

    @Test func theUSLayoutIsTheDefault() {
        var keymap = EvdevKeymap()
        var out: [UInt8] = []
        (tap(21) + tap(44) + tap(40)).withUnsafeBytes { keymap.feed($0, into: &out) }
        #expect(out == Array("yz'".utf8))
    }

    @Test func aFileThatIsNotABinaryKeymapIsRefusedWithTheReason() throws {
        let german = try Array(Data(contentsOf: URL(fileURLWithPath: germanKeymap)))
        #expect(throws: ConsoleKeymap.Invalid.self) { try ConsoleKeymap(binary: Array("keymaps 0-2\n".utf8)) }
        do {
            _ = try ConsoleKeymap(binary: Array(german.dropLast()))
            Issue.record("a truncated keymap was taken")
        } catch {
            #expect(error.description == "a binary keymap with 128 tables is 33031 bytes, not 33030")
        }
        var noPlain = german
        noPlain[7] = 0
        #expect(throws: ConsoleKeymap.Invalid.self) { try ConsoleKeymap(binary: Array(noPlain.dropLast(256))) }
        #expect(try ConsoleKeymap(binary: german) == ConsoleKeymap(path: germanKeymap))
    }

    @Test func theDaemonReadsTheGivenKeymapOrSaysWhyNot() throws {
        let lines = LogLines()
        let log = Log(sink: { lines.all.append($0) })
        #expect(EvdevKeyboard.layout(path: germanKeymap, log: log).name == "keymap \(germanKeymap)")
        #expect(lines.all.isEmpty)
        let missing = EvdevKeyboard.layout(path: "/nonexistent/keymap.bmap", log: log)
        #expect(missing.name == "US layout" && missing.map == .us)
        #expect(lines.all == ["gauged: keyboard: cannot use the keymap: cannot open /nonexistent/keymap.bmap: No such file or directory; keys are read in the US layout\n"])
    }
}

extension ConsoleKeymap {
    enum Fixture {
        static func path(_ name: String) -> String {
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Keymaps/\(name)").path
        }
    }
}

private final class LogLines: @unchecked Sendable {
    var all: [String] = []
}
