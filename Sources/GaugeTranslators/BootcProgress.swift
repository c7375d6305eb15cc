import GaugeProtocol

/// One event of bootc's `--progress-fd` stream: JSON Lines, one object per line, told
/// apart by `type`. Two generations exist: `org.containers.bootc.progress/v1`, with an
/// `apiVersion` in every event, and the later one that opens with a `Start` event
/// carrying the protocol `version` and leaves `apiVersion` out. Both are read; unknown
/// members are ignored, as are events of an unknown `type`.
package enum BootcProgressEvent: Equatable, Sendable {
    /// `Start`: a new operation.
    case start(version: String)
    /// `ProgressBytes`: a download (`pulling` an image), counted in bytes and layers.
    case bytes(BootcBytes)
    /// `ProgressSteps`: discrete steps (`staging`: merging, deploying, ...).
    case steps(BootcSteps)
}

/// What a `ProgressBytes` event says.
package struct BootcBytes: Equatable, Sendable {
    package var task: String
    package var description: String
    package var id: String
    /// Bytes of the layers finished so far (not those in `subtasks` under way).
    package var bytes: UInt64
    /// Bytes to download; 0: not known.
    package var bytesTotal: UInt64
    package var steps: UInt64
    package var stepsTotal: UInt64
    /// Bytes fetched so far of the layers under way (subtasks with bytes < bytesTotal).
    package var subtaskBytesInFlight: UInt64

    package init(
        task: String, description: String = "", id: String = "", bytes: UInt64, bytesTotal: UInt64,
        steps: UInt64 = 0, stepsTotal: UInt64 = 0, subtaskBytesInFlight: UInt64 = 0
    ) {
        self.task = task
        self.description = description
        self.id = id
        self.bytes = bytes
        self.bytesTotal = bytesTotal
        self.steps = steps
        self.stepsTotal = stepsTotal
        self.subtaskBytesInFlight = subtaskBytesInFlight
    }
}

/// What a `ProgressSteps` event says.
package struct BootcSteps: Equatable, Sendable {
    package var task: String
    package var description: String
    package var id: String
    package var steps: UInt64
    package var stepsTotal: UInt64
    /// The description of the first subtask not completed yet, if any.
    package var activeSubtask: String?

    package init(
        task: String, description: String = "", id: String = "", steps: UInt64, stepsTotal: UInt64,
        activeSubtask: String? = nil
    ) {
        self.task = task
        self.description = description
        self.id = id
        self.steps = steps
        self.stepsTotal = stepsTotal
        self.activeSubtask = activeSubtask
    }
}

/// Splits bootc's progress stream into events, line by line, within bounded memory (a
/// line longer than `maxLineBytes` is dropped with a problem, as is a line that is not
/// a JSON object or lacks the members its type needs).
package struct BootcProgressReader: Sendable {
    package enum Item: Equatable, Sendable {
        case event(BootcProgressEvent)
        /// Something to log; reading goes on.
        case problem(String)
    }

    /// The `apiVersion` of the first generation.
    static let apiVersionV1 = "org.containers.bootc.progress/v1"
    /// bootc lists every layer it fetched in `subtasks`: an image of a few hundred
    /// layers makes lines of tens of kilobytes.
    package static let maxLineBytes = 1 << 20

    private var splitter = LineSplitter(maxLineBytes: BootcProgressReader.maxLineBytes)
    private var warnedVersion = false

    package init() {}

    package var pendingByteCount: Int { splitter.pendingByteCount }

    package mutating func consume<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> [Item] {
        var pieces: [LineSplitter.Piece] = []
        splitter.split(bytes) { pieces.append($0) }
        return pieces.flatMap { handle($0) }
    }

    /// The end of the stream: a last line without its newline counts.
    package mutating func finish() -> [Item] {
        guard let piece = splitter.finish() else { return [] }
        return handle(piece)
    }

    private mutating func handle(_ piece: LineSplitter.Piece) -> [Item] {
        guard case .line(let bytes) = piece else {
            return [.problem("a progress line longer than \(Self.maxLineBytes) bytes skipped")]
        }
        var line = bytes[...]
        while let last = line.last, last == 0x0D || last == 0x20 || last == 0x09 { line = line.dropLast() }
        guard !line.isEmpty else { return [] }
        guard let value = JSONValue.parse(String(decoding: line, as: UTF8.self)), case .object = value else {
            return [.problem("a progress line that is not a JSON object skipped")]
        }
        guard let type = value["type"]?.stringValue else {
            return [.problem("a progress event without a type skipped")]
        }
        var items: [Item] = []
        if let version = value["apiVersion"]?.stringValue, version != Self.apiVersionV1, !warnedVersion {
            warnedVersion = true
            items.append(.problem("progress apiVersion \(CompatText.quoted(version)) is not \(Self.apiVersionV1); reading it as v1"))
        }
        switch Self.event(type, value) {
        case .some(.some(let event)): items.append(.event(event))
        case .some(nil): items.append(.problem("a \(CompatText.clean(type)) event without the members it needs skipped"))
        case nil: break
        }
        return items
    }

    /// The event; `.some(nil)` for a known type with members missing; nil for a type
    /// this reader does not know.
    private static func event(_ type: String, _ value: JSONValue) -> BootcProgressEvent?? {
        func count(_ key: String) -> UInt64? {
            guard let number = value[key]?.doubleValue, number >= 0 else { return nil }
            return number < 1.8e19 ? UInt64(number) : UInt64.max
        }
        func text(_ key: String) -> String { CompatText.clean(value[key]?.stringValue ?? "") }
        switch type {
        case "Start":
            return .some(.start(version: text("version")))
        case "ProgressBytes":
            guard let bytes = count("bytes"), let total = count("bytesTotal") else { return .some(nil) }
            var inFlight: UInt64 = 0
            if case .array(let subtasks)? = value["subtasks"] {
                for subtask in subtasks {
                    guard let done = subtask["bytes"]?.doubleValue, let size = subtask["bytesTotal"]?.doubleValue,
                        done >= 0, done < size, done < 1.8e19
                    else { continue }
                    inFlight = inFlight.addingReportingOverflow(UInt64(done)).overflow ? .max : inFlight + UInt64(done)
                }
            }
            return .some(.bytes(BootcBytes(
                task: text("task"), description: text("description"), id: text("id"), bytes: bytes,
                bytesTotal: total, steps: count("steps") ?? 0, stepsTotal: count("stepsTotal") ?? 0,
                subtaskBytesInFlight: inFlight)))
        case "ProgressSteps":
            guard let steps = count("steps"), let total = count("stepsTotal") else { return .some(nil) }
            var active: String?
            if case .array(let subtasks)? = value["subtasks"] {
                active = subtasks.first { $0["completed"]?.boolValue == false }
                    .flatMap { $0["description"]?.stringValue }
                    .map { CompatText.clean($0) }
            }
            return .some(.steps(BootcSteps(
                task: text("task"), description: text("description"), id: text("id"), steps: steps,
                stepsTotal: total, activeSubtask: active?.isEmpty == true ? nil : active)))
        default:
            return nil
        }
    }
}

