import CGaugeFuzz
import GaugeFuzz
import Glibc
import GaugeProtocol
import Testing

/// Every parser fuzzed for a moment on each test run: `GAUGE_FUZZ_SECONDS` per target
/// (default 1.5), from `GAUGE_FUZZ_SEED` (default a fixed seed, so a run is repeatable;
/// the seed is in every report). Longer runs: tools/bench/fuzz.
@Suite(.serialized) struct FuzzTests {
    static let seconds = environment("GAUGE_FUZZ_SECONDS").flatMap(Double.init) ?? 1.5
    static let seed = environment("GAUGE_FUZZ_SEED").flatMap(UInt64.init) ?? 20_260_611

    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    @Test(arguments: FuzzTargets.all)
    func noInputBreaksTheParser(_ target: FuzzTarget) {
        gauge_fuzz_install(nil, 30)
        var fuzzer = MutationFuzzer(target: target, seed: Self.seed)
        let report = fuzzer.run(seconds: Self.seconds)
        print(report)
        if let failure = report.failure {
            Issue.record("\(target.name) (seed \(report.seed)): \(failure.message)\n\(report)")
        }
        #expect(report.executions > report.seedCount, "the engine ran mutated inputs")
        #expect(report.eventCount > 0, "the target reports what its inputs reach")
    }

    /// The engine finds a planted bug: a target that fails on one particular request can
    /// only pass a run if the mutations never reach it.
    @Test func theEngineFindsAPlantedBug() throws {
        var fuzzer = MutationFuzzer(target: PlantedBug.target, seed: Self.seed)
        let report = fuzzer.run(seconds: 60, maxExecutions: 100_000)
        let failure = try #require(report.failure, "no failure found in \(report.executions) executions")
        #expect(failure.message == "planted")
        #expect(throws: FuzzFailure.self) { try PlantedBug.target.run(failure.input) }
    }
}

/// A parser with a bug only one kind of input reaches: `progress 77`. Turning the seed's
/// `10` into `77` at random takes two particular byte changes at once (about one input in
/// 10^8); the probe reports each whole value reached, as the real targets report their
/// outcomes, so the engine keeps `17` or `70` and gets there in two steps.
enum PlantedBug {
    static let target = FuzzTarget(
        name: "planted", summary: "a planted bug", maxLength: 200, dictionary: ["progress "],
        seeds: { [Array("progress 10 hello\n".utf8)] }
    ) { input, probe throws(FuzzFailure) in
        let line = String(decoding: input.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        guard case .success(.progress(let value, _)) = Request.parse(line) else { return }
        probe.hit("value", Int(value))
        if value == 77 { throw FuzzFailure("planted") }
    }
}
