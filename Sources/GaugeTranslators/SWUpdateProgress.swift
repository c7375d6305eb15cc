import GaugeProtocol

/// One `struct progress_msg` from SWUpdate's progress socket (`progress_ipc.h`,
/// progress API 2.x), decoded field by field at explicit byte offsets.
///
/// SWUpdate writes the struct as it lies in memory, little-endian on every machine it
/// runs on. Two layouts exist with the same API version 2.0.0:
/// - `aligned` (SWUpdate up to 2025.05 on 64-bit and ARM EABI machines): `dwl_bytes`
///   is 8-byte aligned, so 4 bytes of padding follow `dwl_percent` and the struct is
///   padded to 2416 bytes;
/// - `packed` (`__attribute__((packed))` since then, and what 32-bit x86 always had):
///   no padding, 2408 bytes.
package struct SWUpdateProgressMessage: Equatable, Sendable {
    /// `RECOVERY_STATUS` in `swupdate_status.h`; the order is fixed by SWUpdate.
    package enum Status: UInt32, Sendable {
        case idle = 0, start, run, success, failure, download, done, subprocess, progress
    }

    package enum Layout: String, Sendable, CaseIterable {
        case packed
        case aligned

        package var size: Int { self == .packed ? 2408 : 2416 }

        /// Byte offsets of the fields.
        struct Offsets {
            var apiVersion = 0, status = 4, downloadPercent = 8
            var downloadBytes: Int, steps: Int, step: Int, stepPercent: Int
            var image: Int, handler: Int, source: Int, infoLength: Int, info: Int
        }

        var offsets: Offsets {
            switch self {
            case .packed:
                Offsets(
                    downloadBytes: 12, steps: 20, step: 24, stepPercent: 28,
                    image: 32, handler: 288, source: 352, infoLength: 356, info: 360)
            case .aligned:
                Offsets(
                    downloadBytes: 16, steps: 24, step: 28, stepPercent: 32,
                    image: 36, handler: 292, source: 356, infoLength: 360, info: 364)
            }
        }
    }

    package static let imageCapacity = 256
    package static let handlerCapacity = 64
    package static let infoCapacity = 2048
    /// `PROGRESS_API_VERSION` 2.0.0: major in bits 23..16, minor 15..8, patch 7..0.
    package static let apiVersion: UInt32 = 0x0002_0000

    package var apiVersion: UInt32 = SWUpdateProgressMessage.apiVersion
    /// The raw status; `status` reads it.
    package var statusCode: UInt32
    package var downloadPercent: UInt32 = 0
    package var downloadBytes: UInt64 = 0
    package var steps: UInt32 = 0
    /// 1-based once the first step began; 0 before.
    package var step: UInt32 = 0
    package var stepPercent: UInt32 = 0
    package var image: String = ""
    package var handler: String = ""
    package var source: UInt32 = 0
    package var info: String = ""

    package init(
        status: Status, downloadPercent: UInt32 = 0, downloadBytes: UInt64 = 0, steps: UInt32 = 0,
        step: UInt32 = 0, stepPercent: UInt32 = 0, image: String = "", handler: String = "",
        source: UInt32 = 0, info: String = ""
    ) {
        self.statusCode = status.rawValue
        self.downloadPercent = downloadPercent
        self.downloadBytes = downloadBytes
        self.steps = steps
        self.step = step
        self.stepPercent = stepPercent
        self.image = image
        self.handler = handler
        self.source = source
        self.info = info
    }

    package var status: Status? { Status(rawValue: statusCode) }

    /// Whether `version` is one this decoder reads (major version 2).
    static func isSupported(apiVersion version: UInt32) -> Bool {
        (version >> 16) & 0xFFFF == 2
    }

    /// Decodes `layout.size` bytes. Strings end at their first NUL (or the end of their
    /// field); `info` is cut to `infolen`.
    package init<Bytes: RandomAccessCollection<UInt8>>(decoding bytes: Bytes, layout: Layout) where Bytes.Index == Int {
        precondition(bytes.count >= layout.size, "a progress_msg needs \(layout.size) bytes")
        let base = bytes.startIndex
        let at = layout.offsets
        func u32(_ offset: Int) -> UInt32 {
            (0..<4).reduce(0) { $0 | UInt32(bytes[base + offset + $1]) << (8 * $1) }
        }
        func u64(_ offset: Int) -> UInt64 {
            (0..<8).reduce(0) { $0 | UInt64(bytes[base + offset + $1]) << (8 * $1) }
        }
        func string(_ offset: Int, _ capacity: Int) -> String {
            let field = bytes[(base + offset)..<(base + offset + capacity)]
            return String(decoding: field.prefix { $0 != 0 }, as: UTF8.self)
        }
        apiVersion = u32(at.apiVersion)
        statusCode = u32(at.status)
        downloadPercent = u32(at.downloadPercent)
        downloadBytes = u64(at.downloadBytes)
        steps = u32(at.steps)
        step = u32(at.step)
        stepPercent = u32(at.stepPercent)
        image = string(at.image, Self.imageCapacity)
        handler = string(at.handler, Self.handlerCapacity)
        source = u32(at.source)
        let length = min(Int(u32(at.infoLength)), Self.infoCapacity)
        info = string(at.info, length)
    }

    /// The bytes SWUpdate would send for this message (for tests and fakes). Strings
    /// longer than their field are cut, leaving room for the NUL.
    package func encoded(layout: Layout) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: layout.size)
        let at = layout.offsets
        func put(_ value: UInt64, _ width: Int, _ offset: Int) {
            for index in 0..<width { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))) }
        }
        func put(_ text: String, _ capacity: Int, _ offset: Int) -> Int {
            let utf8 = Array(text.utf8.prefix(capacity - 1))
            bytes.replaceSubrange(offset..<(offset + utf8.count), with: utf8)
            return utf8.count
        }
        put(UInt64(apiVersion), 4, at.apiVersion)
        put(UInt64(statusCode), 4, at.status)
        put(UInt64(downloadPercent), 4, at.downloadPercent)
        put(downloadBytes, 8, at.downloadBytes)
        put(UInt64(steps), 4, at.steps)
        put(UInt64(step), 4, at.step)
        put(UInt64(stepPercent), 4, at.stepPercent)
        _ = put(image, Self.imageCapacity, at.image)
        _ = put(handler, Self.handlerCapacity, at.handler)
        put(UInt64(source), 4, at.source)
        let infoLength = put(info, Self.infoCapacity, at.info)
        put(UInt64(infoLength), 4, at.infoLength)
        return bytes
    }

    /// `struct progress_connect_ack`: what SWUpdate sends first on each connection.
    package static func connectAck(apiVersion: UInt32 = SWUpdateProgressMessage.apiVersion) -> [UInt8] {
        [UInt8(truncatingIfNeeded: apiVersion), UInt8(truncatingIfNeeded: apiVersion >> 8),
         UInt8(truncatingIfNeeded: apiVersion >> 16), UInt8(truncatingIfNeeded: apiVersion >> 24)]
            + Array("ACK".utf8) + [0]
    }
}

