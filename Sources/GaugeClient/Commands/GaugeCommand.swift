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
