import CGaugeLinux
import GaugeProtocol
import GaugeSystem

/// A command gaugectl runs and follows to its end (`gaugectl apt`, `gaugectl run`): what
/// it writes on a stream of gaugectl's own (a pipe, a pseudo-terminal's main side) is read
/// without blocking, beside a signalfd that tells when the command ends (SIGCHLD), so a
/// daemon it started, holding the stream open, does not keep gaugectl waiting. SIGTERM,
/// SIGINT and SIGHUP sent to gaugectl are passed on to the command (not those the
/// terminal sent the whole process group, which the command got itself), and gaugectl goes
/// on waiting for it to end.
struct FollowedCommand {
    let child: Producer
    private let signals: Int32
    /// The label of gaugectl's messages (`apt`, `run`).
    private let label: String

    /// The signals passed on to the command, and SIGCHLD, its end.
    private static let watched: [Int32] = [SIGTERM, SIGINT, SIGHUP, SIGCHLD]

    /// Watches the signals first (the command gets them unblocked), then starts the command
    /// with `start`.
    init(label: String, start: () throws(SystemError) -> Producer) throws(SystemError) {
        self.label = label
        signals = try Self.watchSignals()
        do throws(SystemError) {
            child = try start()
        } catch {
            Syscall.close(signals)
            throw error
        }
    }

    /// Blocks the watched signals and returns a signalfd for them.
    private static func watchSignals() throws(SystemError) -> Int32 {
        // A SIGCHLD inherited as ignored would reap the command before gaugectl saw its end.
        Syscall.defaultSignal(SIGCHLD)
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in watched { sigaddset(&mask, signal) }
        _ = try Syscall.signalMask(SIG_SETMASK, mask)
        return try Syscall.signalDescriptor(-1, mask: mask)
    }

    /// Reads `stream` (non-blocking), handing each piece to `consume`, and the signals, until
    /// the command has ended (then what is left in the stream, without waiting for its end);
    /// calls `tick` each turn and waits at most until `nextTick` says; `stopping` once, at
    /// the first signal passed on. Returns how the command ended; closes `stream`.
    func follow(
        stream fd: Int32, nextTick: () -> UInt64?, tick: () -> Void, consume: ([UInt8]) -> Void, stopping: () -> Void
    ) -> Syscall.ChildEnd {
        var stream = Stream(fd: fd, label: label)
        var passedOn = false
        while true {
            tick()
            var entries = [pollfd(fd: signals, events: Int16(POLLIN), revents: 0)]
            if stream.isOpen { entries.append(pollfd(fd: stream.fd, events: Int16(POLLIN), revents: 0)) }
            let wait = ProgressTicks.milliseconds(until: nextTick())
            if (try? Syscall.poll(&entries, timeoutMilliseconds: wait)) == nil {
                // Should poll ever fail, wait a little rather than spin; the end is still checked.
                _ = try? Syscall.poll(-1, events: 0, timeoutMilliseconds: 100)
            }
            if entries.count > 1, entries[1].revents != 0 { stream.read(consume) }
            for signal in pendingSignals() where signal.number != SIGCHLD {
                // The terminal sends its SIGINT to the whole group: the command has it.
                guard signal.fromProcess else { continue }
                try? Syscall.kill(child.pid, signal.number)
                if !passedOn {
                    passedOn = true
                    printError("gaugectl: \(label): passed signal \(signal.number) on to \(child.name) (pid \(child.pid)); waiting for it to end")
                    stopping()
                }
            }
            if let status = ended() {
                stream.read(consume)
                stream.close()
                Syscall.close(signals)
                return Syscall.ChildEnd(status: status)
            }
        }
    }

    /// Ends gaugectl as a command it could not start, or that ended, says: the failure on
    /// stderr and on the screen (`finish(failure)` gives the requests; nil is success), and
    /// the command's exit status (the shell's 127 or 126 for one never started).
    static func exit(
        _ label: String, _ requests: RequestStream, startFailure error: SystemError, finish: (String?) -> [Request]
    ) -> Never {
        let (message, code) = Producer.startFailure(error)
        printError("gaugectl: \(label): \(message)")
        requests.send(finish(message))
        CGaugeLinux.exit(code)
    }

    /// See `exit(_:_:startFailure:finish:)`: a command that ran and ended as `end` says,
    /// called `name` (default: its first word's).
    func exit(_ end: Syscall.ChildEnd, name: String? = nil, _ requests: RequestStream, finish: (String?) -> [Request]) -> Never {
        requests.complaints.flush()
        if let failure = Producer.failure(name ?? child.name, end) {
            printError("gaugectl: \(label): \(failure)")
            requests.send(finish(failure))
            CGaugeLinux.exit(Producer.exitCode(end))
        }
        requests.send(finish(nil))
        GaugeClient.finish(requests.exitStatus)
    }

    /// The command's wait status once it has ended; a command that cannot be waited for
    /// (reaped by someone else) counts as ended with 127, as `Producer.wait` has it.
    private func ended() -> Int32? {
        do throws(SystemError) {
            return try Syscall.childEnded(child.pid)
        } catch {
            return 127 << 8
        }
    }

    /// The signals waiting on the signalfd: their numbers, and whether a process sent them
    /// (kill, not the terminal).
    private func pendingSignals() -> [(number: Int32, fromProcess: Bool)] {
        var found: [(number: Int32, fromProcess: Bool)] = []
        var info = signalfd_siginfo()
        while let count = try? withUnsafeMutableBytes(of: &info, { raw throws(SystemError) in try Syscall.read(signals, into: raw) }),
            count == MemoryLayout<signalfd_siginfo>.size
        {
            found.append((Int32(info.ssi_signo), info.ssi_code <= 0))
        }
        return found
    }
}

/// The stream a followed command writes, read without blocking until its end.
private struct Stream {
    let fd: Int32
    let label: String
    private(set) var isOpen = true
    private var buffer = [UInt8](repeating: 0, count: 16384)

    init(fd: Int32, label: String) {
        self.fd = fd
        self.label = label
    }

    /// Hands what the stream holds now to `consume` (it never blocks); at its end (or an
    /// error) it is closed. A pseudo-terminal's main side ends in EIO once the other side
    /// is closed everywhere: that is its end, not an error.
    mutating func read(_ consume: ([UInt8]) -> Void) {
        while isOpen {
            let result = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(SystemError) in try Syscall.read(fd, into: raw) }
            }
            switch result {
            case .success(nil):
                return
            case .success(let count?) where count > 0:
                consume(Array(buffer[..<count]))
            case .success:
                close()
            case .failure(let error):
                if error.errno != EIO { printError("gaugectl: \(label): cannot read the command's output: \(errnoText(error.errno))") }
                close()
            }
        }
    }

    mutating func close() {
        if isOpen { Syscall.close(fd) }
        isOpen = false
    }
}
