import CGaugeLinux
import GaugeProtocol
import GaugeTranslators
import GaugeSystem

/// `gaugectl gauge`: what installer scripts pipe into `dialog --gauge`, sent to gauged
/// over one connection, a request per update (see `DialogGaugeReader` for the format
/// and `RequestStream` for what happens when the daemon errs or goes away).
enum GaugeCommand {
    /// What `--on-eof` asks for once stdin ends.
    enum EndOfStream: String, Sendable {
        /// `state success`: the bar fills and shows the success mark.
        case success
        /// `quit`, returning once the daemon has given the display back and gone.
        case quit
        /// Nothing: the screen stays as the stream left it.
        case keep
    }

    /// Reads stdin, or what `command` (run here) writes to its standard output, to its end.
    static func run(
        first: [Request], atEnd: EndOfStream, command: [String]?, range: BarRange?, socketPath: String, timeout: Double?,
        waitsForDaemon: Bool
    ) -> Never {
        unblockSignals()
        let stream = RequestStream(
            session: DaemonSession(socketPath: socketPath, timeout: timeout), label: "gauge",
            waitsForDaemon: waitsForDaemon)
        stream.range = range
        stream.send(first)
        var input: Int32 = 0
        var producer: Producer?
        if let command {
            do throws(SystemError) {
                (producer, input) = try Producer.start(command, descriptor: 1)
            } catch {
                let (message, code) = Producer.startFailure(error)
                printError("gaugectl: gauge: \(message)")
                stream.send(.state(.failure, message: CompatText.clean(message)))
                exit(code)
            }
        }
        follow(input, stream)
        if let producer {
            let end = producer.wait()
            if let failure = Producer.failure(producer.name, end) {
                printError("gaugectl: gauge: \(failure)")
                stream.send(.state(.failure, message: failure))
                exit(Producer.exitCode(end))
            }
        }
        switch atEnd {
        case .success:
            stream.send(.state(.success, message: nil))
        case .quit:
            if stream.send(.quit(retain: false)) { stream.waitForClose() }
        case .keep:
            break
        }
        finish(stream.exitStatus)
    }

    /// Reads the dialog --gauge stream on `input` to its end, sending what it says.
    private static func follow(_ input: Int32, _ stream: RequestStream) {
        var reader = DialogGaugeReader()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let result = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(SystemError) in try Syscall.read(input, into: raw) }
            }
            switch result {
            case .success(nil):
                // A non-blocking stdin with nothing yet: wait for it.
                _ = try? Syscall.poll(input, events: Int16(POLLIN), timeoutMilliseconds: -1)
                continue
            case .success(0?):
                break
            case .success(let count?):
                handle(reader.consume(buffer[..<count]), stream)
                continue
            case .failure(let error):
                printError("gaugectl: gauge: cannot read stdin: \(error)")
            }
            break
        }
        handle(reader.finish(), stream)
        stream.complaints.flush()
    }

    private static func handle(_ events: [DialogGaugeReader.Event], _ stream: RequestStream) {
        for event in events {
            switch event {
            case .request(let request): stream.send(request)
            case .warning(let text): stream.complaints.report(text)
            }
        }
    }
}

extension CommandSpec {
    static let gauge = CommandSpec(
        name: "gauge", argumentsSynopsis: "[--title TEXT] [--message TEXT] [--on-eof success|quit|keep] [-- CMD...]",
        summary: "Read a dialog/whiptail --gauge stream from stdin (or COMMAND) and show it",
        details: """
            A number per line moves the bar; XXX, a number, text lines, XXX sets the number
            and the message (dialog's format; \\n in the text is a line break, and two
            lines show). Runs until EOF, then does what --on-eof says: success (the
            default) fills the bar and shows the success mark, as the work is done when
            dialog's gauge closes; quit stops the daemon (returning once it has given the
            display back); keep leaves the screen as the stream left it (more phases to
            come). One connection; an err reply is reported and reading goes on; a lost
            daemon is reported, its updates dropped and reconnection tried each second
            (a new daemon gets the title and message again), and stdin is always read to
            EOF, so the writer never gets SIGPIPE. Exit status: 0 all ok, 1 an err reply,
            3 an update not delivered.

            With -- COMMAND [ARG...], gaugectl runs COMMAND and reads what it writes to its
            standard output instead of stdin; when the stream ends COMMAND's exit status
            decides: 0 does what --on-eof says, anything else (or a COMMAND that cannot be
            started) shows failure naming it, and gaugectl exits with COMMAND's status
            (127 not found, 128+N killed by signal N), which a pipeline's first command
            cannot give. Example:
              gaugectl gauge --title Installing -- ./install.sh
            """,
        options: [
            OptionSpec(name: "--title", alias: "-t", valueName: "TEXT", help: "Set the title first"),
            OptionSpec(name: "--message", alias: "-m", valueName: "TEXT", help: "Set the message first"),
            OptionSpec(name: "--on-eof", valueName: "success|quit|keep", help: "What to do at the end of the stream (default success)"),
            BarRange.option,
        ],
        runsCommand: true,
        makeAction: { arguments throws(UsageError) in
            var first: [Request] = []
            if let title = arguments.values["--title"] { first.append(.title(title)) }
            if let message = arguments.values["--message"] { first.append(.message(lineBreaks(message))) }
            for request in first { _ = try validated(request) }
            let word = arguments.values["--on-eof"] ?? GaugeCommand.EndOfStream.success.rawValue
            guard let atEnd = GaugeCommand.EndOfStream(rawValue: word) else {
                throw UsageError("--on-eof must be success, quit or keep, not '\(word)'")
            }
            return .gauge(first: first, atEnd: atEnd, command: arguments.command, range: try BarRange.parse(arguments))
        },
        makeRequest: { _ throws(UsageError) in throw UsageError("gauge is not one request") })
}
