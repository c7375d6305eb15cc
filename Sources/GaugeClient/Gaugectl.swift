import CGaugeLinux
import GaugeProtocol
import GaugeSystem

enum ExitStatus: Int32 {
    case ok = 0
    case daemonError = 1
    case usage = 2
    case noDaemon = 3
    /// The socket's permissions refused this user.
    case denied = 4
}

func printError(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { bytes in
        var rest = UnsafeRawBufferPointer(bytes)
        while !rest.isEmpty {
            guard let written = try? Syscall.write(2, rest), written > 0 else { return }
            rest = UnsafeRawBufferPointer(rebasing: rest[written...])
        }
    }
}

func finish(_ status: ExitStatus) -> Never {
    exit(status.rawValue)
}

/// gaugectl: sends one request to gauged and reports the outcome in its exit status
/// (0 ok, 1 the daemon answered err, 2 usage, 3 no daemon or timeout, 4 the socket's
/// permissions refuse this user).
package enum Gaugectl {
    /// Runs the command in `arguments` (without the program name) and exits with its status.
    package static func main(_ arguments: [String]) -> Never {
        // A daemon that goes away mid-call must give exit status 3, not kill us.
        Syscall.ignoreSignal(SIGPIPE)
        let invocation = parse(arguments)
        switch invocation.action {
        case .help(let command):
            print(command.map(Help.command) ?? Help.overview())
            finish(.ok)
        case .version:
            print("gaugectl \(GaugeVersion.current)")
            finish(.ok)
        case .gauge(let first, let atEnd, let command, let range):
            GaugeCommand.run(
                first: first, atEnd: atEnd, command: command, range: range, socketPath: invocation.socketPath,
                timeout: invocation.timeout, waitsForDaemon: invocation.waitsForDaemon)
        case .consoleReset(let tty, let pidFile):
            resetConsole(tty: tty, pidFile: pidFile)
        case .run(let body):
            body(invocation)
        case .swupdate(let progressSocket, let layout, let bar):
            SWUpdateCommand.run(
                progressSocket: progressSocket, layout: layout, bar: bar, socketPath: invocation.socketPath,
                timeout: invocation.timeout, waitsForDaemon: invocation.waitsForDaemon)
        case .send(let request):
            send(request, invocation)
        }
    }

    /// The command line, or its problem and the usage on stderr and exit status 2.
    private static func parse(_ arguments: [String]) -> Invocation {
        do {
            return try ArgumentParser.parse(arguments) { name in
                getenv(name).map { String(cString: $0) }
            }
        } catch {
            printError("gaugectl: \(error.message)")
            if let command = error.command {
                printError("Usage: gaugectl \(command.usage)\nTry 'gaugectl \(command.name) --help'.")
            } else {
                printError("Try 'gaugectl --help'.")
            }
            finish(.usage)
        }
    }

    private static func resetConsole(tty: String, pidFile: String?) -> Never {
        // The pid file first: a console that cannot be reset is no reason to keep
        // systemd's console agent away.
        let pidProblem = pidFile.flatMap(ConsoleReset.removeStalePIDFile)
        if let pidProblem { printError("gaugectl: \(pidProblem)") }
        if let problem = ConsoleReset.run(tty: tty) {
            printError("gaugectl: \(problem)")
            finish(.daemonError)
        }
        finish(pidProblem == nil ? .ok : .daemonError)
    }

    /// One request to the daemon (with the file it passes, if any) and its reply, printed
    /// as the request asks; the exit status says how it went.
    private static func send(_ request: OutgoingRequest, _ invocation: Invocation) -> Never {
        var passed: PassedFile?
        if let path = request.fileToPass {
            guard let file = PassedFile.open(path) else { finish(.daemonError) }
            passed = file
        }
        let replyLine: String
        do {
            replyLine = try DaemonConnection.exchange(
                line: request.line, socketPath: invocation.socketPath,
                deadline: Deadline(seconds: invocation.timeout),
                waitingForDaemon: request.waitsForDaemon ?? invocation.waitsForDaemon,
                announcingWait: request.waitsForDaemon == nil,
                awaitingClose: request.awaitsClose, passing: passed?.fd)
        } catch {
            passed?.abandon()
            if request.succeedsWhenAbsent, !error.denied { finish(.ok) }
            printError("gaugectl: \(error.message)")
            finish(error.denied ? .denied : .noDaemon)
        }
        if case .ok = Reply.parse(replyLine) { passed?.keep() } else { passed?.abandon() }
        if request.succeedsWhenAbsent {
            printError("gaugectl: a daemon answers on \(invocation.socketPath)")
            finish(.daemonError)
        }
        report(reply: replyLine, for: request, socketPath: invocation.socketPath)
    }

    private static func report(reply replyLine: String, for request: OutgoingRequest, socketPath: String) -> Never {
        switch Reply.parse(replyLine) {
        case .ok(let payload):
            guard let payload else { finish(.ok) }
            switch request.output {
            case .payload, .status(json: true):
                print(payload)
            case .status(json: false):
                print(Status.parse(json: payload)?.humanReadable ?? payload)
            case .theme:
                print(themeText(payload) ?? payload)
            }
            finish(.ok)
        case .err(let error):
            // "unknown theme key ...", not "unknown: unknown theme key ...".
            let named = error.message.hasPrefix(error.code.rawValue + " ") || error.message.hasPrefix(error.code.rawValue + ":")
            printError("gaugectl: \(named ? "" : "\(error.code.rawValue): ")\(error.message)")
            finish(.daemonError)
        case nil:
            let shown = CompatText.quoted(replyLine, limit: 80)
            printError("gaugectl: \(socketPath) sent something that is not a gauged reply: \(shown)")
            finish(.noDaemon)
        }
    }
}

/// A source's complaints about its input on stderr (`gaugectl: LABEL: TEXT`), a few a
/// second at most (`ComplaintLimiter`): garbage on a progress socket or stream must not
/// become one line per bad message.
final class Complaints {
    private let label: String
    private var limiter = ComplaintLimiter()

    init(label: String) { self.label = label }

    func report(_ text: String) {
        for line in limiter.lines(for: text, at: Deadline.now()) { printError("gaugectl: \(label): \(line)") }
    }

    /// Says how many were held back, if any (at the end of the input).
    func flush() {
        if let line = limiter.heldBack() { printError("gaugectl: \(label): \(line)") }
    }
}