/// What the bar does for bootc's events: one operation from the first event (or each
/// `Start`) to the end of the stream. Downloads (`ProgressBytes`) are the first
/// `downloadShare` of the bar, weighted by bytes (by layers when bootc gives no byte
/// total); the steps after them (`ProgressSteps`: staging) share the rest equally.
package struct BootcProgressTranslator: Sendable {
    /// The part of the bar the download takes: fetching an image is most of the wait.
    static let downloadShare = 0.8

    private var bar: HonestBar
    /// Whether the last steps event had every step done.
    private var stepsComplete = false
    private var sawEvent = false

    package init(settings: HonestBar.Settings = HonestBar.Settings()) {
        bar = HonestBar(settings: settings)
    }

    package var isRunning: Bool { bar.isRunning }

    package mutating func requests(for event: BootcProgressEvent, at now: UInt64) -> [Request] {
        var requests: [Request] = []
        if case .start = event {
            stepsComplete = false
            sawEvent = true
            return bar.start(message: "Starting", at: now)
        }
        if !bar.isRunning {
            requests += bar.start(message: nil, at: now)
        }
        sawEvent = true
        let weights = [Self.downloadShare, 1 - Self.downloadShare]
        switch event {
        case .start:
            break
        case .bytes(let pull):
            stepsComplete = false
            var fraction: Double?
            var detail = ""
            if pull.bytesTotal > 0 {
                let done = min(pull.bytes.addingReportingOverflow(pull.subtaskBytesInFlight).partialValue, pull.bytesTotal)
                fraction = Double(done) / Double(pull.bytesTotal)
                detail = Self.megabytes(done) + " of " + Self.megabytes(pull.bytesTotal) + " MB"
            } else if pull.stepsTotal > 0 {
                fraction = Double(min(pull.steps, pull.stepsTotal)) / Double(pull.stepsTotal)
                detail = "\(min(pull.steps, pull.stepsTotal)) of \(pull.stepsTotal)"
            }
            let name = pull.description.isEmpty ? "Downloading" : pull.description
            let message = CompatText.clean(detail.isEmpty ? name : name + String(Request.lineBreak) + detail)
            let position = StepWeights.position(weights: weights, step: 0, fraction: fraction ?? 0)
            // Without any total the value stays: only the message (and the stall) tell.
            requests += bar.report(
                fraction == nil ? bar.shown : position.value, checkpoint: position.checkpoint, message: message, at: now)
        case .steps(let steps):
            let total = max(steps.stepsTotal, 1)
            let done = min(steps.steps, total)
            stepsComplete = steps.stepsTotal > 0 && done == total
            let inside = StepWeights.position(
                weights: [Double](repeating: 1, count: Int(min(total, 10_000))), step: Int(min(done, 10_000)), fraction: 0)
            let share = weights[1] * 100
            let value = weights[0] * 100 + share * inside.value / 100
            let checkpoint = weights[0] * 100 + share * inside.checkpoint / 100
            let message = steps.activeSubtask ?? (steps.description.isEmpty ? nil : steps.description)
            requests += bar.report(value, checkpoint: checkpoint, message: message, at: now)
        }
        return requests
    }

    /// What to do at the end of the stream.
    package enum Ending: String, Sendable, CaseIterable {
        /// Success when bootc finished every step it announced, failure otherwise.
        case auto
        case success
        case failure
        /// Leave the screen as the stream left it (a script shows the outcome).
        case keep
    }

    /// The end of the stream. Nothing at all reported is left alone under `auto`.
    package mutating func finish(
        _ ending: Ending, successMessage: String?, failureMessage: String?
    ) -> [Request] {
        switch ending {
        case .keep:
            return []
        case .success:
            return bar.finish(.success, message: successMessage)
        case .failure:
            return bar.finish(.failure, message: failureMessage)
        case .auto:
            guard sawEvent else { return [] }
            return stepsComplete
                ? bar.finish(.success, message: successMessage) : bar.finish(.failure, message: failureMessage)
        }
    }

    package mutating func tick(at now: UInt64) -> [Request] { bar.tick(at: now) }

    package func nextTick(after now: UInt64) -> UInt64? { bar.nextTick(after: now) }

    /// Bytes as megabytes with one decimal (`12.3`).
    static func megabytes(_ bytes: UInt64) -> String {
        let tenths = bytes / 100_000
        return "\(tenths / 10).\(tenths % 10)"
    }
}
