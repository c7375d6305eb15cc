import CGaugeLinux
import GaugeDaemon
import Glibc

var environment: [String: String] = [:]
if let socket = getenv("GAUGE_SOCKET") { environment["GAUGE_SOCKET"] = String(cString: socket) }

switch DaemonOptions.parse((1..<Int(CGL_argc())).map { String(cString: CGL_argv()[$0]!) }, environment: environment) {
case .help:
    print(DaemonOptions.usage)
    exit(0)
case .error(let message):
    Log().info("\(message) (try 'gauged --help')")
    exit(2)
case .run(let options):
    let log = Log(verbose: options.verbose)
    do {
        let daemon = try Daemon(options: options, log: log)
        exit(daemon.run())
    } catch {
        log.info("\(error)")
        exit(1)
    }
}