/// Splits the byte stream of one connection to SWUpdate's progress socket into
/// messages: first the 8-byte connect ACK (`apiversion`, `"ACK\0"`; a server that
/// sends none is read too), then whole `progress_msg`s.
///
/// Without a given layout the stream decides: SWUpdate writes each message with one
/// `write`, so the bytes at hand are normally whole messages, and their count is a
/// multiple of only one of the two sizes (2408 and 2416 share no multiple below
/// 727 216); with more than one message buffered, the next message's API version
/// sits at only one of the two offsets. Until then the bytes wait.
package struct SWUpdateProgressStream: Sendable {
    package enum Event: Equatable, Sendable {
        /// The connect ACK and the API version it gave.
        case connected(apiVersion: UInt32)
        case message(SWUpdateProgressMessage)
        /// Something to log (unsupported version, undecidable layout).
        case problem(String)
    }

    package private(set) var layout: SWUpdateProgressMessage.Layout?
    private let fixedLayout: SWUpdateProgressMessage.Layout?
    private var buffer: [UInt8] = []
    private var expectingAck = true

    package init(layout: SWUpdateProgressMessage.Layout? = nil) {
        self.fixedLayout = layout
        self.layout = layout
    }

    /// Starts over for a new connection. A layout found in the stream is forgotten: the
    /// SWUpdate that comes back may be a new release with the other layout.
    package mutating func reset() {
        buffer.removeAll()
        expectingAck = true
        layout = fixedLayout
    }

    package var pendingByteCount: Int { buffer.count }

    package mutating func consume<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> [Event] {
        buffer.append(contentsOf: bytes)
        var events: [Event] = []
        if expectingAck {
            guard buffer.count >= 8 else { return [] }
            expectingAck = false
            if buffer[4..<8].elementsEqual(Array("ACK".utf8) + [0]) {
                let version = Self.u32(buffer, 0)
                buffer.removeFirst(8)
                events.append(.connected(apiVersion: version))
                if !SWUpdateProgressMessage.isSupported(apiVersion: version) {
                    events.append(.problem("SWUpdate progress API \(Self.versionText(version)) is not 2.x; reading it as 2.0"))
                }
            }
        }
        if layout == nil { layout = detectLayout() }
        if layout == nil && buffer.count > 4 * SWUpdateProgressMessage.Layout.aligned.size {
            events.append(.problem("cannot tell the progress_msg layout from the stream; assuming aligned (2416 bytes)"))
            layout = .aligned
        }
        guard let layout else { return events }
        var start = 0
        while buffer.count - start >= layout.size {
            let message = SWUpdateProgressMessage(decoding: buffer[start..<(start + layout.size)], layout: layout)
            start += layout.size
            if SWUpdateProgressMessage.isSupported(apiVersion: message.apiVersion) {
                events.append(.message(message))
            } else {
                events.append(.problem("progress message with API version \(Self.versionText(message.apiVersion)) skipped"))
            }
        }
        buffer.removeFirst(start)
        return events
    }

    private func detectLayout() -> SWUpdateProgressMessage.Layout? {
        if let fixedLayout { return fixedLayout }
        let versionsAt: (Int) -> Bool = { offset in
            offset + 4 <= buffer.count && SWUpdateProgressMessage.isSupported(apiVersion: Self.u32(buffer, offset))
        }
        // A second message already here: its version is at one offset only.
        let next = SWUpdateProgressMessage.Layout.allCases.filter {
            buffer.count >= $0.size + 4 && versionsAt($0.size)
        }
        if buffer.count >= SWUpdateProgressMessage.Layout.aligned.size + 4, next.count == 1 { return next[0] }
        // Whole messages only.
        let whole = SWUpdateProgressMessage.Layout.allCases.filter { layout in
            !buffer.isEmpty && buffer.count % layout.size == 0
                && stride(from: 0, to: buffer.count, by: layout.size).allSatisfy(versionsAt)
        }
        return whole.count == 1 ? whole[0] : nil
    }

    private static func u32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }

    private static func versionText(_ version: UInt32) -> String {
        "\((version >> 16) & 0xFFFF).\((version >> 8) & 0xFF).\(version & 0xFF)"
    }
}

