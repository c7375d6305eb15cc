import GaugeProtocol

/// The encoders of the wire format against their parsers: requests, replies, theme
/// settings and plain decimals built from the input must read back as themselves.
extension FuzzTarget {
    static let encodings = FuzzTarget(
        name: "encodings",
        summary: "requests, replies, theme settings, numbers and Plymouth requests built from the input: "
            + "parse(encode(x)) == x, one line each, the framer splits the encoded line back out",
        maxLength: 3000, dictionary: ["\"", "\\", " ", "\t", "=", "/", "-", "é", "\u{2028}"],
        seeds: { (0..<24).map { kind in [UInt8(kind)] + Array("abc def \"q\" \\ /x".utf8) } + [[0, 0, 0, 0, 0, 0, 0, 0]] }
    ) { input, probe throws(FuzzFailure) in
        var reader = FuzzReader(input)
        while !reader.isAtEnd {
            let request = Encodings.request(&reader)
            probe.hit("request", NativeSamples.kind(of: request))
            let line = request.encoded
            let parsed = Request.parse(line)
            try check(parsed == .success(request), "\(request) encodes as '\(line)', which parses as \(parsed)")
            if line.utf8.count <= Limits.maxLineBytes {
                var framer = LineFramer()
                framer.append(Array((line + "\n").utf8))
                let item = framer.next()
                try check(item == .line(line), "the framer splits '\(line)' as \(String(describing: item))")
            }

            let reply = Encodings.reply(&reader)
            let replyLine = reply.encoded
            let back = Reply.parse(replyLine)
            try check(back == reply, "\(reply) encodes as \(replyLine.debugDescription), which reads back as \(String(describing: back))")

            let number = Double(bitPattern: reader.u64())
            if number.isFinite {
                let text = PlainDecimal.format(number)
                let value = PlainDecimal.parse(text)
                try check(value == number, "\(number) is written \(text), which reads back as \(String(describing: value))")
                try check(!text.contains("e") && !text.contains("E"), "\(number) is written with an exponent: \(text)")
            }

            try Encodings.checkPlymouthRequest(&reader)
        }
    }
}

enum Encodings {
    /// A Plymouth request built from the input reads back as its kind and its argument:
    /// whole up to its first NUL, or cut at a character's start when longer than the
    /// protocol carries.
    static func checkPlymouthRequest(_ reader: inout FuzzReader) throws(FuzzFailure) {
        let kinds = PlymouthRequest.Kind.allCases
        let kind = kinds[reader.below(kinds.count)]
        let argument = reader.bool() ? reader.bytes(maxBytes: 300) : nil
        let wire = PlymouthRequest.encode(kind, argument)
        var decoder = PlymouthFrameDecoder()
        let split = reader.below(wire.count)
        wire[..<split].withUnsafeBytes { decoder.append($0) }
        let early = decoder.next()
        try check(early == nil, "\(wire) cut after \(split) bytes reads as \(String(describing: early))")
        wire[split...].withUnsafeBytes { decoder.append($0) }
        let frame = decoder.next()
        try check(frame?.kind == kind, "\(kind) encodes as \(wire), which reads back as \(String(describing: frame))")
        try check(decoder.pendingByteCount == 0, "\(wire) leaves \(decoder.pendingByteCount) bytes behind")
        guard let argument else { return try check(frame?.argument == nil, "\(kind) without an argument reads back with one") }
        let sent = Array(argument.prefix { $0 != 0 })
        let read = frame?.argument ?? []
        try check(read.count <= PlymouthRequest.maxArgumentBytes && sent.starts(with: read),
                  "the argument \(sent) reads back as \(read)")
        if sent.count <= PlymouthRequest.maxArgumentBytes { try check(read == sent, "the argument \(sent) reads back as \(read)") }
    }

    /// Text a request may carry: no control character but tab.
    static func text(_ reader: inout FuzzReader, maxBytes: Int = 200) -> String {
        reader.text(maxBytes: maxBytes, excluding: Request.isForbiddenControl)
    }

    static func request(_ reader: inout FuzzReader) -> Request {
        switch reader.below(22) {
        case 0:
            let value = Double(reader.u32() % 100_001) / 1000
            return .progress(value, message: reader.bool() ? text(&reader) : nil)
        case 1: return .message(text(&reader))
        case 2: return .title(text(&reader))
        case 3: return .mode(reader.bool() ? .determinate : .indeterminate)
        case 4:
            let state = RunState.allCases[reader.below(RunState.allCases.count)]
            return .state(state, message: reader.bool() ? text(&reader) : nil)
        case 5:
            var settings: [ThemeSetting] = []
            for _ in 0...reader.below(4) {
                var key = String(String.UnicodeScalarView(
                    reader.bytes(maxBytes: 24).compactMap { byte in
                        let scalar = Unicode.Scalar(byte)
                        return ThemeSetting.isValidKey(String(scalar)) ? scalar : nil
                    }))
                if key.isEmpty { key = ThemeSamples.keys[reader.below(ThemeSamples.keys.count)] }
                settings.append(ThemeSetting(key: key, value: text(&reader)))
            }
            return .theme(settings)
        case 6: return .reload
        case 7: return .show
        case 8: return .hide
        case 9: return .deactivate
        case 10: return .reactivate
        case 11: return .newRoot(path: "/" + text(&reader))
        case 12: return .ping
        case 13: return .status
        case 14: return .wait
        case 15: return .snapshot(path: "/" + text(&reader))
        case 16: return .snapshotToPassedFile
        case 17: return .failure(title: text(&reader))
        case 18: return .failureSummary(text(&reader))
        case 19: return .failureLine(text(&reader))
        case 20: return .failureClear
        default: return .quit(retain: reader.bool())
        }
    }

    /// A reply as the daemon builds them: an empty payload is plain `ok`; a message
    /// neither starts with a space nor holds a control character but tab.
    static func reply(_ reader: inout FuzzReader) -> Reply {
        if reader.bool() {
            let payload = text(&reader)
            return .ok(payload.isEmpty ? nil : payload)
        }
        let code = ErrorCode.allCases[reader.below(ErrorCode.allCases.count)]
        let message = text(&reader).unicodeScalars.drop { $0 == " " }
        return .err(ProtocolError(code, String(String.UnicodeScalarView(message))))
    }
}
