import CGaugeLinux
import GaugeProtocol
import GaugeSystem

/// `plymouth ask-for-password`, `ask-question` and `watch-keystroke`: the question goes to
/// the daemon, and its answer to standard output or, with `--command`, to the command's
/// standard input (the command split at spaces, as Plymouth's client runs it: no shell).
/// Every copy of a typed answer is zeroed once it has been handed on.
struct PlymouthAnswers {
    let session: PlymouthSessionClient

    /// Asks up to `tries` times while `command` refuses the answer (cached passwords
    /// first, as Plymouth's client does for a command).
    func password(prompt: String?, command: String?, tries: Int) -> Int32 {
        if let command, case .answers(var cached)? = session.request(.cachedPassword) {
            defer { for index in cached.indices { Self.zero(&cached[index]) } }
            for answer in cached where Self.run(command, input: answer) == 0 { return 0 }
        }
        var left = tries
        while true {
            var answer: [UInt8]
            switch ask(.password, prompt: prompt, echo: false) {
            case .answer(let bytes): answer = bytes
            case .noAnswer:
                // Cancelled at the screen: the command may still ask for itself.
                return command.map { Self.runOnItsOwn($0, tries: left) } ?? 1
            case .failed(let status): return status
            }
            defer { Self.zero(&answer) }
            guard let command else { return Self.print(answer) }
            let status = Self.run(command, input: answer)
            left -= 1
            if status == 0 || left <= 0 { return status }
        }
    }

    func question(prompt: String?, command: String?) -> Int32 {
        var answer: [UInt8]
        switch ask(.question, prompt: prompt, echo: true) {
        case .answer(let bytes): answer = bytes
        case .noAnswer: return 1
        case .failed(let status): return status
        }
        defer { Self.zero(&answer) }
        return Self.deliver(answer, to: command)
    }

    /// What a question (`*` or `W`) came back with.
    private enum Asked {
        case answer([UInt8])
        /// Cancelled at the screen, or nothing cached.
        case noAnswer
        /// The exit status to end with (refused, or the daemon gone).
        case failed(Int32)
    }

    /// Asks the daemon; where it refuses to ask on the screen, asks on the terminal.
    private func ask(_ request: PlymouthRequest.Kind, prompt: String?, echo: Bool) -> Asked {
        switch session.request(request, prompt) {
        case .answer(let bytes)?: return .answer(bytes)
        case .nak?:
            guard let typed = ConsolePrompt.ask(prompt ?? (echo ? "" : "Password"), echo: echo) else { return .failed(1) }
            return .answer(typed)
        case .noAnswer?: return .noAnswer
        case nil: return .failed(PlymouthSessionClient.disconnected())
        default: return .failed(1)
        }
    }

    /// The answer to `command`'s standard input (its status is not the caller's, as in
    /// Plymouth's client), or to standard output.
    static func deliver(_ answer: [UInt8], to command: String?) -> Int32 {
        guard let command else { return print(answer) }
        _ = run(command, input: answer)
        return 0
    }

    private static func print(_ answer: [UInt8]) -> Int32 {
        var rest = answer[...]
        while !rest.isEmpty {
            guard let count = rest.withUnsafeBytes({ try? Syscall.write(1, $0) }), count > 0 else { return 1 }
            rest = rest.dropFirst(count)
        }
        return 0
    }

    /// Runs `command` with `input` on its standard input: its exit status (128 + the
    /// signal that ended it; 127 when it could not start).
    static func run(_ command: String, input: [UInt8]) -> Int32 {
        guard let pipe = try? Syscall.pipe() else { return 127 }
        let started = start(command, input: pipe.read)
        Syscall.close(pipe.read)
        var rest = input[...]
        while started != nil, !rest.isEmpty {
            guard let count = rest.withUnsafeBytes({ try? Syscall.write(pipe.write, $0) }), count > 0 else { break }
            rest = rest.dropFirst(count)
        }
        Syscall.close(pipe.write)
        return started.map(finish) ?? 127
    }

