import GaugeProtocol
import Testing

@testable import GaugeDaemon

/// PackageKit's offline update (`pk-offline-update`) as Plymouth's socket receives it:
/// one bar that only rises over its restarting counts, a message line that names the
/// packages and says not to turn the computer off, and the outcome from PackageKit's files.
@Suite struct PlymouthUpdatesTests {
    /// PackageKit's files as a fake disk: `results` changes when the update writes it.
    final class Files: @unchecked Sendable {
        var prepared: String?
        var results: String?
        var reader: PlymouthUpdates.Reader {
            { [self] path in
                let text = path == PlymouthUpdates.preparedPath ? prepared : path == PlymouthUpdates.resultsPath ? results : nil
                return text.map { Array($0.utf8) }
            }
        }
    }

    static let prepared = """
        [update]
        prepared_ids=gauge-demo-a;1.1;all;local,gauge-demo-b;1.1;all;local,gauge-demo-c;1.1;all;local
        """

    /// The requests the daemon applies for `wire` (Plymouth requests, one connection each).
    private func run(_ wire: [[UInt8]], messages: inout PlymouthMessages) -> [Request] {
        var requests: [Request] = []
        for bytes in wire {
            var session = PlymouthSession()
            let output = session.consume(bytes, messages: &messages)
            #expect(output.reply == [PlymouthSession.ack])
            requests += output.requests
        }
        return requests
    }

    private func progressValues(_ requests: [Request]) -> [Double] {
        requests.compactMap { if case .progress(let value, _) = $0 { value } else { nil } }
    }

    private func messageLines(_ requests: [Request]) -> [String] {
        requests.compactMap {
            switch $0 {
            case .message(let text): text
            case .progress(_, let message?): message
            default: nil
            }
        }
    }

    /// What pk-offline-update sends for one percentage: the message above 10 %, then the value.
    private func percentage(_ value: Int) -> [[UInt8]] {
        (value > 10 ? [plymouthRequest("M", "Installing Updates — \(value)%")] : []) + [plymouthRequest("u", "\(value)")]
    }

