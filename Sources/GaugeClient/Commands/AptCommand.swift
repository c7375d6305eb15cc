import CGaugeLinux
import GaugeProtocol
import GaugeSystem
import GaugeTranslators

/// `gaugectl apt -- COMMAND ...`: runs apt-get, apt or dpkg with its status stream on a
/// pipe of gaugectl's own (`-o APT::Status-Fd=N`, `--status-fd N`) and shows it as one
/// bar (`AptStatusTranslator`); the command's own output goes where gaugectl's goes.
///
/// gaugectl never hangs on the command, nor stops it by force (`FollowedCommand`): a daemon
/// a maintainer script started may hold the pipe open, and a package manager stopped
/// mid-run by force leaves a broken system.
enum AptCommand {
    struct Options {
        var command: AptCommandLine
        var bar = HonestBar.Settings()
        var range: BarRange?
    }

    static func run(_ options: Options, invocation: Invocation) -> Never {
        let requests = RequestStream(invocation: invocation, label: "apt")
        requests.range = options.range
        let name = options.command.name
        var translator = AptStatusTranslator(
            settings: requests.withThemeStall(options.bar), dpkg: options.command.isDpkg, dpkgSteps: options.command.dpkgSteps)
        requests.send(translator.start(message: "Running \(name)", at: Deadline.now()))
        let command: FollowedCommand
        var status: Int32 = -1
        do throws(SystemError) {
            command = try FollowedCommand(label: "apt") { () throws(SystemError) in
                let started = try start(options.command)
                status = started.1
                return started.0
            }
        } catch {
            FollowedCommand.exit("apt", requests, startFailure: error) { translator.finish(failure: $0) }
        }
        var reader = AptStatusReader()
        let end = command.follow(
            stream: status,
            nextTick: { translator.nextTick(after: Deadline.now()) },
            tick: { requests.send(translator.tick(at: Deadline.now())) },
            consume: { handle(reader.consume($0), requests, &translator) },
            stopping: { requests.send(translator.note("Stopping: waiting for \(command.child.name) to end", at: Deadline.now())) })
        handle(reader.finish(), requests, &translator)
        command.exit(end, name: name, requests) { translator.finish(failure: $0) }
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

    private static func handle(_ items: [AptStatusReader.Item], _ requests: RequestStream, _ translator: inout AptStatusTranslator) {
        for item in items {
            switch item {
            case .event(let event): requests.send(translator.requests(for: event, at: Deadline.now()))
            case .problem(let text): requests.complaints.report(text)
            }
        }
    }
}
