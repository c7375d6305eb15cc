import CGaugeLinux

extension Syscall {
    // MARK: Processes

    /// Starts `arguments[0]`, looked up on `PATH`, with `arguments` and this process's
    /// environment; its standard input is `input` when given, else inherited; `passing`
    /// gives it descriptor `fd` as its descriptor `as` (a pipe it writes its progress into).
    /// `defaultSignals`: the child blocks no signal and takes SIGPIPE, SIGINT, SIGTERM,
    /// SIGHUP and SIGCHLD as if nothing had touched them (a caller reading signals from a
    /// signalfd blocks them, and every gaugectl ignores SIGPIPE).
    package static func spawn(
        _ arguments: [String], input: Int32? = nil, passing: (fd: Int32, as: Int32)? = nil, defaultSignals: Bool = false
    ) throws(SystemError) -> pid_t {
        precondition(!arguments.isEmpty)
        var pointers: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        pointers.append(nil)
        defer { for pointer in pointers { free(pointer) } }
        var passed = passing
        // dup2 onto itself would leave close-on-exec set: pass a copy instead.
        if let given = passing, given.fd == given.as {
            passed = (try fcntl(given.fd, F_DUPFD_CLOEXEC, 10), given.as)
        }
        defer { if let passed, let passing, passed.fd != passing.fd { _ = CGaugeLinux.close(passed.fd) } }
        var pid: pid_t = 0
        let error = pointers.withUnsafeMutableBufferPointer {
            CGL_spawn($0.baseAddress, input ?? -1, passed?.fd ?? -1, passed?.as ?? -1, defaultSignals ? 1 : 0, &pid)
        }
        guard error == 0 else { throw SystemError("cannot run \(arguments[0])", errno: error) }
        return pid
    }

    /// Starts `arguments[0]` as `spawn` does with `defaultSignals`, but in a session of its
    /// own whose controlling terminal is `terminal` (a pseudo-terminal's other side, from
    /// `openTerminalPair`), its standard output and error; its standard input inherited.
    package static func spawn(_ arguments: [String], onTerminal terminal: String) throws(SystemError) -> pid_t {
        precondition(!arguments.isEmpty)
        var pointers: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        pointers.append(nil)
        defer { for pointer in pointers { free(pointer) } }
        var pid: pid_t = 0
        let error = pointers.withUnsafeMutableBufferPointer { CGL_spawn_on_terminal($0.baseAddress, terminal, &pid) }
        guard error == 0 else { throw SystemError("cannot run \(arguments[0])", errno: error) }
        return pid
    }

    /// How a child ended, from its `waitpid` status.
    package enum ChildEnd: Equatable, Sendable {
        case exited(Int32)
        case signaled(Int32)

        package init(status: Int32) {
            let signal = status & 0x7F
            self = signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal)
        }
    }

    /// Waits for the child `pid` to end: its status as `waitpid` gives it.
    package static func waitForChild(_ pid: pid_t) throws(SystemError) -> Int32 {
        var status: Int32 = 0
        _ = try retrying("waitpid", "waitpid \(pid)", { CGaugeLinux.waitpid(pid, &status, 0) })
        return status
    }

    /// The status of the child `pid` if it has ended (and is now reaped); nil while it runs.
    package static func childEnded(_ pid: pid_t) throws(SystemError) -> Int32? {
        var status: Int32 = 0
        let result = try retrying("waitpid", "waitpid \(pid)", { CGaugeLinux.waitpid(pid, &status, WNOHANG) })
        return result == pid ? status : nil
    }

    /// Sends `signal` to the process `pid`.
    package static func kill(_ pid: pid_t, _ signal: Int32) throws(SystemError) {
        _ = try retrying("kill", "kill \(pid)", { CGaugeLinux.kill(pid, signal) })
    }

    /// Waits up to `timeoutMilliseconds` (-1: no limit) for the events each entry asks
    /// for; their `revents` say what came (all 0 on timeout).
    package static func poll(_ entries: inout [pollfd], timeoutMilliseconds: Int32) throws(SystemError) {
        for index in entries.indices { entries[index].revents = 0 }
        _ = try retrying("poll", "poll", {
            entries.withUnsafeMutableBufferPointer { CGaugeLinux.poll($0.baseAddress, nfds_t($0.count), timeoutMilliseconds) }
        })
    }

    /// A pipe, both ends close-on-exec: (read end, write end).
    package static func pipe() throws(SystemError) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        _ = try retrying("pipe", "pipe", { ends.withUnsafeMutableBufferPointer { CGaugeLinux.pipe($0.baseAddress) } })
        for end in ends { _ = try fcntl(end, F_SETFD, FD_CLOEXEC) }
        return (ends[0], ends[1])
    }

    /// Reads `buffer.count` bytes at most at `offset`, a 64-bit position (another process's
    /// address through `/proc/PID/mem`): the count read.
    package static func read(
        _ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, atAddress offset: UInt64
    ) throws(SystemError) -> Int {
        try retrying("pread", "pread", { CGL_pread64(fd, buffer.baseAddress, buffer.count, offset) })
    }
}
