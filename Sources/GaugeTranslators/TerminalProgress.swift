import GaugeProtocol

/// The terminal progress sequence, OSC 9;4 (`ESC ] 9 ; 4 ; STATE [; PERCENT]`, ended by
/// BEL or ST, `ESC \`), which systemd 257's tools, dnf5 and flatpak write to a terminal:
/// STATE 0 clears the progress, 1 sets PERCENT, 2 is an error (PERCENT optional), 3 is
/// indeterminate, 4 paused (PERCENT optional).
package enum TerminalProgressEvent: Equatable, Sendable {
    case clear
    case value(Double)
    case error(Double?)
    case indeterminate
    case paused(Double?)
}

/// Takes a command's terminal output apart (`gaugectl run`): every byte passes through
/// unchanged except the progress sequences, which become events. Sequences may be split
/// across reads; other escape sequences (colours, titles, OSC 8 links, other OSC 9 forms)
/// pass through whole. A progress sequence that is malformed (a STATE outside 0-4, a
/// PERCENT that is not a whole number, ESC inside it) is dropped with a problem, as a
/// terminal ignores it; one still unterminated after `maxSequenceBytes` is not one: its
/// bytes pass through, with a problem. Pure, bounded memory.
package struct TerminalProgressFilter: Sendable {
    package enum Item: Equatable, Sendable {
        case progress(TerminalProgressEvent)
        case problem(String)
    }

    /// The longest progress sequence taken (`ESC]9;4;2;100` and its end are 13 bytes).
    static let maxSequenceBytes = 32

    private static let prefix = Array("\u{1B}]9;4;".utf8)
    /// The bytes of a sequence that may be a progress sequence, held back until it ends.
    private var held: [UInt8] = []
    /// Inside its parameters, after the prefix; `escaped`: an ESC came last (ST's start).
    private var inBody = false
    private var escaped = false

    package init() {}

    /// The bytes to pass on, and the events, from the next piece of output.
    package mutating func consume<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> (output: [UInt8], items: [Item]) {
        var output: [UInt8] = []
        var items: [Item] = []
        for byte in bytes { take(byte, &output, &items) }
        return (output, items)
    }

    /// The end of the output: a sequence left unfinished passes through as it came.
    package mutating func finish() -> (output: [UInt8], items: [Item]) {
        let output = held
        let items: [Item] = inBody ? [.problem("the output ended inside an OSC 9;4 progress sequence: passed on as it came")] : []
        reset()
        return (output, items)
    }

    private mutating func reset() {
        held = []
        inBody = false
        escaped = false
    }

    private mutating func take(_ byte: UInt8, _ output: inout [UInt8], _ items: inout [Item]) {
        if inBody { return body(byte, &output, &items) }
        if held.isEmpty {
            if byte == 0x1B { held = [byte] } else { output.append(byte) }
            return
        }
        // Matching the prefix so far.
        if byte == Self.prefix[held.count] {
            held.append(byte)
            if held.count == Self.prefix.count { inBody = true }
            return
        }
        // Not a progress sequence: what was held goes on, and this byte starts afresh.
        output += held
        held = []
        take(byte, &output, &items)
    }

    private mutating func body(_ byte: UInt8, _ output: inout [UInt8], _ items: inout [Item]) {
        if escaped {
            guard byte == UInt8(ascii: "\\") else {
                // ESC not followed by `\`: the sequence is cut short (a terminal drops it),
                // and the ESC begins whatever comes next.
                items.append(.problem("an OSC 9;4 progress sequence cut short by another escape: dropped"))
                reset()
                take(0x1B, &output, &items)
                return take(byte, &output, &items)
            }
            return end(&items)
        }
        switch byte {
        case 0x07:
            end(&items)
        case 0x1B:
            escaped = true
            held.append(byte)
        default:
            held.append(byte)
            if held.count > Self.maxSequenceBytes {
                items.append(.problem("an OSC 9;4 sequence longer than \(Self.maxSequenceBytes) bytes: passed on as it came"))
                output += held
                reset()
            }
        }
    }

    /// The sequence ended: its parameters read, or dropped.
    private mutating func end(_ items: inout [Item]) {
        var parameters = Array(held.dropFirst(Self.prefix.count))
        if parameters.last == 0x1B { parameters.removeLast() }
        reset()
        if let event = Self.event(parameters) {
            items.append(.progress(event))
        } else {
            let text = String(decoding: parameters.prefix(16), as: UTF8.self)
            items.append(.problem("a malformed OSC 9;4 progress sequence (\"9;4;\(CompatText.clean(text))\"): dropped"))
        }
    }

    /// `STATE[;PERCENT]`, PERCENT a whole number (0-100, larger ones taken as 100).
    private static func event(_ parameters: [UInt8]) -> TerminalProgressEvent? {
        let fields = parameters.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false)
        guard fields.count == 1 || fields.count == 2, fields[0].count == 1, let state = digits(fields[0]) else { return nil }
        var percent: Double?
        if fields.count == 2, !fields[1].isEmpty {
            guard let value = digits(fields[1]) else { return nil }
            percent = Double(min(value, 100))
        }
        switch state {
        case 0: return .clear
        case 1: return .value(percent ?? 0)
        case 2: return .error(percent)
        case 3: return .indeterminate
        case 4: return .paused(percent)
        default: return nil
        }
    }

    /// A whole number of at most 3 digits.
    private static func digits(_ field: ArraySlice<UInt8>) -> Int? {
        guard !field.isEmpty, field.count <= 3, field.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return field.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }
}

