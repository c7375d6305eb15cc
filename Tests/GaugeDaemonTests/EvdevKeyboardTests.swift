import Foundation
import GaugeSystem
import Glibc
import Testing

@testable import GaugeDaemon

/// `struct input_event` records as the kernel writes them on a 64-bit machine.
private func record(type: UInt16 = 1, code: UInt16, value: Int32) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: EvdevKeymap.recordSize - 8)
    bytes += [UInt8(type & 0xFF), UInt8(type >> 8), UInt8(code & 0xFF), UInt8(code >> 8)]
    let v = UInt32(bitPattern: value)
    bytes += [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8(v >> 24)]
    return bytes
}

/// A key pressed and released, with the report (EV_SYN) the kernel sends after each.
private func tap(_ code: UInt16) -> [UInt8] {
    record(code: code, value: 1) + record(type: 0, code: 0, value: 0) + record(code: code, value: 0) + record(type: 0, code: 0, value: 0)
}

private let leftShift: UInt16 = 42, rightShift: UInt16 = 54, control: UInt16 = 29, capsLock: UInt16 = 58

/// "Hunter2!" typed with both Shift keys, Backspace, Ctrl-U, Caps Lock, a repeat and Enter.
private let typing: [UInt8] =
    record(code: leftShift, value: 1) + tap(35) + record(code: leftShift, value: 0)  // H
    + tap(22) + tap(49) + tap(20) + tap(18) + tap(19)  // unter
    + tap(3)  // 2
    + record(code: rightShift, value: 1) + tap(2) + record(code: rightShift, value: 0)  // !
    + record(type: 4, code: 4, value: 0x1E)  // EV_MSC scan code: no key
    + tap(14)  // Backspace
    + record(code: control, value: 1) + tap(22) + record(code: control, value: 0)  // Ctrl-U
    + tap(capsLock) + tap(30) + record(code: leftShift, value: 1) + tap(30) + record(code: leftShift, value: 0)
    + tap(capsLock)  // Caps Lock: A, Shift gives a
    + record(code: 12, value: 1) + record(code: 12, value: 2) + record(code: 12, value: 0)  // '-' held: repeats
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

private final class LogLines: @unchecked Sendable {
    var all: [String] = []
}
