import CGaugeLinux
import GaugeProtocol
import GaugeSystem
import GaugeTranslators

/// `gaugectl apt -- COMMAND ...`: runs apt-get, apt or dpkg with its status stream on a
/// pipe of gaugectl's own (`-o APT::Status-Fd=N`, `--status-fd N`) and shows it as one
/// bar (`AptStatusTranslator`); the command's own output goes where gaugectl's goes.
///
/// gaugectl never hangs on the command: the pipe is read without blocking, alongside a
/// signalfd that tells when the command ends (SIGCHLD), so a daemon a maintainer script
/// started, holding the pipe open, does not keep gaugectl waiting. SIGTERM, SIGINT and
/// SIGHUP sent to gaugectl are passed on to the command (not those the terminal sent the
/// whole process group, which the command got itself), and gaugectl goes on waiting for
/// it to end: a package manager stopped mid-run by force leaves a broken system.
enum AptCommand {
    struct Options {
        var command: AptCommandLine
        var bar = HonestBar.Settings()
    }

    /// The signals passed on to the command, and SIGCHLD, its end.
    private static let watched: [Int32] = [SIGTERM, SIGINT, SIGHUP, SIGCHLD]

    static func run(_ options: Options, invocation: Invocation) -> Never {
        let requests = RequestStream(invocation: invocation, label: "apt")
        let name = options.command.name
        var translator = AptStatusTranslator(
            settings: requests.withThemeStall(options.bar), dpkg: options.command.isDpkg, dpkgSteps: options.command.dpkgSteps)
        requests.send(translator.start(message: "Running \(name)", at: Deadline.now()))
        let signals: Int32
        let child: Producer
        let status: Int32
        do throws(SystemError) {
            signals = try watchSignals()
            (child, status) = try start(options.command)
        } catch {
            let (message, code) = Producer.startFailure(error)
            printError("gaugectl: apt: \(message)")
            requests.send(translator.finish(failure: message))
            exit(code)
        }
        let end = follow(child, status: status, signals: signals, requests, &translator)
        if let failure = Producer.failure(name, end) {
            printError("gaugectl: apt: \(failure)")
            requests.send(translator.finish(failure: failure))
            exit(Producer.exitCode(end))
        }
        requests.send(translator.finish(failure: nil))
        finish(requests.exitStatus)
    }

    /// Blocks the watched signals (the command gets them unblocked) and returns a
    /// signalfd for them.
    private static func watchSignals() throws(SystemError) -> Int32 {
        // A SIGCHLD inherited as ignored would reap the command before gaugectl saw its end.
        Syscall.defaultSignal(SIGCHLD)
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in watched { sigaddset(&mask, signal) }
        _ = try Syscall.signalMask(SIG_SETMASK, mask)
        return try Syscall.signalDescriptor(-1, mask: mask)
    }

    /// Starts the command with the pipe's write end as its status descriptor; the read
    /// end, non-blocking.
    private static func start(_ command: AptCommandLine) throws(SystemError) -> (Producer, Int32) {
        let ends = try Syscall.pipe()
        defer { Syscall.close(ends.write) }
        do throws(SystemError) {
            try Syscall.makeNonBlockingAndCloseOnExec(ends.read)
            let pid = try Syscall.spawn(
                command.arguments, passing: (ends.write, command.descriptor), defaultSignals: true)
            return (Producer(command: command.arguments, pid: pid), ends.read)
        } catch {
            Syscall.close(ends.read)
            throw error
        }
    }

    /// Reads the status stream and the signals until the command has ended (then what is
    /// left in the pipe, without waiting for its end); how it ended.
    private static func follow(
        _ child: Producer, status: Int32, signals: Int32, _ requests: RequestStream,
        _ translator: inout AptStatusTranslator
    ) -> Syscall.ChildEnd {
        var stream = StatusStream(fd: status)
        var passedOn = false
        while true {
            let now = Deadline.now()
            requests.send(translator.tick(at: now))
            var entries = [pollfd(fd: signals, events: Int16(POLLIN), revents: 0)]
            if stream.isOpen { entries.append(pollfd(fd: stream.fd, events: Int16(POLLIN), revents: 0)) }
            let wait = ProgressTicks.milliseconds(until: translator.nextTick(after: now))
            if (try? Syscall.poll(&entries, timeoutMilliseconds: wait)) == nil {
                // Should poll ever fail, wait a little rather than spin; the end is still checked.
                _ = try? Syscall.poll(-1, events: 0, timeoutMilliseconds: 100)
            }
            if entries.count > 1, entries[1].revents != 0 {
                handle(stream.read(), requests, &translator)
            }
            for signal in pendingSignals(signals) where signal.number != SIGCHLD {
                // The terminal sends its SIGINT to the whole group: the command has it.
                guard signal.fromProcess else { continue }
                try? Syscall.kill(child.pid, signal.number)
                if !passedOn {
                    passedOn = true
                    printError("gaugectl: apt: passed signal \(signal.number) on to \(child.name) (pid \(child.pid)); waiting for it to end")
                    requests.send(translator.note("Stopping: waiting for \(child.name) to end", at: Deadline.now()))
                }
            }
            if let status = ended(child) {
                handle(stream.read(), requests, &translator)
                stream.close()
                handle(stream.reader.finish(), requests, &translator)
                requests.complaints.flush()
                return Syscall.ChildEnd(status: status)
            }
        }
    }

    /// The command's wait status once it has ended; a command that cannot be waited for
    /// (reaped by someone else) counts as ended with 127, as `Producer.wait` has it.
    private static func ended(_ child: Producer) -> Int32? {
        do throws(SystemError) {
            return try Syscall.childEnded(child.pid)
        } catch {
            return 127 << 8
        }
    }

    private static func handle(_ items: [AptStatusReader.Item], _ requests: RequestStream, _ translator: inout AptStatusTranslator) {
        for item in items {
            switch item {
            case .event(let event): requests.send(translator.requests(for: event, at: Deadline.now()))
            case .problem(let text): requests.complaints.report(text)
            }
        }
    }

    /// The signals waiting on the signalfd: their numbers, and whether a process sent them
    /// (kill, not the terminal).
    private static func pendingSignals(_ fd: Int32) -> [(number: Int32, fromProcess: Bool)] {
        var signals: [(number: Int32, fromProcess: Bool)] = []
        var info = signalfd_siginfo()
        while let count = try? withUnsafeMutableBytes(of: &info, { raw throws(SystemError) in try Syscall.read(fd, into: raw) }),
            count == MemoryLayout<signalfd_siginfo>.size
        {
            signals.append((Int32(info.ssi_signo), info.ssi_code <= 0))
        }
        return signals
    }
}

/// The read end of the status pipe and the lines read from it so far.
private struct StatusStream {
    let fd: Int32
    private(set) var isOpen = true
    var reader = AptStatusReader()
    private var buffer = [UInt8](repeating: 0, count: 16384)

    init(fd: Int32) { self.fd = fd }

    /// What the pipe holds now (it never blocks); at its end (or an error) it is closed.
    mutating func read() -> [AptStatusReader.Item] {
        var items: [AptStatusReader.Item] = []
        while isOpen {
            let result = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(SystemError) in try Syscall.read(fd, into: raw) }
            }
            switch result {
            case .success(nil):
                return items
            case .success(let count?) where count > 0:
                items += reader.consume(buffer[..<count])
            case .success:
                close()
            case .failure(let error):
                printError("gaugectl: apt: cannot read the status stream: \(errnoText(error.errno))")
                close()
            }
        }
        return items
    }

    mutating func close() {
        if isOpen { Syscall.close(fd) }
        isOpen = false
    }
}