/// The progress sequences of a command `gaugectl run` runs, as one honest bar
/// (`HonestBar`): its values never take the bar back within the run (a tool starting its
/// next operation at 0 holds it), an error shows the failure state until progress
/// resumes, indeterminate shows the indeterminate style until a value comes, paused says
/// so on the message line, and a clear leaves the bar as it is. The end is the command's
/// exit status: success fills the bar, anything else shows the failure.
package struct TerminalProgressTranslator: Sendable {
    private var bar: HonestBar
    private var indeterminate = false
    private var failed = false
    private let name: String

    package init(name: String, settings: HonestBar.Settings = HonestBar.Settings()) {
        bar = HonestBar(settings: settings)
        self.name = CompatText.clean(name)
    }

    /// The command starts: the bar at 0, running, `message` (default: its name) shown.
    package mutating func start(message: String?, at now: UInt64) -> [Request] {
        bar.start(message: message.map { CompatText.clean($0) } ?? "Running \(name)", at: now)
    }

    package mutating func requests(for event: TerminalProgressEvent, at now: UInt64) -> [Request] {
        switch event {
        case .clear:
            return []
        case .value(let percent):
            return resumed(at: now) + bar.report(percent, at: now)
        case .indeterminate:
            let requests = failed ? resumed(at: now) : []
            guard !indeterminate else { return requests }
            indeterminate = true
            return requests + [.mode(.indeterminate)]
        case .paused(let percent):
            return resumed(at: now) + bar.report(percent ?? bar.shown, message: "\(name) paused", at: now)
        case .error(let percent):
            guard !failed else { return [] }
            failed = true
            var requests = indeterminate ? [Request.mode(.determinate)] : []
            indeterminate = false
            if let percent { requests += bar.report(percent, at: now) }
            return requests + [.state(.failure, message: "\(name) reports an error")]
        }
    }

    /// Progress after an error or the indeterminate style: the bar runs again.
    private mutating func resumed(at now: UInt64) -> [Request] {
        var requests: [Request] = []
        if indeterminate {
            indeterminate = false
            requests.append(.mode(.determinate))
        }
        if failed {
            failed = false
            requests.append(.state(.running, message: "Running \(name)"))
        }
        return requests
    }

    /// The command ended: `failure` nil fills the bar, else shows it.
    package mutating func finish(failure: String?) -> [Request] {
        var requests: [Request] = indeterminate ? [.mode(.determinate)] : []
        indeterminate = false
        requests += bar.finish(failure == nil ? .success : .failure, message: failure.map { CompatText.clean($0) } ?? "Done")
        return requests
    }

    package mutating func tick(at now: UInt64) -> [Request] {
        indeterminate || failed ? [] : bar.tick(at: now)
    }

    package func nextTick(after now: UInt64) -> UInt64? {
        indeterminate || failed ? nil : bar.nextTick(after: now)
    }
}
