import Foundation
import Glibc
import Testing
import GaugeTestSupport

/// A failure screen's script (integration/gauge-boot-failed, the initramfs panic script)
/// run against a test daemon: its `gaugectl wait-key` answers with the line the test
/// writes into a FIFO (the daemon's own wait-key, on keyboards, is `EscapeWatchTests`'),
/// every other call is the real gaugectl's. Every call's arguments are logged (`calls`), a
/// line each, and what it read as `--details -` after it, each line behind "| ".
struct FailureScript {
    let process = Process()
    /// The FIFO `press` writes the key into.
    let keys: String
    /// The log of gaugectl's calls.
    let callLog: String

    /// Starts `/bin/sh SCRIPT ARGUMENTS` (a path in the repository) with `environment`
    /// and GAUGECTL, GAUGE_SOCKET set; `executables` (path, text) are written first and
    /// made executable. `tag` names this script's FIFO, gaugectl and log apart from another
    /// one's on the same daemon.
    init(_ script: String, _ arguments: [String] = [], daemon: GaugedProcess, environment: [String: String],
         executables: [(String, String)] = [], tag: String = "") throws {
        let directory = daemon.directory
        keys = directory.appending("keys\(tag)")
        callLog = directory.appending("gaugectl\(tag).log")
        #expect(mkfifo(keys, 0o600) == 0)
        let wrapper = directory.appending("gaugectl\(tag)")
        let details = directory.appending("details\(tag)")
        let files = executables + [(wrapper, """
            #!/bin/sh
            printf '%s\\n' "$*" >> \(callLog)
            if [ "$*" = "--no-wait --timeout 0 wait-key" ]; then read -r key < \(keys); echo "$key"; exit 0; fi
            case " $* " in
              *" --details - "*) cat > \(details); sed 's/^/| /' \(details) >> \(callLog); exec < \(details) ;;
            esac
            exec \(try BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl")) "$@"
            """)]
        for (path, text) in files {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            chmod(path, 0o755)
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [root.appendingPathComponent(script).path] + arguments
        process.environment = childEnvironment(environment.merging(["GAUGECTL": wrapper, "GAUGE_SOCKET": daemon.socketPath]) { $1 })
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
    }

    /// Answers its `wait-key` with `key` (`enter`, `r`, or an empty line: no keyboards).
    func press(_ key: String) throws {
        let handle = try #require(FileHandle(forWritingAtPath: keys))
        handle.write(Data((key + "\n").utf8))
        try handle.close()
    }

    /// Whether it ended within `seconds`.
    func waitForExit(seconds: Double = 10) -> Bool {
        let deadline = monotonicNow() + seconds
        while process.isRunning && monotonicNow() < deadline { usleep(10_000) }
        return !process.isRunning
    }

    func stop() { if process.isRunning { process.terminate() } }

    /// gaugectl's calls so far (see the type).
    var calls: String { (try? String(contentsOfFile: callLog, encoding: .utf8)) ?? "" }
}
