import GaugeProtocol
import GaugeTranslators
import Testing

private let still = HonestBar.Settings(stallSeconds: nil, creepHalfSeconds: nil)

/// RAUC's Progress readings through one installation, as its steps report them
/// (percentage, message, depth).
let raucInstall: [(Int32, String, Int32)] = [
    (0, "Installing", 1), (0, "Determining slot states", 2), (20, "Determining slot states done.", 2),
    (20, "Checking bundle", 2), (20, "Verifying signature", 3), (40, "Verifying signature done.", 3),
    (40, "Checking bundle done.", 2), (40, "Loading manifest file", 2), (60, "Loading manifest file done.", 2),
    (80, "Updating slots", 2), (80, "Copying image to rootfs.1", 3), (99, "Copying image to rootfs.1 done.", 3),
    (100, "Updating slots done.", 2), (100, "Installing done.", 1),
]

@Suite struct RaucProgressTests {
    @Test func anInstallationIsOneBarEndingInSuccess() {
        var translator = RaucProgressTranslator(settings: still)
        var lines: [String] = translator.requests(operation: "idle", percent: 0, message: "", lastError: "", at: 0).map(\.encoded)
        for (percent, message, _) in raucInstall {
            lines += translator.requests(operation: "installing", percent: percent, message: message, lastError: "", at: 0)
                .map(\.encoded)
        }
        lines += translator.requests(operation: "idle", percent: 100, message: "Installing done.", lastError: "", at: 0)
            .map(\.encoded)
        #expect(lines == [
            "progress 0", "state running Installing update", "message Installing",
            "message Determining slot states", "progress 20 Determining slot states done.",
            "message Checking bundle", "message Verifying signature", "progress 40 Verifying signature done.",
            "message Checking bundle done.", "message Loading manifest file", "progress 60 Loading manifest file done.",
            "progress 80 Updating slots", "message Copying image to rootfs.1", "progress 99 Copying image to rootfs.1 done.",
            "progress 99.9 Updating slots done.", "message Installing done.",
            "state success Update installed",
        ])
    }

    @Test func aFailedInstallationShowsRaucsError() {
        var translator = RaucProgressTranslator(settings: still)
        _ = translator.requests(operation: "installing", percent: 20, message: "Checking bundle", lastError: "", at: 0)
        #expect(translator.requests(
            operation: "idle", percent: 40, message: "Installing failed.",
            lastError: "Failed to verify bundle: signature\nmismatch", at: 0)
            == [.state(.failure, message: "Failed to verify bundle: signature mismatch")])
        // Without an error text, RAUC's last progress message says what failed.
        _ = translator.requests(operation: "installing", percent: 10, message: "Checking bundle", lastError: "", at: 0)
        #expect(translator.requests(operation: "idle", percent: 10, message: "Checking bundle failed.", lastError: "", at: 0)
            == [.state(.failure, message: "Checking bundle failed.")])
    }

    @Test func completedEndsTheInstallationWithItsResult() {
        var translator = RaucProgressTranslator(settings: still)
        translator.endsOnIdle = false
        _ = translator.requests(operation: "installing", percent: 0, message: "Installing", lastError: "", at: 0)
        _ = translator.requests(operation: "installing", percent: 40, message: "Checking bundle", lastError: "", at: 0)
        // RAUC's failed step says 100 %: the bar stays, the message shows.
        #expect(translator.requests(operation: "installing", percent: 100, message: "Installing failed.", lastError: "", at: 0)
            == [.message("Installing failed.")])
        #expect(translator.completed(result: 1, lastError: "Compatible mismatch", at: 0)
            == [.state(.failure, message: "Compatible mismatch")])
        // Operation back to idle after Completed changes nothing.
        #expect(translator.requests(operation: "idle", percent: 100, message: "Installing failed.", lastError: "", at: 0).isEmpty)
        _ = translator.requests(operation: "installing", percent: 0, message: "Installing", lastError: "", at: 0)
        #expect(translator.requests(operation: "idle", percent: 100, message: "Installing done.", lastError: "", at: 0).isEmpty)
        #expect(translator.completed(result: 0, lastError: "", at: 0)
            == [.state(.success, message: "Update installed")])
    }

    @Test func aLongCopyCreepsBelowTheEnd() {
        var translator = RaucProgressTranslator(settings: .init(stallSeconds: 600, creepHalfSeconds: 30))
        _ = translator.requests(operation: "installing", percent: 80, message: "Copying image to rootfs.1", lastError: "", at: 0)
        let crept = translator.tick(at: 300_000_000_000)
        guard case .progress(let value, _)? = crept.first else {
            Issue.record("no creep: \(crept)")
            return
        }
        #expect(value > 95 && value < 100)
    }
}

