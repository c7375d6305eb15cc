import GaugeProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// `gaugectl swupdate`: follows SWUpdate's progress socket and drives gauged with it
/// (see `SWUpdateProgressTranslator` for what each status becomes). Runs until killed;
/// reconnects every second while SWUpdate is not there.
enum SWUpdateCommand {
    static let defaultSocketPath = "/tmp/swupdateprog"
    static let retrySeconds: UInt32 = 1

    static func run(
        progressSocket: String, layout: SWUpdateProgressMessage.Layout?, socketPath: String, timeout: Double?
    ) -> Never {
        unblockSignals()
        let requests = RequestStream(
            session: DaemonSession(socketPath: socketPath, timeout: timeout), label: "swupdate")
        var stream = SWUpdateProgressStream(layout: layout)
        var translator = SWUpdateProgressTranslator()
        var waitingReported = false
        while true {
            let fd: Int32
            do {
                fd = try DaemonConnection.connect(to: progressSocket, deadline: Deadline(seconds: 2))
            } catch {
                if !waitingReported {
                    printError("gaugectl: swupdate: waiting for SWUpdate's progress socket \(progressSocket)")
                    waitingReported = true
                }
                sleep(retrySeconds)
                continue
            }
            printError("gaugectl: swupdate: connected to \(progressSocket)")
            waitingReported = false
            stream.reset()
            follow(fd, &stream, &translator, requests)
            close(fd)
            printError("gaugectl: swupdate: \(progressSocket) closed; reconnecting")
            waitingReported = true
            sleep(retrySeconds)
        }
    }

    /// Reads the connection until it closes.
    private static func follow(
        _ fd: Int32, _ stream: inout SWUpdateProgressStream, _ translator: inout SWUpdateProgressTranslator,
        _ requests: RequestStream
    ) {
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return
            }
            if count == 0 { return }
            for event in stream.consume(buffer[..<count]) {
                switch event {
                case .connected:
                    break
                case .message(let message):
                    for request in translator.requests(for: message) { requests.send(request) }
                case .problem(let text):
                    printError("gaugectl: swupdate: \(text)")
                }
            }
        }
    }
}

/// Long-running commands end on SIGTERM / SIGINT, even when started by a process that
/// left them blocked (a signal mask is inherited across exec).
func unblockSignals() {
    var none = sigset_t()
    sigemptyset(&none)
    sigprocmask(SIG_SETMASK, &none, nil)
}
