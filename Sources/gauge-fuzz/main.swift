import CGaugeFuzz
import CGaugeLinux
import GaugeFuzz
import GaugeProtocol
import GaugeSystem

// gauge-fuzz: the fuzz targets of every parser, run for as long as asked (tools/bench/fuzz).

let usage = """
    usage: gauge-fuzz [--seconds N] [--seed N] [--runs N] [--artifacts DIR] [--hang-seconds N] [TARGET...]
           gauge-fuzz --list
           gauge-fuzz --replay TARGET FILE...
           gauge-fuzz --seeds TARGET DIR
           gauge-fuzz --libfuzzer TARGET [libFuzzer options and corpus directories]

      (default)     the built-in mutation engine on each TARGET (all by default) for --seconds
                    each (default 10), from --seed (default: from the clock; printed); a failing
                    input is printed in hex and saved under --artifacts (default .)
      --list        the targets and what each checks
      --replay      runs saved inputs (from either engine) through TARGET and says what fails
      --seeds       writes TARGET's seed inputs into DIR (a corpus to start libFuzzer from)
      --libfuzzer   coverage-guided fuzzing of TARGET with libFuzzer; only in a build made
                    with -sanitize=fuzzer -DGAUGE_LIBFUZZER (tools/bench/fuzz --libfuzzer)
    Exit status: 0 when nothing failed, 1 when an input failed, 2 on a usage error.

    """

func printError(_ text: String) {
    _ = Array(text.utf8).withUnsafeBytes { try? Syscall.write(2, $0) }
}

func fail(_ message: String) -> Never {
    printError("gauge-fuzz: \(message)\n\(usage)")
    exit(2)
}

func target(_ name: String) -> FuzzTarget {
    guard let target = FuzzTargets.named(name) else {
        fail("no target '\(name)'; targets: \(FuzzTargets.all.map(\.name).joined(separator: ", "))")
    }
    return target
}

#if GAUGE_LIBFUZZER
    @_silgen_name("LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32

    nonisolated(unsafe) var libFuzzerTarget: FuzzTarget?

    func runLibFuzzer(_ name: String, _ options: [String]) -> Never {
        let chosen = target(name)
        libFuzzerTarget = chosen
        var arguments = [CommandLine.arguments[0]] + options
        if !options.contains(where: { $0.hasPrefix("-max_len=") }) { arguments.append("-max_len=\(chosen.maxLength)") }
        var pointers: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var count = Int32(arguments.count)
        let status = pointers.withUnsafeMutableBufferPointer { buffer in
            var base = buffer.baseAddress
            return LLVMFuzzerRunDriver(&count, &base) { data, size in
                let input = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
                do {
                    try libFuzzerTarget!.run(input)
                } catch {
                    printError("gauge-fuzz: \(libFuzzerTarget!.name): \(error)\n")
                    abort()
                }
                return 0
            }
        }
        exit(status)
    }
#else
    func runLibFuzzer(_ name: String, _ options: [String]) -> Never {
        fail("this build has no libFuzzer; tools/bench/fuzz --libfuzzer makes one")
    }
#endif

var arguments = Array(CommandLine.arguments.dropFirst())
var seconds = 10.0
var seed: UInt64?
var runs = Int.max
var artifacts = "."
var hangSeconds = 10.0
var names: [String] = []

@MainActor func value(after option: String) -> String {
    guard !arguments.isEmpty else { fail("\(option) needs a value") }
    return arguments.removeFirst()
}

while !arguments.isEmpty {
    let argument = arguments.removeFirst()
    switch argument {
    case "--list":
        for target in FuzzTargets.all { print("\(target.name)\n    \(target.summary)") }
        exit(0)
    case "--replay":
        let chosen = target(value(after: argument))
        guard !arguments.isEmpty else { fail("--replay needs files") }
        gauge_fuzz_install(nil, hangSeconds)
        var failed = false
        for path in arguments {
            let input: [UInt8]
            do { input = try FuzzFiles.read(path) } catch { fail("cannot read \(path): \(error)") }
            do {
                try chosen.run(input)
                print("\(path): passes")
            } catch {
                print("\(path): FAILS: \(error)")
                failed = true
            }
        }
        exit(failed ? 1 : 0)
    case "--seeds":
        let chosen = target(value(after: argument))
        let directory = value(after: argument)
        for (index, input) in chosen.seeds().enumerated() {
            do { try FuzzFiles.write(input, to: "\(directory)/seed-\(index)") } catch { fail("\(error)") }
        }
        exit(0)
    case "--libfuzzer":
        let name = value(after: argument)
        runLibFuzzer(name, arguments)
    case "--seconds":
        guard let number = PlainDecimal.parse(value(after: argument)), number > 0 else { fail("--seconds needs a positive number") }
        seconds = number
    case "--seed":
        guard let number = DecimalDigits.value(value(after: argument)) else { fail("--seed needs a whole number") }
        seed = UInt64(number)
    case "--runs":
        guard let number = DecimalDigits.value(value(after: argument)), number > 0 else { fail("--runs needs a positive whole number") }
        runs = Int(number)
    case "--artifacts":
        artifacts = value(after: argument)
    case "--hang-seconds":
        guard let number = PlainDecimal.parse(value(after: argument)), number > 0 else { fail("--hang-seconds needs a positive number") }
        hangSeconds = number
    case "-h", "--help":
        print(usage, terminator: "")
        exit(0)
    default:
        if argument.hasPrefix("-") { fail("unknown option \(argument)") }
        names.append(argument)
    }
}

let chosen = names.isEmpty ? FuzzTargets.all : names.map(target)
let runSeed = seed ?? MonotonicClock.nanoseconds()
gauge_fuzz_install(artifacts, hangSeconds)
print("gauge-fuzz: seed \(runSeed), \(seconds) s per target, inputs that fail go to \(artifacts)")
var failures = 0
for target in chosen {
    var fuzzer = MutationFuzzer(target: target, seed: runSeed)
    let report = fuzzer.run(seconds: seconds, maxExecutions: runs, artifactDirectory: artifacts)
    print(report)
    if report.failure != nil { failures += 1 }
}
exit(failures == 0 ? 0 : 1)
