import GaugeProtocol
import GaugeTranslators
import Testing

@Suite struct SystemdProgressTests {
    private let still = HonestBar.Settings(stallSeconds: nil, creepHalfSeconds: nil)

    /// Readings of a boot as systemd reports them: Progress falls whenever new jobs
    /// are queued (here when the initrd's jobs give way to the real root's).
    @Test func aBootNeverGoesBackAndEndsInSuccess() {
        var translator = SystemdProgressTranslator(settings: still)
        let readings: [(String, Double)] = [
            ("initializing", 0), ("starting", 0.2), ("starting", 0.5), ("starting", 0.35), ("starting", 0.45),
            ("starting", 0.6), ("starting", 0.95), ("running", 1),
        ]
        var lines: [String] = []
        for (state, progress) in readings {
            lines += translator.requests(state: state, progress: progress, at: 0).map(\.encoded)
        }
        #expect(lines == [
            "progress 0", "state running Starting the system",
            "progress 20", "progress 50", "progress 60", "progress 95",
            "state success System ready",
        ])
        #expect(translator.bootEnded)
        // Later readings of a running system change nothing.
        #expect(translator.requests(state: "running", progress: 1, at: 0) == [])
    }

    @Test func degradedAndMaintenanceAreFailuresWithWhy() {
        var degraded = SystemdProgressTranslator(settings: still)
        _ = degraded.requests(state: "starting", progress: 0.5, at: 0)
        #expect(degraded.requests(state: "degraded", progress: 1, failedUnits: 2, at: 0)
            == [.state(.failure, message: "2 units failed")])
        var one = SystemdProgressTranslator(settings: still)
        _ = one.requests(state: "starting", progress: 0.5, at: 0)
        #expect(one.requests(state: "degraded", progress: 1, failedUnits: 1, at: 0) == [.state(.failure, message: "1 unit failed")])
        var rescue = SystemdProgressTranslator(settings: still)
        _ = rescue.requests(state: "starting", progress: 0.5, at: 0)
        #expect(rescue.requests(state: "maintenance", progress: 1, at: 0)
            == [.state(.failure, message: "Maintenance mode: the boot did not finish")])
    }

    @Test func aShutdownIsANewOperationAndUnknownStatesAreIgnored() {
        var translator = SystemdProgressTranslator(settings: still)
        _ = translator.requests(state: "starting", progress: 0.9, at: 0)
        #expect(translator.requests(state: "stopping", progress: 0.1, at: 0)
            == [.progress(0, message: nil), .state(.running, message: "Stopping the system"), .progress(10, message: nil)])
        #expect(translator.phase == .shutdown)
        #expect(translator.requests(state: "offline", progress: 0.2, at: 0) == [])
        #expect(translator.requests(state: "stopping", progress: 0.05, at: 0) == [])
        #expect(translator.requests(state: "stopping", progress: 2, at: 0) == [.progress(99.9, message: nil)], "never full while running")
        #expect(!translator.bootEnded)
    }

    @Test func aLongJobTurnsIndeterminate() {
        var translator = SystemdProgressTranslator(settings: .init(stallSeconds: 3, creepHalfSeconds: 30))
        _ = translator.requests(state: "starting", progress: 0.4, at: 0)
        // Without steps there is nothing to creep towards: only the stall.
        #expect(translator.tick(at: 2_000_000_000) == [])
        #expect(translator.tick(at: 3_000_000_000) == [.mode(.indeterminate)])
        #expect(translator.requests(state: "starting", progress: 0.41, at: 4_000_000_000)
            == [.mode(.determinate), .progress(41, message: nil)])
    }
}
