import CGaugeLinux
import GaugeProtocol
import GaugeSystem

/// When the previous boot reached each of its steps (the unit names systemd sends as
/// Plymouth `update`s, or `step` requests), in seconds from the kernel's start, and when
/// it ended (`quit`). Kept in a small text file written at the end of each boot:
///
///     # Gauge boot history: seconds from the kernel's start
///     duration 31.52
///     step 4.210 systemd-udevd.service
///
/// Reading is forgiving: a missing file, or one without a sensible `duration`, is no
/// history (a first boot); a step line that does not parse is skipped.
package struct BootHistory: Equatable, Sendable {
    /// Seconds from the kernel's start to the end of the boot.
    package var duration: Double
    /// Seconds from the kernel's start to the first time each step was reached.
    package var steps: [String: Double]

    package static let maxSteps = 1024
    package static let maxNameBytes = 256
    /// Longer boots than this are not recorded (a machine left at a prompt).
    package static let maxDuration = 3600.0
    /// The longest step line: `step 3599.999 NAME\n` with a name of `maxNameBytes`.
    static let maxStepLineBytes = "step ".utf8.count + "3600.000".utf8.count + 1 + maxNameBytes + 1
    /// The most a file may hold to be read. Writer and reader share it: room for the
    /// comment, the duration and `maxSteps` of the longest step lines, so whatever `save`
    /// writes the next boot reads (`encoded` never goes past it).
    package static let maxFileBytes = 1024 + maxSteps * maxStepLineBytes

    package init(duration: Double, steps: [String: Double] = [:]) {
        self.duration = duration
        self.steps = steps
    }

    /// Where step `name` came in the previous boot, as a fraction of it; nil if it did not.
    package func fraction(of name: String) -> Double? {
        steps[name].map { min(1, $0 / duration) }
    }

    package static func parse(_ bytes: [UInt8]) -> BootHistory? {
        var duration: Double?
        var steps: [String: Double] = [:]
        for line in bytes.split(separator: UInt8(ascii: "\n")) {
            let text = String(decoding: line, as: UTF8.self)
            if text.hasPrefix("duration ") {
                guard let value = PlainDecimal.parse(text.dropFirst("duration ".count)),
                    value > 0, value <= maxDuration
                else { return nil }
                duration = value
            } else if text.hasPrefix("step "), steps.count < maxSteps {
                let rest = text.dropFirst("step ".count)
                guard let space = rest.firstIndex(of: " "), let time = PlainDecimal.parse(rest[..<space]),
                    time >= 0, time <= maxDuration
                else { continue }
                let name = String(rest[rest.index(after: space)...])
                guard isValidName(name), steps[name] == nil else { continue }
                steps[name] = time
            }
        }
        guard let duration else { return nil }
        return BootHistory(duration: duration, steps: steps.filter { $0.value <= duration })
    }

    /// A step name worth keeping: not empty, not too long, one line of text.
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maxNameBytes && Request.controlCharacterError(in: name) == nil
    }

    /// The file's text, steps in the order they were reached.
    package var encoded: String {
        var text = "# Gauge boot history: seconds from the kernel's start (written at the end of each boot)\n"
        text += "duration \(Self.format(duration))\n"
        // The earliest steps first, and no more than the reader takes (a history built
        // by hand could hold more, or longer names, than a `BootRecord` does).
        var kept = 0
        for (name, time) in steps.sorted(by: { ($0.value, $0.key) < ($1.value, $1.key) }) {
            guard kept < Self.maxSteps, Self.isValidName(name) else { continue }
            let line = "step \(Self.format(time)) \(name)\n"
            guard text.utf8.count + line.utf8.count <= Self.maxFileBytes else { break }
            text += line
            kept += 1
        }
        return text
    }

    private static func format(_ seconds: Double) -> String {
        PlainDecimal.format((seconds * 1000).rounded() / 1000)
    }

    /// The history at `path`; nil when there is none, with the reason when the file
    /// exists but cannot be used.
    package static func load(_ path: String) -> (history: BootHistory?, problem: String?) {
        let bytes: [UInt8]
        do throws(RegularFile.Error) {
            bytes = try RegularFile.read(path, maxBytes: maxFileBytes, followLinks: false)
        } catch {
            if (try? Syscall.lstat(path)) == nil { return (nil, nil) }
            return (nil, error.description)
        }
        guard let history = parse(bytes) else { return (nil, "\(path) holds no boot duration") }
        return (history, nil)
    }

    /// Writes the history to `path` in one step (a new file renamed over the old one), so
    /// a power cut leaves the old history or the new one. Creates the directory if its
    /// parent exists.
    package func save(to path: String) throws(SystemError) {
        if let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")), slash != path.utf8.startIndex {
            let directory = String(path[..<slash])
            if try Syscall.lstat(directory) == nil { try Syscall.mkdir(directory, mode: 0o755) }
        }
        let temporary = path + ".new"
        let fd = try Syscall.open(
            temporary, flags: O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, mode: 0o644)
        do throws(SystemError) {
            try Syscall.truncate(fd, length: 0)
            let written = Array(encoded.utf8).withUnsafeBytes { bytes in
                Result { () throws(SystemError) in try Syscall.writeAll(fd, bytes, at: 0) }
            }
            try written.get()
            try Syscall.fsync(fd)
        } catch {
            Syscall.close(fd)
            try? Syscall.unlink(temporary)
            throw error
        }
        Syscall.close(fd)
        try Syscall.rename(temporary, to: path)
    }
}

