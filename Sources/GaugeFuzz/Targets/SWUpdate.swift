import GaugeProtocol
import GaugeTranslators

/// SWUpdate's progress socket, as `gaugectl swupdate` reads it.
extension FuzzTarget {
    static let swupdate = FuzzTarget(
        name: "swupdate",
        summary: "progress_msg streams: with a given layout the same events whole and in pieces and under a "
            + "message held back; without one, bounded buffering; messages built from the input encode and "
            + "decode to themselves in both layouts and are told apart from whole writes; the translator's "
            + "requests valid",
        maxLength: 16_000,
        extraDictionary: [SWUpdateProgressMessage.connectAck(), [0, 0, 2, 0], [3, 0, 0, 0], [8, 0, 0, 0], [1, 0, 0, 0]],
        seeds: {
            let message = SWUpdateProgressMessage(status: .progress, steps: 3, step: 2, stepPercent: 40, image: "rootfs.ext4", handler: "raw")
            return [
                [0, 1, 0, 3] + Array("xyz".utf8),  // a structured message: layout, status, text
                SWUpdateProgressMessage.connectAck() + message.encoded(layout: .packed),
                SWUpdateProgressMessage.connectAck() + message.encoded(layout: .aligned) + message.encoded(layout: .aligned),
            ]
        }
    ) { input, probe throws(FuzzFailure) in
        // The raw stream.
        for layout in SWUpdateProgressMessage.Layout.allCases {
            var whole = SWUpdateProgressStream(layout: layout)
            let all = whole.consume(input)
            var pieces = SWUpdateProgressStream(layout: layout)
            var events: [SWUpdateProgressStream.Event] = []
            for chunk in FuzzBytes.chunks(input) {
                events += pieces.consume(chunk)
                try check(pieces.pendingByteCount < layout.size + 8, "a \(layout) stream holds \(pieces.pendingByteCount) bytes")
            }
            try check(events == all, "a \(layout) stream fed in pieces made other events than fed at once")
            try SWUpdateSamples.translate(all, &probe)
        }
        var detecting = SWUpdateProgressStream()
        var detected: [SWUpdateProgressStream.Event] = []
        for chunk in FuzzBytes.chunks(input) {
            detected += detecting.consume(chunk)
            try check(detecting.pendingByteCount <= 4 * 2416 + 20_000, "the stream holds \(detecting.pendingByteCount) bytes")
        }
        try SWUpdateSamples.translate(detected, &probe)

        // A message built from the input, through both layouts.
        var reader = FuzzReader(input)
        let message = SWUpdateSamples.message(&reader)
        for layout in SWUpdateProgressMessage.Layout.allCases {
            let bytes = message.encoded(layout: layout)
            try check(bytes.count == layout.size, "a \(layout) message of \(bytes.count) bytes")
            let back = SWUpdateProgressMessage(decoding: bytes, layout: layout)
            try check(back == message, "\(message) decodes from \(layout) bytes as \(back)")
            let count = 1 + reader.below(3)
            var stream = SWUpdateProgressStream()
            let events = stream.consume(SWUpdateProgressMessage.connectAck() + Array([[UInt8]](repeating: bytes, count: count).joined()))
            try check(stream.layout == layout, "\(count) whole \(layout) messages read as \(String(describing: stream.layout))")
            try check(events == [.connected(apiVersion: SWUpdateProgressMessage.apiVersion)] + Array(repeating: .message(message), count: count),
                      "\(count) whole \(layout) messages made \(events)")
        }
    }
}

enum SWUpdateSamples {
    static func translate(_ events: [SWUpdateProgressStream.Event], _ probe: inout Probe) throws(FuzzFailure) {
        var translator = SWUpdateProgressTranslator()
        for event in events {
            switch event {
            case .connected: probe.hit("connected")
            case .problem(let text):
                probe.hit("problem", String(text.prefix(20)))
                try FuzzBytes.checkLogLine(text, from: "swupdate")
            case .message(let message):
                probe.hit("status", String(message.statusCode))
                for request in translator.requests(for: message) {
                    probe.hit("request", NativeSamples.kind(of: request))
                    try FuzzBytes.checkValid(request, from: "swupdate")
                }
            }
        }
    }

    /// Text that fits its field and reads back as itself: whole scalars, no NUL.
    static func text(_ reader: inout FuzzReader, capacity: Int) -> String {
        reader.text(maxBytes: capacity - 1) { $0 == "\0" }
    }

    static func message(_ reader: inout FuzzReader) -> SWUpdateProgressMessage {
        let status = SWUpdateProgressMessage.Status(rawValue: UInt32(reader.below(10))) ?? .progress
        var message = SWUpdateProgressMessage(
            status: status, downloadPercent: reader.u32() % 200, downloadBytes: reader.u64(), steps: reader.u32() % 20,
            step: reader.u32() % 24, stepPercent: reader.u32() % 150,
            image: text(&reader, capacity: SWUpdateProgressMessage.imageCapacity),
            handler: text(&reader, capacity: SWUpdateProgressMessage.handlerCapacity), source: reader.u32(),
            info: text(&reader, capacity: SWUpdateProgressMessage.infoCapacity))
        if reader.below(8) == 0 { message.statusCode = reader.u32() }
        return message
    }
}
