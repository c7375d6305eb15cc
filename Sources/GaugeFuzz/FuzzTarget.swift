/// One parser under fuzzing: a body that takes any bytes and checks what the parser made
/// of them, the inputs to start from and the tokens worth splicing in.
///
/// The body must not crash or hang on any input; a property it finds broken is thrown
/// as a `FuzzFailure`. Both engines run the same bodies: the built-in `MutationFuzzer`
/// (in CI and `tools/bench/fuzz`) and libFuzzer (`tools/bench/fuzz --libfuzzer`).
package struct FuzzTarget: Sendable, CustomStringConvertible {
    package typealias Body = @Sendable (_ input: [UInt8], _ probe: inout Probe) throws(FuzzFailure) -> Void

    package let name: String
    /// What the body checks, for `--list`.
    package let summary: String
    /// Inputs the mutator makes are at most this long.
    package let maxLength: Int
    /// Valid inputs to mutate from.
    package let seeds: @Sendable () -> [[UInt8]]
    /// Tokens of the format (command words, keys, markers) the mutator inserts.
    package let dictionary: [[UInt8]]
    let body: Body

    package init(
        name: String, summary: String, maxLength: Int, dictionary: [String] = [], extraDictionary: [[UInt8]] = [],
        seeds: @escaping @Sendable () -> [[UInt8]], body: @escaping Body
    ) {
        self.name = name
        self.summary = summary
        self.maxLength = maxLength
        self.seeds = seeds
        self.dictionary = dictionary.map { Array($0.utf8) } + extraDictionary
        self.body = body
    }

    package var description: String { name }

    /// Runs the body once; the probe collects what the input exercised.
    package func run(_ input: [UInt8], probe: inout Probe) throws(FuzzFailure) {
        try body(input, &probe)
    }

    /// Runs the body once, for a replay.
    package func run(_ input: [UInt8]) throws(FuzzFailure) {
        var probe = Probe()
        try body(input, &probe)
    }
}

/// A property a body found broken.
package struct FuzzFailure: Error, Sendable, CustomStringConvertible {
    package let description: String

    package init(_ description: String) { self.description = description }
}

/// Throws a `FuzzFailure` with `message` unless `condition` holds.
@inline(__always)
func check(_ condition: Bool, _ message: @autoclosure () -> String) throws(FuzzFailure) {
    if !condition { throw FuzzFailure(message()) }
}

/// What an input exercised, as a set of events the body reports (a request kind parsed,
/// an error code, a limit reached). The built-in engine keeps an input that makes an
/// event it has not seen before, so its corpus spreads over the parser's outcomes;
/// libFuzzer ignores it (it measures code coverage itself).
package struct Probe: Sendable {
    private(set) var events: [UInt64] = []

    package init() {}

    /// Records an event named by up to two words.
    package mutating func hit(_ name: StaticString, _ detail: String = "") {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount) {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        hash = (hash ^ 0xff) &* 0x100_0000_01b3
        for byte in detail.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        events.append(hash)
    }

    /// Records an event with a small number (a count bucketed by the caller).
    package mutating func hit(_ name: StaticString, _ number: Int) {
        hit(name, String(number))
    }

    mutating func reset() { events.removeAll(keepingCapacity: true) }
}

/// Buckets a count the way libFuzzer does (1, 2, 3, 4-7, 8-15, ...), so that "more of
/// the same" is not a new event.
func bucket(_ count: Int) -> Int {
    count < 4 ? count : Int.bitWidth - count.leadingZeroBitCount + 2
}
