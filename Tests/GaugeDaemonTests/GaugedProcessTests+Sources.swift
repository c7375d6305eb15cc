import Foundation
import GaugeProtocol
import Glibc
import Testing
import GaugeTestSupport

// The update tools' progress sources (`gaugectl bootc`, ...) driving the real gauged on
// the memory display: each checks the daemon's status sequence — never backwards, the
// tool's messages, the right end state.

/// Samples the daemon's status in the background until stopped, so a test can check
/// every value the bar took, not only those it waited for.
final class StatusSampler: @unchecked Sendable {
    private let lock = NSLock()
    private var samples: [Status] = []
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    init(_ daemon: GaugedProcess) {
        let path = daemon.socketPath
        Thread { [self] in
            while !lock.withLock({ stopped }) {
                if let connection = try? LineConnection(path: path, timeout: 5), let status = try? connection.status() {
                    lock.withLock { samples.append(status) }
                }
                usleep(1_000)
            }
            done.signal()
        }.start()
    }

    /// Stops sampling and returns what was seen.
    func stop() -> [Status] {
        lock.withLock { stopped = true }
        done.wait()
        return lock.withLock { samples }
    }
}

/// `gaugectl` with `arguments`, stdin a pipe the test writes into.
final class PipedGaugectl {
    let process = Process()
    private let input = Pipe()
    private let errors = Pipe()

    init(_ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: try BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl"))
        process.arguments = arguments
        process.environment = childEnvironment()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
    }

    private var errorText: [UInt8] = []

    func write(_ text: String) {
        input.fileHandleForWriting.write(Data(text.utf8))
    }

    /// Waits (30 s at most) until gaugectl has logged `text` (`times` times in all);
    /// whether it did.
    func waitForError(containing text: String, times: Int = 1) -> Bool {
        let fd = errors.fileHandleForReading.fileDescriptor
        let deadline = monotonicNow() + 30
        while monotonicNow() < deadline {
            if String(decoding: errorText, as: UTF8.self).components(separatedBy: text).count > times { return true }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) >= 0 else { return false }
            guard entry.revents != 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(fd, &chunk, chunk.count)
            guard count > 0 else { return false }
            errorText += chunk[..<count]
        }
        return false
    }

    /// Stops a command that runs until killed (SIGTERM); its exit status and log.
    func terminate() -> (status: Int32?, stderr: String) {
        process.terminate()
        return close()
    }

    /// Ends the input and waits for the exit (the test fails rather than hangs).
    func close(within seconds: Double = 30) -> (status: Int32?, stderr: String) {
        try? input.fileHandleForWriting.close()
        let deadline = monotonicNow() + seconds
        while process.isRunning && monotonicNow() < deadline { usleep(5_000) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            return (nil, "")
        }
        let rest = errors.fileHandleForReading.readDataToEndOfFile()
        return (process.terminationStatus, String(decoding: errorText + rest, as: UTF8.self))
    }
}

