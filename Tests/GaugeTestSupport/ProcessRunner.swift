import Foundation
import Glibc

// Running the built programs from the tests: finding the executables, the environment a
// child gets, running one to completion, and a scratch directory for its files.

/// A built executable that is not there (the tests need `swift build --build-tests` first).
package struct MissingBinary: Error, CustomStringConvertible {
    package let name: String
    package var description: String { "\(name) not found next to the test bundle; run `swift build --build-tests` first" }
}

/// The built executables. `swift build --build-tests` builds every product next to the
/// test bundle; GAUGED / GAUGECTL override where they are looked for.
package enum BuiltBinary {
    package static let gauged = locate("gauged", override: "GAUGED")
    package static let gaugectl = locate("gaugectl", override: "GAUGECTL")
    /// The tests' D-Bus replay service (Tests/DBusReplay).
    package static let dbusReplay = locate("gauge-dbus-replay", override: "GAUGE_DBUS_REPLAY")

    private static func locate(_ name: String, override: String) -> String? {
        var candidates: [String] = []
        if let path = ProcessInfo.processInfo.environment[override] { candidates.append(path) }
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        candidates.append(runner.deletingLastPathComponent().appendingPathComponent(name).path)
        if let executable = Bundle.main.executableURL {
            candidates.append(executable.deletingLastPathComponent().appendingPathComponent(name).path)
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/\(name)").path)
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// `path`, or a thrown MissingBinary naming `name`.
    package static func require(_ path: String?, _ name: String) throws -> String {
        guard let path else { throw MissingBinary(name: name) }
        return path
    }
}

/// Seconds on CLOCK_MONOTONIC.
package func monotonicNow() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// The environment a spawned program gets: the test's own, minus what would confuse it.
package func childEnvironment(_ extra: [String: String] = [:]) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    for name in ["GAUGE_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "NOTIFY_SOCKET"] {
        environment[name] = nil
    }
    environment.merge(extra) { $1 }
    return environment
}

package struct ProgramRun {
    package var status: Int32
    package var stdout: String
    package var stderr: String
    package var seconds: Double
}

/// Runs `path` to completion (stdin /dev/null, in `directory` if given) and collects its output.
package func runProgram(
    _ path: String, _ arguments: [String], environment: [String: String] = [:], directory: String? = nil
) throws -> ProgramRun {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.environment = childEnvironment(environment)
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    let start = monotonicNow()
    try process.run()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProgramRun(
        status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData, as: UTF8.self), seconds: monotonicNow() - start)
}

/// A scratch directory under /tmp with a short name (socket paths must fit 108 bytes),
/// removed on deinit.
package final class TemporaryDirectory: @unchecked Sendable {
    package let path: String

    package init() {
        var template = Array("/tmp/gauge-test-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    package func appending(_ name: String) -> String { path + "/" + name }
}
