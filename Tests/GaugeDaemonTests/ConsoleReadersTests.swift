import Glibc
import Testing

@testable import GaugeDaemon
import GaugeSystem

@Suite struct ConsoleReadersTests {
    @Test func blockedCallLinesParse() {
        #expect(BlockedCall.parse("0 0x3 0x7ffd5b1c 0x1 0x0 0x0 0x0 0x7ffd5b00 0x7f12\n")
            == BlockedCall(number: 0, arguments: [3, 0x7ffd5b1c, 1, 0, 0, 0]))
        #expect(BlockedCall.parse("running\n") == nil)
        #expect(BlockedCall.parse("-1 0x7ffd5b00 0x7f12\n") == nil)
        #expect(BlockedCall.parse("0 0x3 0x1\n") == nil, "too few arguments")
        #expect(BlockedCall.parse("0 3 0x1 0x0 0x0 0x0 0x0 0x0 0x0") == nil, "arguments are hex")
        #expect(BlockedCall.parse("+0 0x3 0x1 0x0 0x0 0x0 0x0 0x0 0x0") == nil, "the number is digits only")
    }

    #if arch(x86_64)
        @Test func readingCallsOfThisMachine() {
            #expect(ReadingSyscalls.wait(number: 0, arguments: [5, 0, 0, 0, 0, 0]) == .read(fd: 5))
            #expect(ReadingSyscalls.wait(number: 270, arguments: [4, 0x1000, 0, 0, 0, 0]) == .select(count: 4, readSet: 0x1000))
            #expect(ReadingSyscalls.wait(number: 7, arguments: [0x2000, 3, 0, 0, 0, 0]) == .poll(address: 0x2000, count: 3))
            #expect(ReadingSyscalls.wait(number: 232, arguments: [4, 0x1000, 8, 0, 0, 0]) == nil, "epoll_wait is not read")
            #expect(ReadingSyscalls.wait(number: 61, arguments: [0, 0, 0, 0, 0, 0]) == nil, "wait4 is not read")
            #expect(ReadingSyscalls.wait(number: 23, arguments: [4, 0, 0x1000, 0, 0, 0]) == nil, "select with no read set")
        }
    #endif

    @Test func descriptorSetsAndPollArrays() {
        #expect(ReadingSyscalls.selected(in: [0b0000_0101, 0b1000_0000], count: 16) == [0, 2, 15])
        #expect(ReadingSyscalls.selected(in: [0b0000_0101, 0b1000_0000], count: 3) == [0, 2], "only below nfds")
        // fd 0 for POLLIN, fd 7 for POLLOUT only, fd 9 for POLLPRI, fd -1 ignored.
        let array: [UInt8] = [0, 0, 0, 0, 1, 0, 0, 0] + [7, 0, 0, 0, 4, 0, 0, 0] + [9, 0, 0, 0, 2, 0, 0, 0]
            + [0xFF, 0xFF, 0xFF, 0xFF, 1, 0, 0, 0]
        #expect(ReadingSyscalls.polledForInput(array) == [0, 9])
    }

    @Test func controllingTTYFromAStatLine() {
        // tty_nr 1025: major 4, minor 1 (tty1); a command name with spaces and parentheses.
        #expect(ReadingSyscalls.controllingTTY(statLine: "42 (my (odd) name) S 1 42 42 1025 42 4194560")
            == DeviceNumber(major: 4, minor: 1))
        // /dev/pts/300: major 136, minor 300 (the high bits of the minor above bit 20).
        #expect(ReadingSyscalls.controllingTTY(statLine: "7 (sh) S 1 7 7 \(136 << 8 | 300 & 0xFF | (300 & ~0xFF) << 12) 7")
            == DeviceNumber(major: 136, minor: 300))
        #expect(ReadingSyscalls.controllingTTY(statLine: "1 (init) S 0 1 1 0 -1") == nil, "no controlling tty")
        #expect(ReadingSyscalls.controllingTTY(statLine: "1 (sh) S 0 1 1 +1025 -1") == nil, "tty_nr is digits only")
    }

    @Test func deviceNumbersDecodeAsTheKernelNumbersDevices() {
        for (path, major, minor) in [("/dev/null", 1, 3), ("/dev/tty", 5, 0), ("/dev/ptmx", 5, 2), ("/dev/zero", 1, 5)] {
            var status = stat()
            #expect(stat(path, &status) == 0)
            #expect(DeviceNumber(UInt64(status.st_rdev)) == DeviceNumber(major: UInt32(major), minor: UInt32(minor)), "\(path)")
        }
        // Large numbers keep their high bits (glibc's dev_t layout).
        let large: UInt64 = (70000 & 0xFF) | (259 << 8) | ((70000 & ~0xFF) << 12)
        #expect(DeviceNumber(large) == DeviceNumber(major: 259, minor: 70000))
    }

    /// A stop hands back the first settings, with echo off only when another program has
    /// set its own and turned echo off (a passphrase is being typed).
    @Test func theKeyboardHandsBackUsableSettings() {
        var original = termios()
        original.c_lflag = tcflag_t(ICANON | ECHO | ISIG | IEXTEN)
        original.c_iflag = tcflag_t(ICRNL | IXON)
        var raw = original
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ECHONL | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL | INLCR | IGNCR)
        let back = KeyboardInput.handedBack(original, current: raw)
        #expect(back.c_lflag == original.c_lflag && back.c_iflag == original.c_iflag, "its own raw mode: all back")
        var askpass = raw
        askpass.c_lflag |= tcflag_t(ICANON)
        let forAsker = KeyboardInput.handedBack(original, current: askpass)
        #expect(forAsker.c_lflag & tcflag_t(ECHO) == 0, "echo stays off for the passphrase")
        #expect(forAsker.c_lflag & tcflag_t(ICANON) != 0 && forAsker.c_iflag & tcflag_t(ICRNL) != 0, "Enter ends the line")
        var echoing = askpass
        echoing.c_lflag |= tcflag_t(ECHO)
        #expect(KeyboardInput.handedBack(original, current: echoing).c_lflag == original.c_lflag)
    }
}
