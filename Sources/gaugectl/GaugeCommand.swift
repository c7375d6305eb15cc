import GaugeProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// `gaugectl gauge`: what installer scripts pipe into `dialog --gauge`, sent to gauged
/// over one connection, a request per update (see `DialogGaugeReader` for the format
/// and `RequestStream` for what happens when the daemon errs or goes away).
enum GaugeCommand {
    static func run(first: [Request], socketPath: String, timeout: Double?) -> ExitStatus {
        unblockSignals()
        let stream = RequestStream(session: DaemonSession(socketPath: socketPath, timeout: timeout), label: "gauge")
        for request in first { stream.send(request) }
        var reader = DialogGaugeReader()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                printError("gaugectl: gauge: cannot read stdin: \(String(cString: strerror(errno)))")
                break
            }
            if count == 0 { break }
            handle(reader.consume(buffer[..<count]), stream)
        }
        handle(reader.finish(), stream)
        return stream.exitStatus
    }

    private static func handle(_ events: [DialogGaugeReader.Event], _ stream: RequestStream) {
        for event in events {
            switch event {
            case .request(let request): stream.send(request)
            case .warning(let text): printError("gaugectl: gauge: \(text)")
            }
        }
    }
}
