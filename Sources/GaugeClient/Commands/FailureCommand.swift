import CGaugeLinux
import GaugeProtocol
import GaugeSystem
import GaugeTranslators

/// `gaugectl failure [--title TITLE] [--details FILE|-] [SUMMARY]`: reads the details (a
/// file, or stdin with `-`) to their end first, then puts up the failure screen with
/// `failure`, `failure-summary` and a `failure-line` per line, in one write over one
/// connection. Exit status as every request's: 0 all `ok`, 1 the first `err` (reported),
/// 3 no daemon.
enum FailureCommand {
    struct Settings {
        var title: String
        var summary: String?
        /// A path, `-` for stdin, nil: none.
        var details: String?
    }

    static func run(_ settings: Settings, _ invocation: Invocation) -> Never {
        var requests = [Request.failure(title: oneLine(settings.title))]
        if let summary = settings.summary { requests.append(.failureSummary(oneLine(summary))) }
        if let path = settings.details {
            requests += sentLines(read(path), source: path == "-" ? "stdin" : path).map { .failureLine($0) }
        }
        send(requests, invocation)
    }

    /// The lines to send: where some were left out, a first line saying how many, and the
    /// newest lines with it within the daemon's limits, so the daemon keeps the note too.
    static func sentLines(_ details: FailureDetails, source: String) -> [String] {
        var lines = details.lines[...]
        guard details.dropped > 0 else { return Array(lines) }
        var dropped = details.dropped
        var bytes = lines.reduce(0) { $0 + $1.utf8.count }
        while true {
            let note = FailureReport.prefix(
                "... \(dropped) earlier lines of \(source) not sent", bytes: Limits.maxFailureTextBytes)
            guard let oldest = lines.first,
                lines.count + 1 > Limits.maxFailureLines || bytes + note.utf8.count > Limits.maxFailureBytes
            else { return [note] + lines }
            lines = lines.dropFirst()
            bytes -= oldest.utf8.count
            dropped += 1
        }
    }

    /// An argument as one line of the box: line breaks become spaces, the rest cleaned as
    /// the details are.
    private static func oneLine(_ text: String) -> String {
        let spaced = text.unicodeScalars.map { $0 == "\n" || $0 == "\r" ? " " : $0 }
        return FailureDetails.clean(Array(String(String.UnicodeScalarView(spaced)).utf8))
    }

    /// The newest lines of `path` (stdin for `-`); exit status 1 when it cannot be read.
    private static func read(_ path: String) -> FailureDetails {
        var details = FailureDetails()
        let fd: Int32
        if path == "-" {
            fd = 0
        } else {
            do throws(SystemError) {
                fd = try Syscall.open(path, flags: O_RDONLY | O_NOCTTY | O_CLOEXEC)
            } catch {
                printError("gaugectl: failure: cannot open \(path): \(error)")
                finish(.daemonError)
            }
        }
        defer { if fd != 0 { Syscall.close(fd) } }
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let result = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(SystemError) in try Syscall.read(fd, into: raw) }
            }
            switch result {
            case .success(nil):
                // A non-blocking stdin with nothing yet: wait for it.
                _ = try? Syscall.poll(fd, events: Int16(POLLIN), timeoutMilliseconds: -1)
            case .success(0?):
                details.finish()
                return details
            case .success(let count?):
                details.consume(buffer[..<count])
            case .failure(let error):
                printError("gaugectl: failure: cannot read \(path == "-" ? "stdin" : path): \(error)")
                finish(.daemonError)
            }
        }
    }

    private static func send(_ requests: [Request], _ invocation: Invocation) -> Never {
        let session = DaemonSession(socketPath: invocation.socketPath, timeout: invocation.timeout)
        do throws(ConnectionFailure) {
            _ = try session.connect(waitingForDaemon: invocation.waitsForDaemon)
            for reply in try session.send(batch: requests) {
                if case .err(let error) = reply {
                    printError("gaugectl: \(error.code.rawValue): \(error.message)")
                    finish(.daemonError)
                }
            }
        } catch {
            printError("gaugectl: \(error.message)")
            finish(error.denied ? .denied : .noDaemon)
        }
        finish(.ok)
    }
}

extension CommandSpec {
    static let failure = CommandSpec(
        name: "failure", argumentsSynopsis: "[--title TITLE] [--details FILE|-] [SUMMARY...]",
        summary: "Put up the failure screen: what failed, in words, with the details",
        details: """
            Shows a box above the bar saying what failed: TITLE (default "\(FailureReport.defaultTitle)"),
            SUMMARY (several words are joined with single spaces), and the lines of FILE
            (- for stdin), read to their end first: the newest that fit show, and the box
            says how many older ones do not. Bytes that are not UTF-8 show as U+FFFD, escape
            sequences and control characters are left out, a tab becomes spaces, a carriage
            return starts its line over, and each line is cut at \(Limits.maxFailureTextBytes) bytes; gauged keeps the newest \(Limits.maxFailureLines)
            lines. The bar takes the failure state. 'gaugectl send failure-clear' takes
            the screen down again.
            """,
        options: [
            OptionSpec(name: "--title", alias: "-t", valueName: "TITLE", help: "The box's title"),
            OptionSpec(name: "--details", alias: "-d", valueName: "FILE|-", help: "Detail lines from FILE, or stdin for -"),
        ],
        positionals: 0...Int.max,
        makeAction: { arguments throws(UsageError) in
            let details = arguments.values["--details"]
            if details?.isEmpty == true { throw UsageError("--details needs a file, or - for stdin") }
            let settings = FailureCommand.Settings(
                title: arguments.values["--title"] ?? "", summary: arguments.positionals.isEmpty ? nil : text(arguments),
                details: details)
            return .run { FailureCommand.run(settings, $0) }
        },
        makeRequest: { _ throws(UsageError) in throw UsageError("failure is more than one request") })
}