    @Test func restartingCountsMakeOneRisingBar() {
        let files = Files()
        files.prepared = Self.prepared
        var messages = PlymouthMessages(updates: PlymouthUpdates(read: files.reader))
        // The boot's own bar before the update mode.
        var requests = run([plymouthRequest("u", "90")], messages: &messages)
        #expect(requests == [.progress(90, message: nil)])
        requests = run(
            [plymouthRequest("C", "updates"), plymouthRequest("M", "Installing updates; this could take a while...")],
            messages: &messages)
        let line = "Installing updates; this could take a while... Installing 3 updates: gauge-demo-a, gauge-demo-b, gauge-demo-c. Do not turn off the computer."
        #expect(requests == [
            .title("Installing updates"),
            .progress(0, message: "Installing 3 updates: gauge-demo-a, gauge-demo-b, gauge-demo-c. Do not turn off the computer."),
            .message(line),
        ])
        // The counts sampled from PackageKit 1.3 on Debian 13: the simulation, then the
        // transaction's phases, each from 0 again (24 was the first value a count sent).
        let counts = [[0, 40, 93], [24, 60], [0, 30, 65], [0, 7, 50, 92], [0, 100]]
        requests = run(counts.flatMap { $0.flatMap(percentage) }, messages: &messages)
        let values = progressValues(requests)
        #expect(values == [20, 46.5, 52.9, 62.5, 68.1, 74.6, 75.4, 80.9, 86.2, 93.1])
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 })
        // The counts' own percentages never reach the line.
        #expect(messageLines(requests).allSatisfy { $0 == line })
    }

    @Test func lateCallsHoldTheBar() {
        var messages = PlymouthMessages()
        let wire = [plymouthRequest("C", "updates")] + [50, 47, 52, 48, 60].map { plymouthRequest("u", "\($0)") }
        let requests = run(wire, messages: &messages)
        // 47 and 48 came late (each `plymouth` call is a process of its own): held, no new count.
        #expect(progressValues(requests) == [0, 25, 26, 30])
    }

    @Test func theBarNeverFillsWhileTheToolRuns() {
        var messages = PlymouthMessages()
        let wire = [plymouthRequest("C", "updates")] + (0..<40).flatMap { _ in [plymouthRequest("u", "100"), plymouthRequest("u", "0")] }
        let values = progressValues(run(wire, messages: &messages))
        #expect(values.last == 99.9)
        #expect(values.allSatisfy { $0 < 100 })
    }

    @Test func successEndsTheBarFullAndSaysSo() {
        let files = Files()
        files.results = "[PackageKit Offline Update Results]\nSuccess=false\nErrorCode=failed-initialization\nErrorDetails=The transaction did not complete\n"
        var messages = PlymouthMessages(updates: PlymouthUpdates(read: files.reader))
        _ = run([plymouthRequest("C", "updates"), plymouthRequest("u", "50")], messages: &messages)
        files.results = "[PackageKit Offline Update Results]\nSuccess=true\nRole=update-packages\nPackages=gauge-demo-a;1.1;all;local\n"
        let requests = run([plymouthRequest("C", "reboot"), plymouthRequest("M", "Rebooting after installing updates…")], messages: &messages)
        #expect(requests == [
            .title("Restarting"), .state(.success, message: "Updates installed."),
            .message("Updates installed. Rebooting after installing updates…"),
        ])
    }

    @Test func aFailedPackageIsShownWithPackageKitsReason() {
        let files = Files()
        var messages = PlymouthMessages(updates: PlymouthUpdates(read: files.reader))
        _ = run([plymouthRequest("C", "updates"), plymouthRequest("u", "30")], messages: &messages)
        files.results = """
            [PackageKit Offline Update Results]
            Success=false
            ErrorCode=package-failed-to-install
            ErrorDetails=Error while installing package: installed gauge-demo-b package post-installation script subprocess returned error exit status 1
            """
        let requests = run([plymouthRequest("C", "reboot")], messages: &messages)
        // As PackageKit 1.3.1 on Debian 13 wrote it (tools/qemu/boot-test package-offline-update-fail).
        let reason = "The update failed: Error while installing package: installed gauge-demo-b package post-installation script subprocess returned error exit status 1"
        #expect(requests == [.title("Restarting"), .state(.failure, message: reason)])
    }

    /// PackageKit's daemon died mid-update: pk-offline-update writes the error it got and
    /// restarts; a results file left from an earlier update says nothing about this one.
    @Test func aStaleResultSaysNothing() {
        let files = Files()
        files.results = "[PackageKit Offline Update Results]\nSuccess=true\n"
        var messages = PlymouthMessages(updates: PlymouthUpdates(read: files.reader))
        let requests = run([plymouthRequest("C", "updates"), plymouthRequest("u", "30"), plymouthRequest("C", "reboot")], messages: &messages)
        #expect(requests == [.title("Installing updates"), .progress(0, message: "Do not turn off the computer."), .progress(15, message: nil), .title("Restarting")])
        #expect(!messages.updates.isActive)
        // Outside an update mode the values are the boot's again.
        #expect(run([plymouthRequest("u", "10")], messages: &messages) == [.progress(10, message: nil)])
    }

    @Test func aDeadPackageKitIsAFailureWithItsError() {
        let files = Files()
        files.results = "[PackageKit Offline Update Results]\nSuccess=false\nErrorDetails=The transaction did not complete\n"
        var messages = PlymouthMessages(updates: PlymouthUpdates(read: files.reader))
        _ = run([plymouthRequest("C", "updates"), plymouthRequest("u", "30")], messages: &messages)
        files.results = "[PackageKit Offline Update Results]\nSuccess=false\nErrorCode=failed\nErrorDetails=The name org.freedesktop.PackageKit was not provided by any .service files\n"
        #expect(run([plymouthRequest("C", "reboot")], messages: &messages).last
            == .state(.failure, message: "The update failed: The name org.freedesktop.PackageKit was not provided by any .service files"))
    }

    /// A PackageKit that hangs: pk-offline-update's unit has no time limit, so the daemon's
    /// timer calls `stalled` after `stallSeconds` without a word from the tool.
    @Test func aQuietUpdateSaysSoAndTheNextWordResumes() {
        var messages = PlymouthMessages()
        _ = run([plymouthRequest("C", "updates"), plymouthRequest("u", "30")], messages: &messages)
        let activity = messages.updates.activity
        #expect(messages.updates.stalled() == [
            .mode(.indeterminate), .message("No progress reported for 2 minutes. Do not turn off the computer."),
        ])
        #expect(messages.updates.stalled() == [], "said once")
        #expect(messages.updates.activity == activity, "the timer's own call is no word from the tool")
        #expect(run([plymouthRequest("u", "60")], messages: &messages) == [
            .mode(.determinate), .message("Do not turn off the computer."), .progress(30, message: nil),
        ])
        #expect(messages.updates.activity > activity)
        // Quiet again, then the end: the bar determinate before the outcome (none here).
        _ = messages.updates.stalled()
        #expect(run([plymouthRequest("C", "reboot")], messages: &messages) == [
            .title("Restarting"), .mode(.determinate), .message("Do not turn off the computer."),
        ])
        #expect(messages.updates.stalled() == [], "no update mode, nothing to say")
    }

    @Test(arguments: [
        ("Installing Updates — 69%", true), ("Installing System Upgrade — 5%", true), ("%", false),
        ("Installing updates; this could take a while...", false), ("100% sure", false),
    ])
    func percentageMessages(text: String, isPercentage: Bool) {
        #expect(PlymouthUpdates.isPercentage(text) == isPercentage)
    }

    @Test func keyFiles() {
        #expect(PackageKitFiles.preparedNames(Array("[update]\nprepared_ids=a;1;all;x\n".utf8)) == ["a"])
        #expect(PackageKitFiles.preparedNames(Array("[other]\nprepared_ids=a;1;all;x\n".utf8)) == nil)
        #expect(PackageKitFiles.preparedNames([0xff, 0xfe]) == nil)
        #expect(PackageKitFiles.result(Array("[PackageKit Offline Update Results]\nSuccess = true\n".utf8))
            == .init(success: true, error: ""))
        #expect(PackageKitFiles.result(Array("[PackageKit Offline Update Results]\nSuccess=false\n".utf8))
            == .init(success: false, error: "PackageKit gave no reason"))
        #expect(PackageKitFiles.result(Array("Success=true\n".utf8)) == nil)
        // GLib's escapes: a line break in the reason is a space on the one message line.
        #expect(PackageKitFiles.result(Array("[PackageKit Offline Update Results]\nSuccess=false\nErrorDetails=a\\nb\\\\c\n".utf8))
            == .init(success: false, error: "a b\\c"))
    }
}
