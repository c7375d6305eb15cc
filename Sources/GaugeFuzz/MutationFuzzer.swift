import CGaugeFuzz
import CGaugeLinux
import GaugeSystem

/// The built-in engine: random mutations of a corpus that starts from the target's seeds
/// and keeps every input that made an event the probe had not seen (semantic coverage:
/// which requests, errors and limits the input reached).
///
/// Deterministic: the same seed makes the same inputs in the same order, whatever the
/// time budget, so a failure found in CI is found again with its seed
/// (`GAUGE_FUZZ_SEED`, `gauge-fuzz --seed`). The input that fails is in the report; an
/// input that crashes or hangs the process is printed (and saved) by `CGaugeFuzz`.
package struct MutationFuzzer {
    package let target: FuzzTarget
    package let seed: UInt64
    private var random: SplitMix64
    private var corpus: [[UInt8]] = []
    private var seedCount = 0
    private var seen = Set<UInt64>()
    private var probe = Probe()
    private let cName: UnsafeMutablePointer<CChar>

    package init(target: FuzzTarget, seed: UInt64) {
        self.target = target
        self.seed = seed
        random = SplitMix64(seed: seed ^ Self.hash(target.name))
        cName = strdup(target.name)!
    }

    /// Runs until `seconds` have passed or `maxExecutions` inputs ran, or an input fails.
    package mutating func run(seconds: Double, maxExecutions: Int = .max, artifactDirectory: String? = nil) -> FuzzReport {
        let start = Self.now()
        var report = FuzzReport(target: target.name, seed: seed)
        func finish(_ report: inout FuzzReport) {
            report.seconds = Self.now() - start
            report.corpusCount = corpus.count
            report.seedCount = seedCount
            report.eventCount = seen.count
        }
        if corpus.isEmpty {
            let seeds = target.seeds().map { Array($0.prefix(target.maxLength)) }
            for input in seeds.isEmpty ? [[]] : seeds {
                if let failure = execute(input, into: &report) {
                    report.failure = (failure.description, input)
                    save(input, to: artifactDirectory, report: &report)
                    finish(&report)
                    return report
                }
                corpus.append(input)
            }
            seedCount = corpus.count
        }
        while report.executions < maxExecutions, Self.now() - start < seconds {
            let input = mutant()
            if let failure = execute(input, into: &report) {
                report.failure = (failure.description, input)
                save(input, to: artifactDirectory, report: &report)
                break
            }
            if report.lastWasNew {
                if corpus.count < 4096 {
                    corpus.append(input)
                } else {
                    corpus[seedCount + Int(random.below(UInt64(corpus.count - seedCount)))] = input
                }
            }
        }
        finish(&report)
        return report
    }

    /// Runs one input; nil when every check held.
    private mutating func execute(_ input: [UInt8], into report: inout FuzzReport) -> FuzzFailure? {
        probe.reset()
        let started = Self.now()
        let result: FuzzFailure? = input.withUnsafeBufferPointer { bytes in
            gauge_fuzz_begin(cName, bytes.baseAddress, bytes.count)
            defer { gauge_fuzz_end() }
            do throws(FuzzFailure) {
                try target.run(input, probe: &probe)
                return nil
            } catch {
                return error
            }
        }
        let elapsed = Self.now() - started
        report.executions += 1
        if elapsed > report.slowest.seconds { report.slowest = (elapsed, input.count) }
        var new = false
        for event in probe.events where seen.insert(event).inserted { new = true }
        report.lastWasNew = new
        return result
    }

    private func save(_ input: [UInt8], to directory: String?, report: inout FuzzReport) {
        guard let directory else { return }
        let path = directory + "/failure-\(target.name)-\(seed)-\(report.executions)"
        guard (try? FuzzFiles.write(input, to: path)) != nil else { return }
        report.savedPath = path
    }

    // MARK: - Mutations

    private static let interestingBytes: [UInt8] = [
        0x00, 0x01, 0x02, 0x06, 0x09, 0x0a, 0x0d, 0x15, 0x20, 0x22, 0x2c, 0x2d, 0x2e, 0x2f, 0x30, 0x31, 0x35,
        0x39, 0x3d, 0x5c, 0x7f, 0x80, 0x9f, 0xc3, 0xe2, 0xef, 0xfe, 0xff,
    ]
    private static let interestingNumbers = [
        "0", "1", "-1", "-0", "+0", "42", "99.5", "100", "100.0", "100.000001", "101", "255", "256", "4096",
        ".5", "5.", ".", "-.5", "1e2", "0x10", "nan", "inf", "1.7976931348623157e308", "99999999999999999999999",
        "0.000000000000000000000000000001", "4294967296", "9223372036854775808",
    ]
    private static let interestingLengths = [
        1, 2, 7, 8, 31, 32, 33, 255, 256, 257, 1000, 4063, 4064, 4065, 4094, 4095, 4096, 4097, 8192, 16384, 16385,
    ]
    private static let interestingIntegers: [UInt32] = [
        0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x10000, 2048, 2408, 2416, 4096, 4097, 16384,
        0x0002_0000, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff,
    ]

    private mutating func mutant() -> [UInt8] {
        var input = corpus[Int(random.below(UInt64(corpus.count)))]
        let count = random.below(8) == 0 ? 1 + random.below(16) : 1 + random.below(4)
        for _ in 0..<count { mutate(&input) }
        if input.count > target.maxLength { input.removeLast(input.count - target.maxLength) }
        return input
    }

    private mutating func position(in input: [UInt8], inclusive: Bool = false) -> Int {
        Int(random.below(UInt64(input.count + (inclusive ? 1 : 0))))
    }

    private mutating func mutate(_ input: inout [UInt8]) {
        let dictionary = target.dictionary
        switch random.below(17) {
        case 0 where !input.isEmpty:
            input[position(in: input)] ^= 1 << UInt8(random.below(8))
        case 1 where !input.isEmpty:
            input[position(in: input)] = UInt8(truncatingIfNeeded: random.next())
        case 2 where !input.isEmpty:
            input[position(in: input)] = Self.interestingBytes[Int(random.below(UInt64(Self.interestingBytes.count)))]
        case 3 where !input.isEmpty:
            let at = position(in: input)
            let delta = UInt8(1 + random.below(16))
            input[at] = random.below(2) == 0 ? input[at] &+ delta : input[at] &- delta
        case 4:
            let bytes = (0..<(1 + random.below(8))).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            input.insert(contentsOf: bytes, at: position(in: input, inclusive: true))
        case 5 where !input.isEmpty:
            let at = position(in: input)
            let length = 1 + Int(random.below(UInt64(min(input.count - at, random.below(8) == 0 ? 4096 : 32))))
            input.removeSubrange(at..<(at + length))
        case 6 where !input.isEmpty:
            let from = position(in: input)
            let length = 1 + Int(random.below(UInt64(min(input.count - from, 256))))
            let piece = Array(input[from..<(from + length)])
            input.insert(contentsOf: piece, at: position(in: input, inclusive: true))
        case 7 where !dictionary.isEmpty, 8 where !dictionary.isEmpty:
            let token = dictionary[Int(random.below(UInt64(dictionary.count)))]
            input.insert(contentsOf: token, at: position(in: input, inclusive: true))
        case 9 where !dictionary.isEmpty && !input.isEmpty:
            let token = dictionary[Int(random.below(UInt64(dictionary.count)))]
            let at = position(in: input)
            input.replaceSubrange(at..<min(input.count, at + token.count), with: token)
        case 10 where corpus.count > 1:
            let other = corpus[Int(random.below(UInt64(corpus.count)))]
            let cut = position(in: input, inclusive: true)
            let otherCut = Int(random.below(UInt64(other.count + 1)))
            input = Array(input[..<cut]) + other[otherCut...]
        case 11:
            insertRun(&input)
        case 12 where !input.isEmpty:
            repeatPiece(&input)
        case 13 where input.count >= 4:
            overwriteInteger(&input)
        case 14 where !input.isEmpty:
            input.removeLast(input.count - position(in: input))
        case 15:
            replaceNumber(&input)
        default:
            // A byte anywhere, including into an empty input.
            input.insert(UInt8(truncatingIfNeeded: random.next()), at: position(in: input, inclusive: true))
        }
    }

    /// A run of one byte (an interesting one, or one from the input) of an interesting or
    /// any length.
    private mutating func insertRun(_ input: inout [UInt8]) {
        let length = random.below(2) == 0
            ? Self.interestingLengths[Int(random.below(UInt64(Self.interestingLengths.count)))]
            : Int(random.below(UInt64(target.maxLength) + 1))
        let byte = input.isEmpty || random.below(3) == 0
            ? Self.interestingBytes[Int(random.below(UInt64(Self.interestingBytes.count)))]
            : input[position(in: input)]
        input.insert(contentsOf: repeatElement(byte, count: length), at: position(in: input, inclusive: true))
    }

    /// A piece of the input repeated in place, a few times or up to the longest input.
    private mutating func repeatPiece(_ input: inout [UInt8]) {
        let from = position(in: input)
        let length = 1 + Int(random.below(UInt64(min(input.count - from, 64))))
        let times = 2 + Int(random.below(random.below(4) == 0 ? 2000 : 16))
        let piece = Array(input[from..<(from + length)])
        var repeated: [UInt8] = []
        repeated.reserveCapacity(piece.count * times)
        for _ in 0..<times {
            repeated += piece
            if repeated.count > target.maxLength { break }
        }
        input.insert(contentsOf: repeated, at: from)
    }

    /// Four bytes overwritten with an interesting integer, either byte order.
    private mutating func overwriteInteger(_ input: inout [UInt8]) {
        let value = Self.interestingIntegers[Int(random.below(UInt64(Self.interestingIntegers.count)))]
        let at = Int(random.below(UInt64(input.count - 3)))
        let bigEndian = random.below(2) == 0
        for index in 0..<4 {
            let shift = bigEndian ? 8 * (3 - index) : 8 * index
            input[at + index] = UInt8(truncatingIfNeeded: value >> UInt32(shift))
        }
    }

    /// A number where a number was (or anywhere): an interesting one or any whole number
    /// up to 1000.
    private mutating func replaceNumber(_ input: inout [UInt8]) {
        let number = random.below(2) == 0
            ? Array(Self.interestingNumbers[Int(random.below(UInt64(Self.interestingNumbers.count)))].utf8)
            : Array(String(random.below(1001)).utf8)
        let digits = input.indices.filter { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(input[$0]) }
        if let first = digits.isEmpty ? nil : digits[Int(random.below(UInt64(digits.count)))] {
            var end = first
            while end < input.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(input[end])
                || input[end] == UInt8(ascii: ".") { end += 1 }
            input.replaceSubrange(first..<end, with: number)
        } else {
            input.insert(contentsOf: number, at: position(in: input, inclusive: true))
        }
    }

    // MARK: - Helpers

    static func now() -> Double { MonotonicClock.now() }

    static func hash(_ text: String) -> UInt64 {
        text.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }
}

