import GaugeProtocol
import GaugeTranslators
import Testing

private let second: UInt64 = 1_000_000_000

private func values(_ requests: [Request]) -> [Double] {
    requests.compactMap { if case .progress(let value, _) = $0 { value } else { nil } }
}

@Suite struct HonestBarTests {
    @Test func stepWeightsPlaceAValueAndItsCheckpoint() {
        let equal = StepWeights.position(weights: [1, 1, 1, 1], step: 1, fraction: 0.5)
        #expect(equal.value == 37.5 && equal.checkpoint == 50)
        let bytes = StepWeights.position(weights: [300, 100], step: 1, fraction: 0.5)
        #expect(bytes.value == 87.5 && bytes.checkpoint == 100)
        #expect(StepWeights.position(weights: [0, 0], step: 0, fraction: 1) == (50, 50))
        #expect(StepWeights.position(weights: [1, .nan, 1], step: 2, fraction: 2) == (100, 100))
        #expect(StepWeights.position(weights: [1, 1], step: 5, fraction: 0) == (100, 100))
        #expect(StepWeights.position(weights: [], step: 0, fraction: 0.5) == (0, 0))
    }

    @Test func neverBackwardsWithinAnOperation() {
        var bar = HonestBar(settings: .init(stallSeconds: nil, creepHalfSeconds: nil))
        var sent: [Double] = []
        for value in [10.0, 40, 5, 39.9, 40, 41.26, -3, .nan, 250, 99] {
            sent += values(bar.report(value, at: 0))
        }
        #expect(sent == [10, 40, 41.2, 99.9], "full only at the end")
        #expect(bar.shown == 99.9)
        // A new operation starts at 0 again.
        #expect(bar.start(message: "Again", at: 0) == [.progress(0, message: nil), .state(.running, message: "Again")])
        #expect(values(bar.report(3, at: 0)) == [3])
    }

    @Test func messagesGoWithTheValueOrAloneAndAreNotRepeated() {
        var bar = HonestBar(settings: .init(stallSeconds: nil, creepHalfSeconds: nil))
        #expect(bar.report(10, message: "Copying", at: 0) == [.progress(10, message: "Copying")])
        #expect(bar.report(10, message: "Copying", at: 0) == [])
        #expect(bar.report(5, message: "Syncing", at: 0) == [.message("Syncing")])
        #expect(bar.report(20, message: "Syncing", at: 0) == [.progress(20, message: nil)])
    }

    @Test func creepStaysBelowTheCheckpointAndOnlyRises() {
        var bar = HonestBar(settings: .init(stallSeconds: nil, creepHalfSeconds: 5, creepShare: 0.9))
        _ = bar.report(20, checkpoint: 60, at: 0)
        var last = 20.0
        var moves = 0
        var time: UInt64 = 0
        while time < 3600 * second {
            time += HonestBar.creepIntervalNanoseconds * 7
            for value in values(bar.tick(at: time)) {
                #expect(value > last && value < 60)
                last = value
                moves += 1
            }
        }
        #expect(moves > 50, "the bar creeps")
        #expect(last >= 55.9 && last < 56, "90 % of the gap at most, \(last)")
        // A real report below the crept value holds the bar; the step's end moves it.
        #expect(bar.report(30, checkpoint: 60, at: time) == [])
        #expect(values(bar.report(60, checkpoint: 80, at: time)) == [60])
    }

    @Test func aStallTurnsIndeterminateAndProgressTurnsItBack() {
        var bar = HonestBar(settings: .init(stallSeconds: 10, creepHalfSeconds: nil))
        _ = bar.start(message: nil, at: 0)
        _ = bar.report(30, message: "Writing", at: 1 * second)
        #expect(bar.nextTick(after: 2 * second) == 11 * second)
        #expect(bar.tick(at: 10 * second) == [])
        // The same value again is no progress.
        _ = bar.report(30, message: "Writing", at: 10 * second)
        #expect(bar.tick(at: 11 * second) == [.mode(.indeterminate)])
        #expect(bar.isStalled && bar.nextTick(after: 11 * second) == nil)
        #expect(bar.tick(at: 20 * second) == [])
        #expect(bar.report(31, at: 21 * second) == [.mode(.determinate), .progress(31, message: nil)])
        // A new message is activity too.
        #expect(bar.tick(at: 31 * second) == [.mode(.indeterminate)])
        #expect(bar.report(31, message: "Verifying", at: 32 * second) == [.mode(.determinate), .message("Verifying")])
    }

