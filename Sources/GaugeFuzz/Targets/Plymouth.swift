import GaugeDaemon
import GaugeProtocol

/// Plymouth's boot protocol as the daemon serves it on its abstract socket.
extension FuzzTarget {
    static let plymouth = FuzzTarget(
        name: "plymouth",
        summary: "Plymouth frames (whole and in pieces) against a reference decoder: one ACK or NAK per "
            + "frame, held-back bytes under 259, the message list within its capacity, every request a "
            + "valid native one, newroot only from root, an unauthorized peer only NAKs",
        maxLength: 6000,
        dictionary: ["\u{2}", "\0", "P\0", "Q\0", "Q\u{2}\u{1}\u{1}", "U\u{2}", "M\u{2}", "m\u{2}", "C\u{2}\u{8}boot-up\0", "u\u{2}\u{3}42\0", "R\u{2}\u{9}/sysroot\0"],
        seeds: {
            PlymouthSamples.frames.map { $0 } + [PlymouthSamples.frames.reduce([], +)]
        }
    ) { input, probe throws(FuzzFailure) in
        let frames = PlymouthSamples.referenceFrames(input)
        probe.hit("frames", bucket(frames.count))
        let rootPeer = input.count % 3 != 0
        var messages = PlymouthMessages(capacity: 4)
        var session = PlymouthSession(authorized: true, rootPeer: rootPeer, hasActiveVT: input.count % 2 == 0)
        var output = CompatOutput()
        for chunk in FuzzBytes.chunks(input) {
            let part = session.consume(chunk, messages: &messages)
            output.requests += part.requests
            output.reply += part.reply
            output.logs += part.logs
            output.lendsConsole = output.lendsConsole || part.lendsConsole
            if let pauses = part.pausesProgress { output.pausesProgress = pauses }
            try check(session.pendingByteCount <= 258, "the session holds \(session.pendingByteCount) bytes")
            try check(messages.displayed.count <= messages.capacity, "\(messages.displayed.count) messages kept")
        }
        try check(output.reply.count == frames.count, "\(output.reply.count) answers to \(frames.count) requests")
        try check(output.reply.allSatisfy { $0 == PlymouthSession.ack || $0 == PlymouthSession.nak }, "an answer other than ACK/NAK")
        for request in output.requests {
            probe.hit("request", NativeSamples.kind(of: request))
            try FuzzBytes.checkValid(request, from: "plymouth")
            if case .newRoot = request { try check(rootPeer, "newroot from a peer that is not root") }
        }
        for line in output.logs {
            probe.hit("log", String(line.prefix(12)))
            try FuzzBytes.checkLogLine(line, from: "plymouth")
        }

        var wholeMessages = PlymouthMessages(capacity: 4)
        var wholeSession = PlymouthSession(authorized: true, rootPeer: rootPeer, hasActiveVT: input.count % 2 == 0)
        let whole = wholeSession.consume(input, messages: &wholeMessages)
        try check(whole == output && wholeMessages == messages, "fed at once, the session answers otherwise than fed in pieces")

        var refusedMessages = PlymouthMessages()
        var refused = PlymouthSession(authorized: false)
        let refusals = refused.consume(input, messages: &refusedMessages)
        try check(refusals.requests.isEmpty, "an unauthorized peer made \(refusals.requests)")
        try check(refusals.reply == [UInt8](repeating: PlymouthSession.nak, count: frames.count), "an unauthorized peer got an ACK")
    }
}

enum PlymouthSamples {
    static func frame(_ command: Character, _ argument: String? = nil) -> [UInt8] {
        guard let argument else { return [command.asciiValue!, 0] }
        let bytes = Array(argument.utf8) + [0]
        return [command.asciiValue!, 0x02, UInt8(bytes.count)] + bytes
    }

    static let frames: [[UInt8]] = [
        frame("P"), frame("U", "fsck 42%"), frame("C", "shutdown"), frame("u", "42"), frame("M", "Hello"),
        frame("m", "Hello"), frame("$"), frame("H"), frame("D"), frame("r"), frame("R", "/sysroot"),
        frame("A"), frame("a"), frame("S"), frame("!"), frame("L", "y"), frame("V"), frame("*", "Password:"),
        frame("c"), frame("W", "Question?"), frame("K", "y"), frame("Q", "\u{1}"), frame("Q"), [0x5a, 0x00],
    ]

    /// The frames in `input`, read independently of `PlymouthFrameDecoder`: a command
    /// byte and `\0` (or any byte but `\x02`), or a command byte, `\x02`, a length and
    /// that many bytes; an unfinished frame at the end is no frame.
    static func referenceFrames(_ input: [UInt8]) -> [(command: UInt8, argument: [UInt8]?)] {
        var frames: [(command: UInt8, argument: [UInt8]?)] = []
        var index = 0
        while input.count - index >= 2 {
            if input[index + 1] != 0x02 {
                frames.append((input[index], nil))
                index += 2
                continue
            }
            guard input.count - index >= 3 else { break }
            let length = Int(input[index + 2])
            guard input.count - index - 3 >= length else { break }
            let argument = input[(index + 3)..<(index + 3 + length)]
            frames.append((input[index], Array(argument.prefix { $0 != 0 })))
            index += 3 + length
        }
        return frames
    }
}
