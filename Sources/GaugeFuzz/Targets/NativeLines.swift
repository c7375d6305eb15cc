import GaugeProtocol

/// The native protocol's framing and request grammar.
extension FuzzTarget {
    static let lines = FuzzTarget(
        name: "lines",
        summary: "native request lines: LineFramer (whole and in pieces) against a reference splitter, "
            + "one item per line, held-back bytes within the limit; every line through Request.parse, "
            + "parse(encoded) == request, every error a bounded one-line reply",
        maxLength: 12_000, dictionary: NativeSamples.dictionary,
        seeds: { NativeSamples.lines.map { Array(($0 + "\n").utf8) } + [Array(NativeSamples.lines.joined(separator: "\n").utf8)] }
    ) { input, probe throws(FuzzFailure) in
        for limit in [Limits.maxLineBytes, 40] {
            let expected = ReferenceLines.items(input, maxLineBytes: limit)
            var whole = LineFramer(maxLineBytes: limit)
            whole.append(input)
            var items: [LineFramer.Item] = []
            while let item = whole.next() { items.append(item) }
            if let last = whole.finish() { items.append(last) }
            try check(items.map(ReferenceLines.Outcome.init) == expected,
                      "framer (limit \(limit)) made \(items.map(ReferenceLines.Outcome.init)), expected \(expected)")

            var pieces = LineFramer(maxLineBytes: limit)
            var chunked: [LineFramer.Item] = []
            for chunk in FuzzBytes.chunks(input) {
                pieces.append(Array(chunk))
                try check(pieces.pendingByteCount <= limit, "framer holds \(pieces.pendingByteCount) bytes, limit \(limit)")
                while let item = pieces.next() { chunked.append(item) }
            }
            if let last = pieces.finish() { chunked.append(last) }
            try check(chunked == items, "framer fed in pieces made other items than fed at once")
            probe.hit("lines", bucket(items.count))
            if limit == Limits.maxLineBytes {
                for item in items { try checkItem(item, &probe) }
            }
        }
    }

    /// What the daemon answers to one framed item, checked.
    static func checkItem(_ item: LineFramer.Item, _ probe: inout Probe) throws(FuzzFailure) {
        switch item {
        case .error(let error):
            probe.hit("framing", error.code.rawValue)
            try checkReply(.err(error))
        case .line(let line):
            switch Request.parse(line) {
            case .success(let request):
                probe.hit("request", NativeSamples.kind(of: request))
                let encoded = request.encoded
                try check(!encoded.utf8.contains(UInt8(ascii: "\n")), "\(request) encodes with a newline")
                let again = Request.parse(encoded)
                try check(again == .success(request), "'\(line)' parses as \(request), its encoding '\(encoded)' as \(again)")
                try checkReply(.ok(nil))
            case .failure(let error):
                probe.hit("refused", error.code.rawValue + " " + String(error.message.prefix(while: { $0 != "'" && $0 != " " })))
                try checkReply(.err(error))
            }
        }
    }

    /// A reply is one line, bounded however long the request was, and reads back.
    static func checkReply(_ reply: Reply) throws(FuzzFailure) {
        let line = reply.encoded
        let bytes = Array(line.utf8)
        try check(bytes.last == UInt8(ascii: "\n") && bytes.dropLast().allSatisfy { $0 != UInt8(ascii: "\n") },
                  "reply \(line.debugDescription) is not one line")
        try check(!line.unicodeScalars.dropLast().contains(where: Request.isForbiddenControl),
                  "reply \(line.debugDescription) holds a control character")
        if case .err = reply {
            try check(bytes.count <= 400, "an error reply of \(bytes.count) bytes: \(line.prefix(160))…")
        }
        let parsed = Reply.parse(line)
        switch (reply, parsed) {
        case (.ok, .ok?): break
        case (.err(let error), .err(let back)?):
            try check(back.code == error.code, "reply \(line.debugDescription) reads back as \(back)")
        default:
            throw FuzzFailure("reply \(line.debugDescription) reads back as \(String(describing: parsed))")
        }
    }
}