/// What the screen should do for each SWUpdate progress message, through one
/// `HonestBar` (never backwards within an update, creeping inside a long step, the
/// indeterminate style while SWUpdate reports nothing):
///
/// | status | what the bar does |
/// |---|---|
/// | START | starts an update: `progress 0`, `state running Update started` |
/// | DOWNLOAD | the download is the first half of the bar: `dwl_percent` / 2, message `Downloading update` |
/// | RUN, PROGRESS (with a step) | the steps share the bar (the second half after a download) equally; message `Installing <image> (<handler>)`; a step outside the steps or a percentage past 100 is ignored |
/// | SUCCESS | `state success Update successful` (which fills the bar) |
/// | FAILURE | `state failure Update failed` |
/// | IDLE, DONE, SUBPROCESS | nothing |
///
/// So the bar no longer jumps back to 0 when a step (or the install after the download)
/// begins: overall = (steps done + cur_percent / 100) / nsteps of the install's share.
package struct SWUpdateProgressTranslator: Sendable {
    private var bar: HonestBar
    /// Whether this update began with a download (which then takes the first half).
    private var downloaded = false

    package init(settings: HonestBar.Settings = HonestBar.Settings()) {
        bar = HonestBar(settings: settings)
    }

    /// The requests for `message`; `now` (nanoseconds, monotonic) times the creep and
    /// the stall detection.
    package mutating func requests(for message: SWUpdateProgressMessage, at now: UInt64 = 0) -> [Request] {
        guard let status = message.status else { return [] }
        switch status {
        case .start:
            downloaded = false
            return bar.start(message: "Update started", at: now)
        case .download:
            downloaded = true
            let percent = Double(min(message.downloadPercent, 100))
            let position = StepWeights.position(weights: [1, 1], step: 0, fraction: percent / 100)
            return bar.report(position.value, checkpoint: position.checkpoint, message: "Downloading update", at: now)
        case .run, .progress:
            // A step outside the steps announced, or a step percentage past 100 (a message
            // of 0xffffffff fields), says nothing about how far the update is.
            guard message.steps > 0, message.step > 0, message.step <= message.steps, message.stepPercent <= 100 else {
                return []
            }
            // The install's share of the bar (the half after a download), its steps equal.
            let base = downloaded ? 50.0 : 0
            let share = 100 - base
            let steps = Double(message.steps)
            let done = Double(message.step - 1)
            let value = base + share * (done + Double(message.stepPercent) / 100) / steps
            let checkpoint = base + share * (done + 1) / steps
            let image = CompatText.clean(message.image)
            let handler = CompatText.clean(message.handler)
            let text = image.isEmpty ? nil : "Installing " + image + (handler.isEmpty ? "" : " (\(handler))")
            return bar.report(value, checkpoint: checkpoint, message: text, at: now)
        case .success:
            return bar.finish(.success, message: "Update successful")
        case .failure:
            return bar.finish(.failure, message: "Update failed")
        case .idle, .done, .subprocess:
            return []
        }
    }

    /// What time alone changes (see `HonestBar.tick`).
    package mutating func tick(at now: UInt64) -> [Request] { bar.tick(at: now) }

    /// When `tick` should be called next; nil when only a message can change anything.
    package func nextTick(after now: UInt64) -> UInt64? { bar.nextTick(after: now) }
}
