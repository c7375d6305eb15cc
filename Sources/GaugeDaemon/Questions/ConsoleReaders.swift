import CGaugeLinux
import GaugeSystem

/// Finds a program other than the daemon waiting for an answer on the console the splash
/// covers: a process blocked reading it (`read`), or waiting for it to become readable
/// (`select`, `poll` and their kin, as cryptsetup's askpass, systemd's password agent and
/// a shell's line editor wait). Whoever asks and however, the person must see the question:
/// while one waits, the daemon gives the console the screen.
///
/// Each `scan()` reads, for every process, `/proc/PID/syscall` (what it is blocked in and
/// with which arguments); for a reading call, the descriptors it waits on (the argument
/// itself, or the `fd_set` or `pollfd` array it points to, read through `/proc/PID/mem`),
/// and what each is (`stat` through `/proc/PID/fd/N`). The console counts under each of
/// its names: the tty itself, `/dev/tty0` (the VT on screen) and `/dev/console` when the
/// kernel's console is that VT, and `/dev/tty` for a process whose controlling tty it is.
/// Looking at other processes this way needs root (ptrace access); without it nothing is
/// found, which is logged once.
final class ConsoleReaders {
    struct Reader: Equatable {
        var pid: Int32
        var name: String
    }

    /// The devices (major, minor) reading which means reading the console.
    let devices: Set<DeviceNumber>
    /// The device nodes those devices are opened and written through (`ConsoleActivityWatch`).
    let nodePaths: [String]
    /// The device of the tty itself, for `/dev/tty` (5:0) through a controlling tty.
    private let tty: DeviceNumber?
    private let log: Log
    private var deniedLogged = false
    private let ownPID = getpid()
    private var buffer = [UInt8](repeating: 0, count: 8192)

    /// `ttyPath`: the console's tty (a VT, or a pty standing in for it in tests).
    init(ttyPath: String, log: Log) {
        self.log = log
        var devices: Set<DeviceNumber> = []
        var tty: DeviceNumber?
        var nodePaths: [String] = []
        if let status = try? Syscall.fileStatus(ttyPath) {
            let device = DeviceNumber(UInt64(status.st_rdev))
            tty = device
            devices.insert(device)
            nodePaths = [ttyPath]
            // A VT (major 4, minors 1-63): the VT on screen and, when the kernel's console
            // is a VT, the console read through their own names.
            if device.major == 4, (1...63).contains(device.minor) {
                devices.insert(DeviceNumber(major: 4, minor: 0))
                // `/dev/tty` too, opened by whoever asks through their controlling tty; a
                // pty (the tests' stand-in) leaves it out, as every terminal opens it.
                nodePaths += ["/dev/tty0", "/dev/tty"]
                if Self.consoleIsVT(name: "tty\(device.minor)") {
                    devices.insert(DeviceNumber(major: 5, minor: 1))
                    nodePaths.append("/dev/console")
                }
            }
        } else {
            log.info("console questions: cannot look at \(ttyPath); programs asking on it are not noticed")
        }
        self.devices = devices
        self.nodePaths = nodePaths
        self.tty = tty
    }

    /// Whether `/dev/console` reads from the VT: the kernel's preferred console (the last
    /// in `/sys/class/tty/console/active`) is `tty0` or that VT. Unknown: yes.
    private static func consoleIsVT(name: String) -> Bool {
        guard let active = Syscall.kernelText("/sys/class/tty/console/active", maxBytes: 256),
            let last = active.split(whereSeparator: { $0 == " " || $0 == "\n" }).last
        else { return true }
        return last == "tty0" || last == name
    }