    /// Runs `command` with this process's standard input until it succeeds, at most
    /// `tries` times (it asks for the password itself): its last status.
    static func runOnItsOwn(_ command: String, tries: Int) -> Int32 {
        var status: Int32 = 127
        for _ in 0..<max(1, tries) {
            guard let pid = start(command, input: nil) else { return 127 }
            status = finish(pid)
            if status == 0 { break }
        }
        return status
    }

    private static func start(_ command: String, input: Int32?) -> pid_t? {
        let words = command.split(separator: " ").map(String.init)
        guard !words.isEmpty else { return nil }
        do throws(SystemError) {
            return try Syscall.spawn(words, input: input)
        } catch {
            printError("plymouth: \(error)")
            return nil
        }
    }

    private static func finish(_ pid: pid_t) -> Int32 {
        guard let status = try? Syscall.waitForChild(pid) else { return 127 }
        switch Syscall.ChildEnd(status: status) {
        case .exited(let code): return code
        case .signaled(let signal): return 128 + signal
        }
    }

    static func zero(_ bytes: inout [UInt8]) {
        wipe(&bytes)
    }
}

/// Asks on the terminal when the daemon will not ask on the screen: the controlling
/// terminal, else standard input if it is one, else `/dev/console` (an initramfs has no
/// controlling terminal). A password is read with echo off; the terminal gets its
/// settings back afterwards, also when a signal ends the process meanwhile.
enum ConsolePrompt {
    /// The longest answer read.
    static let maxAnswerBytes = 4096

    /// What was typed up to Enter, without it; nil at end of input with nothing typed or
    /// when no terminal can be had.
    static func ask(_ prompt: String, echo: Bool) -> [UInt8]? {
        guard let (fd, owned) = terminal() else {
            printError("plymouth: no terminal to ask \(prompt.isEmpty ? "the question" : "'\(prompt)'") on")
            return nil
        }
        defer { if owned { Syscall.close(fd) } }
        let saved = try? Syscall.terminalAttributes(fd)
        if var quiet = saved {
            if !echo { quiet.c_lflag &= ~tcflag_t(ECHO | ECHONL) }
            // Whatever the last program left: lines ended by Enter, CR read as NL.
            quiet.c_lflag |= tcflag_t(ICANON)
            quiet.c_iflag |= tcflag_t(ICRNL)
            withUnsafePointer(to: saved!) { _ = CGL_terminal_guard(fd, $0) }
            try? Syscall.setTerminalAttributes(fd, quiet)
        }
        write(fd, prompt.isEmpty ? "" : (prompt.hasSuffix(":") || prompt.hasSuffix("?") ? prompt + " " : prompt + ": "))
        // Room for the longest answer up front: no reallocation leaves a copy behind.
        var answer: [UInt8] = []
        answer.reserveCapacity(maxAnswerBytes)
        var ended = false
        var byte: [UInt8] = [0]
        while answer.count < maxAnswerBytes {
            guard let count = byte.withUnsafeMutableBytes({ try? Syscall.read(fd, into: $0) }), count == 1 else {
                ended = true
                break
            }
            if byte[0] == UInt8(ascii: "\n") || byte[0] == UInt8(ascii: "\r") { break }
            answer.append(byte[0])
        }
        byte[0] = 0
        if let saved {
            try? Syscall.setTerminalAttributes(fd, saved)
            CGL_terminal_unguard()
        }
        if !echo { write(fd, "\n") }
        if ended && answer.isEmpty { return nil }
        return answer
    }

    private static func terminal() -> (Int32, owned: Bool)? {
        if let fd = try? Syscall.open("/dev/tty", flags: O_RDWR | O_NOCTTY) { return (fd, true) }
        if Syscall.isTerminal(0) { return (0, false) }
        if let fd = try? Syscall.open("/dev/console", flags: O_RDWR | O_NOCTTY) { return (fd, true) }
        return nil
    }

    private static func write(_ fd: Int32, _ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var rest = UnsafeRawBufferPointer(bytes)
            while !rest.isEmpty {
                guard let count = try? Syscall.write(fd, rest), count > 0 else { return }
                rest = UnsafeRawBufferPointer(rebasing: rest[count...])
            }
        }
    }
}