/// The steps of this boot as they come, for the next boot's history.
package struct BootRecord: Sendable {
    package private(set) var steps: [String: Double] = [:]

    package init() {}

    /// Step `name` reached `elapsed` seconds after the kernel's start (only its first time counts).
    package mutating func step(_ name: String, at elapsed: Double) {
        guard BootHistory.isValidName(name), steps[name] == nil, steps.count < BootHistory.maxSteps else { return }
        steps[name] = elapsed
    }

    /// The history of this boot, ended `elapsed` seconds after the kernel's start; nil for
    /// a boot too long to be a guide (or a clock that makes no sense).
    package func history(endingAt elapsed: Double) -> BootHistory? {
        guard elapsed > 0, elapsed <= BootHistory.maxDuration else { return nil }
        return BootHistory(duration: elapsed, steps: steps.filter { $0.value <= elapsed })
    }
}

/// The bar's value during a boot no client reports on: an estimate from when the
/// previous boot reached each step, refined by the steps of this one.
///
/// With a history, the boot is taken to run at a speed (fraction per second) that starts
/// at the previous boot's and follows each known step's observed speed; the value is
/// also never behind the furthest step seen. Without one (a first boot) it follows
/// `ceiling * t / (t + firstBootHalfTime)`: quick at first, then ever slower, but still
/// moving however long the boot takes; and once systemd reports the share of its jobs
/// done (`jobsDone`), the rest of the bar up to `ceiling` follows that share whenever it
/// is ahead of the curve. Either way it never goes back and never reaches the end: above
/// `knee` it closes on `ceiling` the same way, so a boot slower than the last one slows
/// the bar rather than stopping it at "done".
package struct BootEstimate: Sendable {
    package private(set) var history: BootHistory?
    /// Fraction of the boot per second; nil without a history.
    private var speed: Double?
    /// The furthest point of the previous boot among the steps seen so far.
    private var checkpoint = 0.0
    /// The value given last: values never go back.
    package private(set) var value = 0.0
    /// Without a history: the bar's value when systemd first reported its jobs, and the
    /// largest share of them done it has reported (the share falls when jobs are added).
    private var jobs: (base: Double, done: Double)?

    package static let knee = 0.8
    package static let ceiling = 0.95
    /// A first boot's curve is at half its `ceiling` after this many seconds.
    static let firstBootHalfTime = 15.0

    package init(history: BootHistory?) {
        self.history = history
        speed = history.map { 1 / $0.duration }
    }

    /// A history found later (the real root's, after the initramfs had none or an older one).
    mutating func replaceHistory(_ history: BootHistory?) {
        self.history = history
        speed = history.map { 1 / $0.duration }
        checkpoint = 0
    }

    /// systemd's share of the boot's jobs done, 0...1 (its Manager's `Progress`). Counts
    /// only without a history: the previous boot's steps are the better guide, systemd's
    /// count better than a clock's curve. From the value at its first report, the bar's
    /// rest up to `ceiling` follows it.
    package mutating func jobsDone(_ share: Double) {
        guard history == nil, share.isFinite else { return }
        let done = min(1, max(0, share))
        jobs = jobs.map { ($0.base, max($0.done, done)) } ?? (value, done)
    }

    /// Step `name` reached `elapsed` seconds after the kernel's start.
    package mutating func step(_ name: String, at elapsed: Double) {
        guard let fraction = history?.fraction(of: name), elapsed > 0 else { return }
        checkpoint = max(checkpoint, fraction)
        let observed = fraction / elapsed
        speed = speed.map { ($0 + observed) / 2 } ?? observed
    }

    /// The value (0...`ceiling`) at `elapsed` seconds after the kernel's start.
    package mutating func value(at elapsed: Double) -> Double {
        let time = max(0, elapsed)
        let estimate: Double
        if let speed {
            estimate = Self.softCapped(max(checkpoint, time * speed))
        } else {
            let curve = Self.ceiling * time / (time + Self.firstBootHalfTime)
            estimate = jobs.map { max(curve, $0.base + (Self.ceiling - $0.base) * $0.done) } ?? curve
        }
        value = max(value, estimate)
        return value
    }

    /// `raw` up to `knee`; above it, an approach to `ceiling` that never arrives and slows
    /// down without stopping.
    static func softCapped(_ raw: Double) -> Double {
        guard raw > knee else { return raw }
        let room = ceiling - knee
        let over = raw - knee
        return knee + room * over / (over + room)
    }
}

/// The boot's own clock: seconds since the kernel's start, less the time the boot waited
/// for a person (a passphrase, a question, a client's `pause-progress`), as Plymouth's
/// progress clock. The estimate holds while paused, and the next boot's history does
/// not learn a wait as part of the boot.
package struct BootClock: Equatable, Sendable {
    private var pausedTotal = 0.0
    private var pausedSince: Double?

    package init() {}

    var isPaused: Bool { pausedSince != nil }

    /// Pauses or resumes at `now` (monotonic seconds); the same state again changes nothing.
    package mutating func setPaused(_ paused: Bool, at now: Double) {
        if paused, pausedSince == nil {
            pausedSince = now
        } else if !paused, let since = pausedSince {
            pausedTotal += max(0, now - since)
            pausedSince = nil
        }
    }

    /// The boot's time at monotonic `now`.
    package func time(at now: Double) -> Double {
        now - pausedTotal - (pausedSince.map { max(0, now - $0) } ?? 0)
    }
}