    /// The first process found waiting to read the console; nil when none is.
    func scan() -> Reader? {
        guard !devices.isEmpty, let entries = try? Syscall.directoryEntries("/proc") else { return nil }
        var denied = 0
        var looked = 0
        for entry in entries {
            guard let number = DecimalDigits.value(entry, maxDigits: 9), number > 0, Int32(number) != ownPID else { continue }
            let pid = Int32(number)
            looked += 1
            guard let line = read("/proc/\(entry)/syscall", denied: &denied),
                let call = BlockedCall.parse(String(decoding: line, as: UTF8.self)),
                let wait = ReadingSyscalls.wait(number: call.number, arguments: call.arguments)
            else { continue }
            for fd in descriptors(of: wait, pid: entry) where waitsOnConsole(pid: entry, fd: fd) {
                let name = read("/proc/\(entry)/comm", denied: &denied).map {
                    String(decoding: $0.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
                } ?? "?"
                return Reader(pid: pid, name: name)
            }
        }
        if denied > 0, denied * 2 > looked, !deniedLogged {
            deniedLogged = true
            log.info("console questions: other processes cannot be looked at (\(denied) of \(looked) refused); programs asking on the console are not noticed")
        }
        return nil
    }

    private func descriptors(of wait: ReadingSyscalls.Wait, pid: String) -> [Int32] {
        switch wait {
        case .read(let fd): return [fd]
        case .select(let count, let address):
            let bytes = min(ReadingSyscalls.maxSelectDescriptors, count + 7) / 8
            return memory(pid: pid, at: address, count: bytes).map { ReadingSyscalls.selected(in: $0, count: count) } ?? []
        case .poll(let address, let count):
            let entries = min(count, ReadingSyscalls.maxPollEntries)
            return memory(pid: pid, at: address, count: entries * 8).map(ReadingSyscalls.polledForInput) ?? []
        }
    }

    private func waitsOnConsole(pid: String, fd: Int32) -> Bool {
        guard let status = try? Syscall.fileStatus("/proc/\(pid)/fd/\(fd)"), status.isType(S_IFCHR) else { return false }
        let device = DeviceNumber(UInt64(status.st_rdev))
        if devices.contains(device) { return true }
        // /dev/tty: the process's controlling tty (field 7 of /proc/PID/stat).
        guard device == DeviceNumber(major: 5, minor: 0), let tty else { return false }
        var denied = 0
        guard let stat = read("/proc/\(pid)/stat", denied: &denied) else { return false }
        return ReadingSyscalls.controllingTTY(statLine: String(decoding: stat, as: UTF8.self)) == tty
    }

    /// A small /proc file's bytes; `denied` counts refusals (not root).
    private func read(_ path: String, denied: inout Int) -> ArraySlice<UInt8>? {
        let fd: Int32
        do throws(SystemError) {
            fd = try Syscall.open(path, flags: O_RDONLY | O_CLOEXEC | O_NOCTTY)
        } catch {
            if error.errno == EACCES || error.errno == EPERM { denied += 1 }
            return nil
        }
        defer { Syscall.close(fd) }
        let result = buffer.withUnsafeMutableBytes { raw in
            Result { () throws(SystemError) in try Syscall.read(fd, into: raw) }
        }
        switch result {
        case .success(let count?): return buffer[..<count]
        case .success(nil): return nil
        case .failure(let error):
            if error.errno == EACCES || error.errno == EPERM { denied += 1 }
            return nil
        }
    }

    private func memory(pid: String, at address: UInt64, count: Int) -> [UInt8]? {
        guard count > 0, let fd = try? Syscall.open("/proc/\(pid)/mem", flags: O_RDONLY | O_CLOEXEC) else { return nil }
        defer { Syscall.close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        guard let read = bytes.withUnsafeMutableBytes({ try? Syscall.read(fd, into: $0, atAddress: address) }), read == count else {
            return nil
        }
        return bytes
    }
}

/// `/proc/PID/syscall`: the system call number and its six arguments, for a process blocked
/// in one ("running" or "-1 ..." otherwise).
struct BlockedCall: Equatable {
    var number: Int
    var arguments: [UInt64]

    static func parse(_ line: String) -> BlockedCall? {
        let fields = line.split { $0 == " " || $0 == "\n" }
        guard fields.count >= 7, let number = DecimalDigits.value(fields[0], maxDigits: 9) else { return nil }
        var arguments: [UInt64] = []
        for field in fields[1...6] {
            guard field.hasPrefix("0x"), let value = UInt64(field.dropFirst(2), radix: 16) else { return nil }
            arguments.append(value)
        }
        return BlockedCall(number: Int(number), arguments: arguments)
    }
}

/// The system calls a program waits for input in, by this machine's numbers, and what they
/// wait on.
enum ReadingSyscalls {
    enum Wait: Equatable {
        case read(fd: Int32)
        /// `nfds` and the address of the read set.
        case select(count: Int, readSet: UInt64)
        /// The address of the `pollfd` array and its length.
        case poll(address: UInt64, count: Int)
    }

    static let maxSelectDescriptors = 1024
    static let maxPollEntries = 256

    #if arch(x86_64)
        static let reads: Set<Int> = [0, 17, 19]  // read, pread64, readv
        static let selects: Set<Int> = [23, 270]  // select, pselect6
        static let polls: Set<Int> = [7, 271]  // poll, ppoll
    #elseif arch(arm64)
        static let reads: Set<Int> = [63, 65, 67]  // read, readv, pread64
        static let selects: Set<Int> = [72]  // pselect6
        static let polls: Set<Int> = [73]  // ppoll
    #elseif arch(arm)
        static let reads: Set<Int> = [3, 145, 180]  // read, readv, pread64
        static let selects: Set<Int> = [142, 335, 413]  // _newselect, pselect6, pselect6_time64
        static let polls: Set<Int> = [168, 336, 414]  // poll, ppoll, ppoll_time64
    #else
        static let reads: Set<Int> = []
        static let selects: Set<Int> = []
        static let polls: Set<Int> = []
    #endif

    static func wait(number: Int, arguments: [UInt64]) -> Wait? {
        guard arguments.count >= 2 else { return nil }
        if reads.contains(number) { return .read(fd: Int32(truncatingIfNeeded: arguments[0])) }
        if selects.contains(number), arguments[1] != 0 {
            return .select(count: Int(min(arguments[0], UInt64(maxSelectDescriptors))), readSet: arguments[1])
        }
        if polls.contains(number), arguments[0] != 0 {
            return .poll(address: arguments[0], count: Int(min(arguments[1], UInt64(maxPollEntries))))
        }
        return nil
    }

    /// The descriptors below `count` set in an `fd_set` (bit N of byte N / 8: the layout
    /// of an array of longs on a little-endian machine).
    static func selected(in bytes: [UInt8], count: Int) -> [Int32] {
        var fds: [Int32] = []
        for fd in 0..<min(count, bytes.count * 8) where bytes[fd / 8] & (1 << UInt8(fd % 8)) != 0 {
            fds.append(Int32(fd))
        }
        return fds
    }

    /// The descriptors of a `struct pollfd` array (int fd, short events, short revents)
    /// polled for input.
    static func polledForInput(_ bytes: [UInt8]) -> [Int32] {
        var fds: [Int32] = []
        var offset = 0
        while offset + 8 <= bytes.count {
            let fd = Int32(bytes[offset]) | Int32(bytes[offset + 1]) << 8 | Int32(bytes[offset + 2]) << 16 | Int32(bytes[offset + 3]) << 24
            let events = UInt16(bytes[offset + 4]) | UInt16(bytes[offset + 5]) << 8
            // POLLIN, POLLPRI or POLLRDNORM.
            if fd >= 0, events & 0x43 != 0 { fds.append(fd) }
            offset += 8
        }
        return fds
    }

    /// The controlling tty from a `/proc/PID/stat` line (its 7th field, after the command
    /// name in parentheses, which may itself hold spaces and parentheses); nil for none.
    static func controllingTTY(statLine: String) -> DeviceNumber? {
        guard let close = statLine.utf8.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = statLine[statLine.index(after: close)...].split(separator: " ")
        // state, ppid, pgrp, session, tty_nr
        guard fields.count > 4, let value = DecimalDigits.value(fields[4]), value > 0 else { return nil }
        let raw = UInt64(value)
        return DeviceNumber(major: UInt32((raw >> 8) & 0xFFF), minor: UInt32((raw & 0xFF) | ((raw >> 12) & 0xFFF00)))
    }
}