    @Test func theEndShowsTheOutcomeWithTheToolsMessage() {
        var bar = HonestBar(settings: .init(stallSeconds: 1, creepHalfSeconds: nil))
        _ = bar.report(40, at: 0)
        #expect(bar.tick(at: 2 * second) == [.mode(.indeterminate)])
        #expect(bar.finish(.failure, message: "Signature invalid")
            == [.mode(.determinate), .state(.failure, message: "Signature invalid")])
        #expect(!bar.isRunning && bar.tick(at: 10 * second) == [] && bar.nextTick(after: 10 * second) == nil)
        _ = bar.report(50, at: 0)
        #expect(bar.finish(.success, message: "Done")
            == [.state(.success, message: "Done")])
    }

    /// Whatever the tool reports while it runs (100, more, a checkpoint at 100 to creep
    /// to), the bar is full only at a successful end.
    @Test func onlyTheEndFillsTheBar() {
        var bar = HonestBar(settings: .init(stallSeconds: nil, creepHalfSeconds: 1))
        #expect(bar.report(100, at: 0) == [.progress(99.9, message: nil)])
        #expect(bar.report(250, message: "Done?", at: 0) == [.message("Done?")])
        var creeping = HonestBar(settings: .init(stallSeconds: nil, creepHalfSeconds: 0.001, creepShare: 0.99))
        _ = creeping.report(99.95, checkpoint: 100, at: 0)
        #expect(creeping.tick(at: 100 * second) == [], "the creep stops short of full")
        #expect(creeping.shown < 100)
        #expect(bar.finish(.success, message: "Done") == [.state(.success, message: "Done")])
    }

    @Test func creepingAsksForTicksAndStopsAtTheStall() {
        var bar = HonestBar(settings: .init(stallSeconds: 30, creepHalfSeconds: 10))
        _ = bar.report(0, checkpoint: 50, at: 0)
        #expect(bar.nextTick(after: 0) == HonestBar.creepIntervalNanoseconds)
        #expect(bar.nextTick(after: 29_900_000_000) == 30 * second)
        #expect(bar.tick(at: 30 * second) == [.mode(.indeterminate)])
    }
}

/// The bar's promises under any sequence of reports and ticks.
@Suite struct HonestBarInvariantTests {
    /// A small deterministic generator (SplitMix64), so a failure repeats.
    private struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func neverBackNeverPastTheCheckpointAlwaysInRange(seed: UInt64) {
        var random = Generator(state: seed)
        var bar = HonestBar(settings: .init(
            stallSeconds: random.below(2) == 0 ? nil : Double(1 + random.below(20)),
            creepHalfSeconds: random.below(4) == 0 ? nil : Double(1 + random.below(60))))
        var now: UInt64 = 0
        var last = 0.0
        var checkpoint = 0.0
        var stalled = false
        for _ in 0..<5000 {
            now += UInt64(random.below(3_000)) * 1_000_000
            var requests: [Request]
            var fromTick = false
            switch random.below(10) {
            case 0:
                requests = bar.start(message: "Go", at: now)
                last = -1
                checkpoint = 0
            case 1 where random.below(20) == 0:
                requests = bar.finish(random.below(2) == 0 ? .success : .failure, message: "End")
            case 1, 2, 3, 4:
                let value = Double(random.below(1100)) / 10 - 2
                checkpoint = value + Double(random.below(400)) / 10
                // A report after the end begins a new operation, from 0.
                if !bar.isRunning { last = -1 }
                requests = bar.report(value, checkpoint: checkpoint, message: random.below(3) == 0 ? "M\(random.below(4))" : nil, at: now)
            default:
                requests = bar.tick(at: now)
                fromTick = true
            }
            for request in requests {
                switch request {
                case .progress(let value, _):
                    #expect(value >= 0 && value <= 100)
                    #expect(value > last || (value == 0 && last <= 0), "the bar went from \(last) to \(value)")
                    if fromTick { #expect(value < min(checkpoint, 100), "the creep reached \(value), the checkpoint is \(checkpoint)") }
                    #expect(!stalled || !fromTick, "a stalled bar crept")
                    last = value
                case .mode(let mode):
                    stalled = mode == .indeterminate
                case .state(let state, _):
                    if state != .running { stalled = false }
                    if state == .running { last = -1 }
                default:
                    break
                }
            }
            if let next = bar.nextTick(after: now) { #expect(next >= now) }
        }
    }
}
