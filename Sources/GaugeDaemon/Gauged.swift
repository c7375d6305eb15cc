import CGaugeLinux
import GaugeProtocol
import GaugeSystem

/// The daemon's command line: `gauged [OPTIONS]`, run until it is told to quit.
package enum Gauged {
    /// Runs the daemon with `arguments` (without the program name) and exits with its status:
    /// 0 after a quit, 1 when it could not start, 2 for a usage error.
    package static func main(_ arguments: [String]) -> Never {
        var environment: [String: String] = [:]
        if let socket = getenv("GAUGE_SOCKET") { environment["GAUGE_SOCKET"] = String(cString: socket) }
        if let themes = getenv("GAUGE_THEMES") { environment["GAUGE_THEMES"] = String(cString: themes) }

        switch DaemonOptions.parse(arguments, environment: environment, kernelCommandLine: kernelCommandLine()) {
        case .help:
            print(DaemonOptions.usage)
            exit(0)
        case .version:
            // GaugeVersion is the one version: gaugectl prints it too, and tools/package
            // builds the Debian package under it.
            print("gauged \(GaugeVersion.current)")
            exit(0)
        case .error(let message):
            Log().info("\(message) (try 'gauged --help')")
            exit(2)
        case .run(let options):
            // The terminal display draws where stderr usually goes: its log lines wait
            // until the picture is gone, rather than draw over it.
            let held = options.display == .terminal && Syscall.isTerminal(2) ? HeldLines() : nil
            var sink: Log.Sink = Log.forStandardError()
            if let held { sink = { held.append($0) } }
            let log = Log(verbose: options.verbose, sink: sink)
            // Before the display is opened: the old daemon holds it until it goes.
            let replaced = options.replace ? DaemonReplacement(socketPath: options.socketPath, log: log) : nil
            do {
                let daemon = try Daemon(options: options, log: log)
                let status = withExtendedLifetime(replaced) { daemon.run() }
                held?.release()
                // While the daemon lives: its end (a console left in graphics mode under a
                // retained frame) is what `run` left, not what tearing it down would do.
                exit(status)
            } catch {
                log.info("\(error)")
                held?.release()
                exit(1)
            }
        }
    }

    /// The kernel's command line (/proc/cmdline, at most 4 KiB), or "" where it cannot be read.
    private static func kernelCommandLine() -> String {
        Syscall.kernelText("/proc/cmdline", maxBytes: 4096) ?? ""
    }
}

/// Log lines held while the terminal display has the terminal, written once it is gone
/// (the newest `limit`, and how many older ones were dropped). One thread: the daemon's.
final class HeldLines: @unchecked Sendable {
    private var lines: [String] = []
    private var dropped = 0
    private let limit = 500

    func append(_ line: String) {
        if lines.count == limit {
            lines.removeFirst()
            dropped += 1
        }
        lines.append(line)
    }

    func release() {
        if dropped > 0 { Log.standardError("gauged: (\(dropped) earlier log lines dropped)\n") }
        for line in lines { Log.standardError(line) }
        lines = []
    }
}
