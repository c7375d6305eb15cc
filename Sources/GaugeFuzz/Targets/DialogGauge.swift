import GaugeProtocol
import GaugeTranslators

/// What scripts pipe into `gaugectl gauge` (dialog/whiptail --gauge).
extension FuzzTarget {
    static let dialogGauge = FuzzTarget(
        name: "dialog-gauge",
        summary: "dialog --gauge streams (whole and in pieces): the same events, requests valid with "
            + "progress in 0...100 and messages within the compat text limit, warnings short, held-back "
            + "bytes bounded however long an XXX block runs",
        maxLength: 40_000, dictionary: ["XXX\n", "XXX", "\n", " ", "\t", "\\n", "\r\n", "100\n", "50\n"],
        seeds: {
            [Array("10\n50\nXXX\n75\nAlmost there\nsecond line\\nthird\nXXX\n100\n".utf8),
             Array("XXX\nonly text\nXXX\nXXX\n33\n".utf8), Array("bogus\n-5\n1000\n42.5\n".utf8)]
        }
    ) { input, probe throws(FuzzFailure) in
        var whole = DialogGaugeReader()
        let all = whole.consume(input) + whole.finish()

        var pieces = DialogGaugeReader()
        var events: [DialogGaugeReader.Event] = []
        let bound = 3 * Limits.maxLineBytes + 4 * (CompatText.maxTextBytes + 1) + 2
        for chunk in FuzzBytes.chunks(input) {
            events += pieces.consume(chunk)
            try check(pieces.pendingByteCount <= bound, "the reader holds \(pieces.pendingByteCount) bytes")
        }
        events += pieces.finish()
        try check(events == all, "fed in pieces, the reader made other events than fed at once")
        let requests = events.compactMap { event -> Request? in if case .request(let request) = event { request } else { nil } }
        let expected = ReferenceDialog.requests(input)
        try check(requests == expected, "requests \(requests.prefix(8)), expected \(expected.prefix(8))")
        let lines = input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).count
        try check(events.count <= lines + 2, "\(events.count) events for \(lines) lines")
        for event in events {
            switch event {
            case .request(let request):
                probe.hit("request", NativeSamples.kind(of: request))
                try FuzzBytes.checkValid(request, from: "dialog-gauge")
                if case .message(let text) = request {
                    try check(text.utf8.count <= CompatText.maxTextBytes, "a message of \(text.utf8.count) bytes")
                }
                if case .progress(_, let text?) = request {
                    try check(text.utf8.count <= CompatText.maxTextBytes, "a message of \(text.utf8.count) bytes")
                }
            case .warning(let line):
                probe.hit("warning", String(line.split(separator: ":").dropFirst().first?.prefix(12) ?? ""))
                try FuzzBytes.checkLogLine(line, from: "dialog-gauge")
            }
        }
    }
}

/// dialog's gauge rules stated plainly, every line of a block kept, to hold the bounded
/// `DialogGaugeReader` against.
enum ReferenceDialog {
    static func requests(_ input: [UInt8]) -> [Request] {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        func trimmed(_ text: String) -> String {
            guard let first = text.firstIndex(where: { !blank($0) }), let last = text.lastIndex(where: { !blank($0) }) else { return "" }
            return String(text[first...last])
        }
        func spaced(_ line: String) -> String {
            var out = "", backslash = false
            for scalar in line.unicodeScalars {
                if backslash {
                    backslash = false
                    if scalar == "n" { out.unicodeScalars.append(Request.lineBreak); continue }
                    out += "\\"
                }
                if scalar == "\\" { backslash = true } else { out.unicodeScalars.append(scalar) }
            }
            return backslash ? out + "\\" : out
        }
        var pieces = input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if pieces.last?.isEmpty == true { pieces.removeLast() }
        var requests: [Request] = []
        var block: (percent: Double?, expectingPercent: Bool, lines: [String])?
        func close() {
            guard let open = block else { return }
            block = nil
            let text = CompatText.clean(trimmed(open.lines.map(spaced).joined(separator: " ")))
            guard let percent = open.percent else { requests.append(.message(text)); return }
            requests += text.isEmpty ? [.progress(percent, message: nil), .message("")] : [.progress(percent, message: text)]
        }
        for piece in pieces {
            guard piece.count <= Limits.maxLineBytes else { continue }
            let body = piece.last == UInt8(ascii: "\r") ? piece.dropLast() : piece
            let text = String(decoding: body, as: UTF8.self)
            let marker = trimmed(text) == "XXX"
            if block != nil {
                if marker { close(); continue }
                if block!.expectingPercent {
                    block!.expectingPercent = false
                    if let value = CompatText.percentage(text) { block!.percent = value; continue }
                }
                block!.lines.append(text)
            } else if marker {
                block = (nil, true, [])
            } else if !trimmed(text).isEmpty, let value = CompatText.percentage(text) {
                requests.append(.progress(value, message: nil))
            }
        }
        if let open = block, open.percent != nil || !open.lines.isEmpty { close() }
        return requests
    }
}