/// What one run of the built-in engine did.
package struct FuzzReport: Sendable, CustomStringConvertible {
    package let target: String
    package let seed: UInt64
    package var executions = 0
    package var seconds = 0.0
    package var seedCount = 0
    package var corpusCount = 0
    /// Distinct probe events reached.
    package var eventCount = 0
    /// The longest single execution and its input's length.
    var slowest: (seconds: Double, length: Int) = (0, 0)
    /// The check that failed and the input that made it fail.
    package var failure: (message: String, input: [UInt8])?
    /// Where the failing input was saved.
    var savedPath: String?
    var lastWasNew = false

    package var description: String {
        let rate = seconds > 0 ? Int(Double(executions) / seconds) : 0
        var text = "\(target): \(executions) executions in \(Self.fixed(seconds, 2)) s (\(rate)/s), "
            + "corpus \(seedCount) seeds + \(corpusCount - seedCount), \(eventCount) events, "
            + "slowest \(Self.fixed(slowest.seconds * 1000, 1)) ms (\(slowest.length) bytes), seed \(seed)"
        if let failure {
            text += "\n  FAILED: \(failure.message)\n  input (\(failure.input.count) bytes, hex): "
                + failure.input.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
            if let savedPath { text += "\n  saved to \(savedPath)" }
        }
        return text
    }

    static func fixed(_ value: Double, _ decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int((value * scale).rounded())
        let whole = scaled / Int(scale)
        let fraction = String(scaled % Int(scale))
        return decimals == 0 ? String(whole) : "\(whole)." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }
}

/// A small, fast, seedable generator (Steele, Lea and Flood's SplitMix64).
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    /// A number in 0..<bound (bound > 0).
    mutating func below(_ bound: UInt64) -> UInt64 {
        next() % max(bound, 1)
    }
}