@Suite struct FwupdProgressTests {
    @Test func eachPhaseHasItsShareAndTheBarNeverZipsBack() {
        var translator = FwupdProgressTranslator(settings: still)
        // (Status, Percentage) as fwupd reports them: each phase starts again at 0.
        let readings: [(UInt32, UInt32)] = [
            (1, 0), (8, 0), (8, 50), (8, 100), (3, 0), (3, 100), (5, 0), (5, 50), (5, 100), (6, 0), (6, 50),
            (4, 0), (1, 0),
        ]
        var lines: [String] = []
        for (status, percentage) in readings {
            lines += translator.requests(status: status, percentage: percentage, at: 0).map(\.encoded)
        }
        #expect(lines == [
            "progress 0", "state running Downloading firmware", "progress 5",
            "progress 15", "progress 25",
            "message Decompressing firmware",
            "progress 40 Writing firmware", "progress 62.5", "progress 85",
            "message Verifying firmware", "progress 90",
            "progress 95 Restarting the device",
            "state success Firmware updated",
        ])
    }

    @Test func aDeviceRequestIsTheMessageDuringAnOperationOnly() {
        var translator = FwupdProgressTranslator(settings: still)
        let replug = "org.freedesktop.fwupd.request.remove-replug"
        #expect(translator.deviceRequest(message: "Replug it", id: replug, at: 0).isEmpty, "no operation under way")
        _ = translator.requests(status: 5, percentage: 50, at: 0)
        #expect(translator.deviceRequest(message: "Unplug the dock\nthen plug it in", id: replug, at: 0)
            == [.message("Unplug the dock then plug it in")])
        #expect(translator.deviceRequest(message: nil, id: replug, at: 0) == [.message("Unplug and replug the device")])
        // Waiting for the device or the user keeps the request on show; the next phase ends it.
        #expect(translator.requests(status: 12, percentage: 50, at: 0).isEmpty)
        #expect(translator.requests(status: 14, percentage: 50, at: 0).isEmpty)
        #expect(translator.deviceRequest(message: "", id: "org.example.unknown", at: 0).isEmpty)
        // The bar did not move for them.
        #expect(translator.requests(status: 5, percentage: 60, at: 0).first == .progress(67, message: "Writing firmware"))
    }

    @Test func fwupdSinceOneSevenReportsOnePercentageForTheWholeOperation() {
        #expect(FwupdProgressTranslator.reportsOverallPercentage(daemonVersion: "2.0.20"))
        #expect(FwupdProgressTranslator.reportsOverallPercentage(daemonVersion: "1.7.0"))
        #expect(!FwupdProgressTranslator.reportsOverallPercentage(daemonVersion: "1.6.4"))
        #expect(!FwupdProgressTranslator.reportsOverallPercentage(daemonVersion: ""))
        var translator = FwupdProgressTranslator(settings: still)
        translator.percentageIsOverall = true
        // fwupd 2.0.20 installing on its test plugin's device: the step changes back and
        // forth (detach is a restart, then writing again), the percentage only grows.
        let readings: [(UInt32, UInt32)] = [
            (3, 0), (11, 0), (12, 0), (5, 0), (5, 1), (3, 1), (4, 1), (5, 1), (5, 3), (3, 3), (14, 3), (5, 3),
            (5, 20), (5, 36), (6, 36), (4, 36), (12, 36), (12, 99), (12, 100),
        ]
        var lines: [String] = []
        for (status, percentage) in readings {
            lines += translator.requests(status: status, percentage: percentage, at: 0).map(\.encoded)
        }
        translator.deviceChanged(id: "cam", updateState: 2, updateError: nil)
        lines += translator.requests(status: 1, percentage: 100, at: 0).map(\.encoded)
        #expect(lines == [
            "progress 0", "state running Decompressing firmware", "message Waiting for authentication",
            "message Waiting for the device", "message Writing firmware", "progress 1", "message Decompressing firmware",
            "message Restarting the device", "message Writing firmware", "progress 3", "message Decompressing firmware",
            "message Waiting for the user", "message Writing firmware", "progress 20", "progress 36",
            "message Verifying firmware", "message Restarting the device", "message Waiting for the device",
            "progress 99", "progress 99.9", "state success Firmware updated",
        ])
    }

    @Test func aDeviceWhoseUpdateFailsEndsTheOperationWithItsError() {
        var translator = FwupdProgressTranslator(settings: still)
        // A failure left from an earlier update does not count.
        translator.deviceChanged(id: "cam", updateState: 3, updateError: "old failure")
        _ = translator.requests(status: 5, percentage: 50, at: 0)
        translator.deviceChanged(id: "cam", updateState: 3, updateError: "old failure")
        translator.deviceChanged(id: "cam", updateState: nil, updateError: nil)
        _ = translator.requests(status: 6, percentage: 0, at: 0)
        #expect(translator.requests(status: 1, percentage: 0, at: 0).last == .state(.success, message: "Firmware updated"))
        // A failure before anything was written still ends the operation, with fwupd's text.
        _ = translator.requests(status: 3, percentage: 0, at: 0)
        translator.deviceChanged(id: "cam", updateState: 3, updateError: "failed to write-firmware: not\nsupported")
        #expect(translator.requests(status: 1, percentage: 0, at: 0)
            == [.state(.failure, message: "failed to write-firmware: not supported")])
    }

    @Test func aWriteThatStopsIsAFailureAndARefreshLeavesTheScreen() {
        var failed = FwupdProgressTranslator(settings: still)
        _ = failed.requests(status: 5, percentage: 30, at: 0)
        #expect(failed.requests(status: 1, percentage: 0, at: 0) == [.state(.failure, message: "Firmware update failed")])
        var refresh = FwupdProgressTranslator(settings: still)
        _ = refresh.requests(status: 8, percentage: 100, at: 0)
        #expect(refresh.requests(status: 1, percentage: 0, at: 0) == [])
    }

    @Test func waitingForAuthenticationHoldsTheBarAndSaysSo() {
        var translator = FwupdProgressTranslator(settings: still)
        _ = translator.requests(status: 8, percentage: 100, at: 0)
        #expect(translator.requests(status: 11, percentage: 0, at: 0) == [.message("Waiting for authentication")])
        #expect(translator.requests(status: 99, percentage: 70, at: 0) == [])
        #expect(translator.requests(status: 0, percentage: 70, at: 0) == [])
        #expect(translator.requests(status: 5, percentage: 0, at: 0) == [.progress(40, message: "Writing firmware")])
    }
}