/// An independent statement of the framing rules, to hold `LineFramer` against.
enum ReferenceLines {
    enum Outcome: Equatable, CustomStringConvertible {
        case line(String)
        case error(ErrorCode)

        init(_ item: LineFramer.Item) {
            switch item {
            case .line(let text): self = .line(text)
            case .error(let error): self = .error(error.code)
            }
        }

        var description: String {
            switch self {
            case .line(let text): text.debugDescription
            case .error(let code): "err \(code.rawValue)"
            }
        }
    }

    /// Lines end at `\n`; the bytes after the last one are a line if there are any. A line
    /// longer than the limit is `toolong`; otherwise one `\r` before its end is dropped,
    /// and it must hold no NUL and be UTF-8.
    static func items(_ input: [UInt8], maxLineBytes: Int) -> [Outcome] {
        var pieces = input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if pieces.last?.isEmpty == true { pieces.removeLast() }
        return pieces.map { piece in
            if piece.count > maxLineBytes { return .error(.toolong) }
            let body = piece.last == UInt8(ascii: "\r") ? piece.dropLast() : piece
            if body.contains(0) { return .error(.syntax) }
            guard let text = String(validating: body, as: UTF8.self) else { return .error(.utf8) }
            return .line(text)
        }
    }
}

/// Sample requests and the words of the native protocol.
enum NativeSamples {
    static let lines = [
        "progress 42", "progress 42.5 Unpacking packages", "progress .5", "progress 100  two spaces ",
        "message Copying files", "message", "message ", "title Installing", "title  leading space",
        "mode determinate", "mode indeterminate", "state running", "state success Done", "state failure It broke",
        "state begin", "theme fill_color=#3080ff flat=true", "theme label_format=\"Step {value} of {max}\" bar_height=30",
        "theme style=box cover_color=0,0,0,0.5 indeterminate_style=circles", "theme circle_colors=\"#fff #000\"",
        "theme a\\b=\"x \\\" y \\\\ z\"", "reload", "show", "hide", "deactivate", "reactivate", "newroot /sysroot",
        "jobs 42.5", "jobs 101", "describe systemd-journald.service Journal Service", "describe x",
        "failure", "failure Update failed", "failure-summary Could not write /boot", "failure-summary ", "failure-line E: disk full",
        "failure-line ", "failure-clear", "ping", "status", "wait", "snapshot -", "snapshot /tmp/shot.png", "quit", "quit retain", "  ping",
        "ping\r", "progress 5 Grüße 日本語\tTab", "bogus", "",
    ]

    static let dictionary: [String] = Request.commandWords.map { $0 + " " } + [
        "determinate", "indeterminate", "running", "success", "failure", "begin", "retain", " ", "  ", "\n", "\r\n",
        "\t", "\0", "=", "\"", "\\\"", "\\\\", "\\", "/", "-", ".", "#", "\u{85}", "\u{2028}", "\u{FEFF}", "é",
        "\u{1F600}", "\u{7F}", "\u{9F}",
    ] + ThemeSamples.keys.map { $0 + "=" }

    /// The request's case name, for the probe.
    static func kind(of request: Request) -> String {
        switch request {
        case .progress(_, let message): message == nil ? "progress" : "progress+message"
        case .message: "message"
        case .title: "title"
        case .step: "step"
        case .jobs: "jobs"
        case .describe: "describe"
        case .mode(let mode): mode.rawValue
        case .state(let state, _): state.rawValue
        case .theme(let settings): "theme \(bucket(settings.count))"
        case .failure: "failure-screen"
        case .failureSummary: "failure-summary"
        case .failureLine: "failure-line"
        case .failureClear: "failure-clear"
        case .reload: "reload"
        case .show: "show"
        case .hide: "hide"
        case .deactivate: "deactivate"
        case .reactivate: "reactivate"
        case .newRoot: "newroot"
        case .ping: "ping"
        case .status: "status"
        case .wait: "wait"
        case .waitKey: "wait-key"
        case .snapshot: "snapshot"
        case .snapshotToPassedFile: "snapshot -"
        case .quit(let retain): retain ? "quit retain" : "quit"
        }
    }
}
