import CGaugeLinux
import GaugeProtocol
import GaugeTranslators
import GaugeSystem

/// `gaugectl swupdate`: follows SWUpdate's progress socket and drives gauged with it
/// (see `SWUpdateProgressTranslator` for what each status becomes). Runs until killed;
/// reconnects every second while SWUpdate is not there.
enum SWUpdateCommand {
    static let defaultSocketPath = "/tmp/swupdateprog"
    static let retryMilliseconds: Int32 = 1000

    static func run(
        progressSocket: String, layout: SWUpdateProgressMessage.Layout?, bar: HonestBar.Settings = HonestBar.Settings(),
        socketPath: String, timeout: Double?, waitsForDaemon: Bool
    ) -> Never {
        unblockSignals()
        let requests = RequestStream(
            session: DaemonSession(socketPath: socketPath, timeout: timeout), label: "swupdate",
            waitsForDaemon: waitsForDaemon)
        var stream = SWUpdateProgressStream(layout: layout)
        var translator = SWUpdateProgressTranslator(settings: requests.withThemeStall(bar))
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
                _ = try? Syscall.poll(-1, events: 0, timeoutMilliseconds: retryMilliseconds)
                continue
            }
            printError("gaugectl: swupdate: connected to \(progressSocket)")
            waitingReported = false
            stream.reset()
            follow(fd, &stream, &translator, requests)
            Syscall.close(fd)
            requests.complaints.flush()
            printError("gaugectl: swupdate: \(progressSocket) closed; reconnecting")
            waitingReported = true
            _ = try? Syscall.poll(-1, events: 0, timeoutMilliseconds: retryMilliseconds)
        }
    }

    /// Reads the connection until it closes, ticking the bar in between (creep, stall).
    private static func follow(
        _ fd: Int32, _ stream: inout SWUpdateProgressStream, _ translator: inout SWUpdateProgressTranslator,
        _ requests: RequestStream
    ) {
        var received: [UInt8] = []
        while true {
            let now = Deadline.now()
            requests.send(translator.tick(at: now))
            guard let ready = try? Syscall.poll(
                fd, events: Int16(POLLIN), timeoutMilliseconds: ProgressTicks.milliseconds(until: translator.nextTick(after: now)))
            else { return }
            guard ready != 0 else { continue }
            received.removeAll(keepingCapacity: true)
            let more = try? DaemonConnection.receive(
                from: fd, onto: &received, path: "SWUpdate's progress socket", deadline: Deadline(seconds: nil))
            guard more == true else { return }
            for event in stream.consume(received) {
                switch event {
                case .connected:
                    break
                case .message(let message):
                    requests.send(translator.requests(for: message, at: Deadline.now()))
                case .problem(let text):
                    requests.complaints.report(text)
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
    _ = try? Syscall.signalMask(SIG_SETMASK, none)
}

extension CommandSpec {
    static let swupdate = CommandSpec(
        name: "swupdate", argumentsSynopsis: "[--progress-socket PATH] [--layout auto|packed|aligned]",
        summary: "Show SWUpdate's progress (its progress socket) until killed",
        details: """
            Connects to SWUpdate's progress socket (progress API 2.x) and turns its messages
            into progress, message and success/failure states. When SWUpdate is not there
            or goes away, it tries again every second. --progress-socket is SWUpdate's;
            gauged's socket is --socket, before the command. --layout: how SWUpdate lays
            out progress_msg (aligned: up to 2025.05 on 64-bit/ARM; packed: later releases
            and 32-bit x86); auto tells them apart from the stream.
            """ + "\n" + ProgressTicks.swupdateDetails,
        options: [
            OptionSpec(
                name: "--progress-socket", valueName: "PATH",
                help: "SWUpdate's progress socket (default \(SWUpdateCommand.defaultSocketPath))"),
            OptionSpec(name: "--layout", valueName: "auto|packed|aligned", help: "The progress_msg layout (default auto)"),
        ] + ProgressTicks.options,
        makeAction: { arguments throws(UsageError) in
            let path = arguments.values["--progress-socket"] ?? SWUpdateCommand.defaultSocketPath
            guard !path.isEmpty else { throw UsageError("--progress-socket needs a path") }
            let layout: SWUpdateProgressMessage.Layout?
            switch arguments.values["--layout"] ?? "auto" {
            case "auto": layout = nil
            case let word:
                guard let chosen = SWUpdateProgressMessage.Layout(rawValue: word) else {
                    throw UsageError("--layout must be auto, packed or aligned, not '\(word)'")
                }
                layout = chosen
            }
            return .swupdate(progressSocket: path, layout: layout, bar: try ProgressTicks.settings(arguments))
        },
        makeRequest: { _ throws(UsageError) in throw UsageError("swupdate is not one request") })
}