/// What bootc (a release with the `Start` event) writes to --progress-fd for an upgrade
/// that fetches two layers (100 and 200 MB) and stages the image; each line with the
/// status it must lead to (target, start of the message).
private let bootcUpgrade: [(line: String, target: Double, message: String)] = [
    (#"{"type":"Start","version":"0.1.0"}"#, 0, "Starting"),
    (#"{"type":"ProgressBytes","task":"pulling","description":"Pulling Image: sha256:5e1f","id":"sha256:5e1f","bytesCached":0,"bytes":0,"bytesTotal":300000000,"stepsCached":4,"steps":0,"stepsTotal":2,"subtasks":[{"subtask":"ostree_chunk","description":"ostree chunk","id":"a1","bytesCached":0,"bytes":50000000,"bytesTotal":100000000}]}"#,
     13.3, "Pulling Image: sha256:5e1f"),
    (#"{"type":"ProgressBytes","task":"pulling","description":"Pulling Image: sha256:5e1f","id":"sha256:5e1f","bytesCached":0,"bytes":100000000,"bytesTotal":300000000,"stepsCached":4,"steps":1,"stepsTotal":2,"subtasks":[{"subtask":"ostree_chunk","description":"ostree chunk","id":"a1","bytesCached":0,"bytes":100000000,"bytesTotal":100000000},{"subtask":"ostree_chunk","description":"ostree chunk","id":"b2","bytesCached":0,"bytes":150000000,"bytesTotal":200000000}]}"#,
     66.6, "Pulling Image: sha256:5e1f"),
    (#"{"type":"ProgressBytes","task":"pulling","description":"Pulling Image: sha256:5e1f","id":"sha256:5e1f","bytesCached":0,"bytes":300000000,"bytesTotal":300000000,"stepsCached":4,"steps":2,"stepsTotal":2,"subtasks":[]}"#,
     80, "Pulling Image: sha256:5e1f"),
    (#"{"type":"ProgressSteps","task":"staging","description":"Deploying Image","id":"sha256:5e1f","stepsCached":0,"steps":0,"stepsTotal":3,"subtasks":[{"subtask":"merging","description":"Merging Image","id":"fetching","completed":false}]}"#,
     80, "Merging Image"),
    (#"{"type":"ProgressSteps","task":"staging","description":"Deploying Image","id":"sha256:5e1f","stepsCached":0,"steps":1,"stepsTotal":3,"subtasks":[{"subtask":"merging","description":"Merging Image","id":"fetching","completed":true},{"subtask":"deploying","description":"Deploying Image","id":"deploying","completed":false}]}"#,
     86.6, "Deploying Image"),
    (#"{"type":"ProgressSteps","task":"staging","description":"Deploying Image","id":"sha256:5e1f","stepsCached":0,"steps":3,"stepsTotal":3,"subtasks":[{"subtask":"merging","description":"Merging Image","id":"fetching","completed":true},{"subtask":"deploying","description":"Deploying Image","id":"deploying","completed":true}]}"#,
     // Every step done, the stream still open: not the end yet.
     99.9, "Deploying Image"),
]

@Suite struct GaugedSourceTests {
    /// The stall time comes from the daemon's theme (`stall_time`, in its status) unless
    /// --stall is given.
    @Test func theStallTimeIsTheThemesUnlessStallOverridesIt() throws {
        let start = #"{"type":"Start","version":"0.1.0"}"#
        let daemon = try GaugedProcess(["--fps", "60"])
        #expect(try daemon.status().stallTime == 20, "the default")
        #expect(try gaugectl(["--socket", daemon.socketPath, "theme", "stall_time=0.3"]).status == 0)
        #expect(try daemon.status().stallTime == 0.3)
        let themed = try PipedGaugectl(["--socket", daemon.socketPath, "bootc", "--creep", "0"])
        themed.write(start + "\n")
        // Well before the default's 20 s.
        try daemon.waitForStatus(seconds: 10) { $0.state == .running && $0.mode == .indeterminate }
        #expect(themed.close().status == 0)

        // The theme says never; --stall says 0.3 s.
        #expect(try gaugectl(["--socket", daemon.socketPath, "theme", "stall_time=0"]).status == 0)
        #expect(try daemon.status().mode == .determinate, "the end of bootc's stream ended the stall")
        let overridden = try PipedGaugectl(["--socket", daemon.socketPath, "bootc", "--creep", "0", "--stall", "0.3"])
        overridden.write(start + "\n")
        try daemon.waitForStatus { $0.state == .running && $0.mode == .indeterminate }
        #expect(overridden.close().status == 0)
    }

    @Test func bootcUpgradeIsOneBarEndingInSuccess() throws {
        let daemon = try GaugedProcess(["--fps", "60"])
        let sampler = StatusSampler(daemon)
        let client = try PipedGaugectl(["--socket", daemon.socketPath, "bootc", "--creep", "0", "--stall", "0"])
        var seen: [Status] = []
        for step in bootcUpgrade {
            client.write(step.line + "\n")
            seen.append(try daemon.waitForStatus {
                $0.target == step.target && $0.message.hasPrefix(step.message) && $0.state == .running
            })
        }
        // The megabytes go on the message's second line.
        #expect(seen[2].message == "Pulling Image: sha256:5e1f\u{2028}250.0 of 300.0 MB")
        let end = client.close()
        #expect(end.status == 0, "\(end.stderr)")
        let final = try daemon.waitForStatus { $0.state == .success }
        #expect(final.target == 100 && final.message == "Update ready")
        let samples = sampler.stop()
        #expect(!samples.isEmpty)
        for (before, after) in zip(samples, samples.dropFirst()) {
            #expect(after.target >= before.target, "the bar went back from \(before.target) to \(after.target)")
            #expect(after.shown >= before.shown, "the shown value went back from \(before.shown) to \(after.shown)")
        }
        #expect(!samples.contains { $0.state == .failure || $0.mode == .indeterminate })
        #expect(!samples.contains { $0.state == .running && $0.target >= 100 }, "full only with the end")
    }

    @Test func bootcStoppingEarlyIsAFailureWithTheMessage() throws {
        let daemon = try GaugedProcess(["--fps", "60"])
        let trace = daemon.directory.appending("progress.jsonl")
        let lines = bootcUpgrade.prefix(5).map(\.line).joined(separator: "\n") + "\n"
        #expect(FileManager.default.createFile(atPath: trace, contents: Data(lines.utf8)))
        let run = try gaugectl([
            "--socket", daemon.socketPath, "bootc", "--file", trace, "--failure-message", "bootc failed: see journal",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let status = try daemon.status()
        #expect(status.state == .failure && status.message == "bootc failed: see journal" && status.target == 80)
    }

    /// `gaugectl bootc -- COMMAND`: gaugectl runs the producer, and its failure, even
    /// before it said anything, reaches the screen and gaugectl's exit status.
    @Test func bootcRunsTheCommandAndForwardsItsFailure() throws {
        let daemon = try GaugedProcess(["--fps", "60"])
        let socket = ["--socket", daemon.socketPath]
        let missing = try gaugectl(socket + ["bootc", "--", "/nonexistent/bootc", "upgrade", "--progress-fd", "3"])
        #expect(missing.status == 127, "\(missing.stderr)")
        #expect(missing.stderr.contains("cannot run /nonexistent/bootc: No such file or directory"), "\(missing.stderr)")
        var status = try daemon.status()
        #expect(status.state == .failure && status.message.contains("cannot run /nonexistent/bootc"), "\(status.json())")

        // The stream on descriptor 3 (bootc's --progress-fd 3), then a failing exit.
        let trace = daemon.directory.appending("progress.jsonl")
        let lines = bootcUpgrade.prefix(3).map(\.line).joined(separator: "\n") + "\n"
        #expect(FileManager.default.createFile(atPath: trace, contents: Data(lines.utf8)))
        let failed = try gaugectl(socket + ["bootc", "--stall", "0", "--", "/bin/sh", "-c", "cat \(trace) >&3; exit 5"])
        #expect(failed.status == 5, "\(failed.stderr)")
        #expect(failed.stderr.contains("sh failed (exit status 5)"), "\(failed.stderr)")
        status = try daemon.status()
        #expect(status.state == .failure && status.message.hasSuffix("sh failed (exit status 5)"), "\(status.json())")
        #expect(status.target == 66.6, "the stream moved the bar first")

        // A stream stopping short, a command saying all went well: its status decides.
        let ok = try gaugectl(socket + ["bootc", "--stall", "0", "--fd", "4", "--", "/bin/sh", "-c", "cat \(trace) >&4"])
        #expect(ok.status == 0, "\(ok.stderr)")
        status = try daemon.status()
        #expect(status.state == .success && status.message == "Update ready", "\(status.json())")
    }

    /// `gaugectl gauge -- COMMAND`: the same for a dialog --gauge producer.
    @Test func gaugeRunsTheCommandAndForwardsItsFailure() throws {
        let daemon = try GaugedProcess(["--fps", "60"])
        let socket = ["--socket", daemon.socketPath]
        let failed = try gaugectl(socket + ["gauge", "--", "/bin/sh", "-c", "echo 30; exit 4"])
        #expect(failed.status == 4, "\(failed.stderr)")
        var status = try daemon.status()
        #expect(status.state == .failure && status.message == "sh failed (exit status 4)" && status.target == 30, "\(status.json())")
        // Killed by a signal: the shell's 128 + N, and the signal named.
        let killed = try gaugectl(socket + ["gauge", "--", "/bin/sh", "-c", "echo 40; kill -TERM $$"])
        #expect(killed.status == 128 + SIGTERM, "\(killed.stderr)")
        status = try daemon.status()
        #expect(status.state == .failure && status.message == "sh was killed by signal \(SIGTERM)" && status.target == 40, "\(status.json())")
        let missing = try gaugectl(socket + ["gauge", "--", "no-such-installer-command"])
        #expect(missing.status == 127 && missing.stderr.contains("cannot run no-such-installer-command"), "\(missing.stderr)")
        let ok = try gaugectl(socket + ["gauge", "--", "/bin/sh", "-c", "echo 60"])
        #expect(ok.status == 0, "\(ok.stderr)")
        status = try daemon.status()
        #expect(status.state == .success, "\(status.json())")
    }

    @Test func bootcBadLinesAreReportedAndAMissingDescriptorIsAUsageError() throws {
        let daemon = try GaugedProcess(["--fps", "60"])
        let client = try PipedGaugectl(["--socket", daemon.socketPath, "bootc", "--on-eof", "keep"])
        client.write("garbage\n" + bootcUpgrade[1].line + "\n")
        try daemon.waitForStatus { $0.target == 13.3 }
        let end = client.close()
        #expect(end.status == 0)
        #expect(end.stderr.contains("not a JSON object"), "\(end.stderr)")
        #expect(try daemon.status().state == .running)

        let missing = try gaugectl(["--socket", daemon.socketPath, "bootc", "--fd", "987"])
        #expect(missing.status == 2 && missing.stderr.contains("descriptor 987 is not open"), "\(missing.stderr)")
    }

    /// 8 MB of random bytes as bootc's stream (some 30,000 lines that are no JSON): a
    /// few complaints a second and the count of the rest, not one line each.
    @Test func bootcRandomBytesMakeFewComplaints() throws {
        let daemon = try GaugedProcess(["--fps", "60"])
        let trace = daemon.directory.appending("random")
        let random = try #require(FileHandle(forReadingAtPath: "/dev/urandom")).readData(ofLength: 8 << 20)
        #expect(FileManager.default.createFile(atPath: trace, contents: random))
        // stderr into a file: a pipe nobody reads while it fills would block gaugectl.
        let log = daemon.directory.appending("stderr")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl"))
        process.arguments = ["--socket", daemon.socketPath, "bootc", "--file", trace, "--on-eof", "keep"]
        process.environment = childEnvironment()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        #expect(FileManager.default.createFile(atPath: log, contents: nil))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        let start = monotonicNow()
        try process.run()
        while process.isRunning, monotonicNow() - start < 120 { usleep(10_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let seconds = monotonicNow() - start
        #expect(process.terminationStatus == 0)
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        // The burst, then per token a complaint and the count before it, and the last count.
        #expect(lines.count <= 20 + 2 * (Int(seconds * 2) + 1) + 1, "\(lines.count) lines in \(seconds) s")
        #expect(lines.last?.hasSuffix("more complaints suppressed") == true, "\(lines.suffix(3))")
    }

    @Test func bootcReadsAnInheritedDescriptor() throws {
        let daemon = try GaugedProcess(["--fps", "60"])
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let client = try BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl")
        // The read end becomes descriptor 3, as `bootc --progress-fd 3` would have its write end.
        let pid = try spawn(
            client, ["--socket", daemon.socketPath, "bootc", "--fd", "3", "--creep", "0"], environment: childEnvironment(),
            outputPath: daemon.directory.appending("gaugectl.log"), passing: ends[0])
        close(ends[0])
        let trace = bootcUpgrade.map(\.line).joined(separator: "\n") + "\n"
        _ = trace.withCString { write(ends[1], $0, strlen($0)) }
        close(ends[1])
        let status = reap(pid, within: 30)
        #expect(status.flatMap(exitCode) == 0)
        let final = try daemon.status()
        #expect(final.state == .success && final.target == 100 && final.message == "Update ready")
    }
}
