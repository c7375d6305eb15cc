/// Plymouth's boot protocol (`ply-boot-protocol.h`) byte for byte, both ways: what the
/// `plymouth` command sends plymouthd and what comes back. The daemon's side reads it
/// in `PlymouthSession`; the `plymouth` applet writes it.
///
/// A request is a command byte, then `\0` when it has no argument, or `\x02`, a length
/// byte N and N bytes: the argument and its NUL (so an argument has at most 254 bytes).
package enum PlymouthRequest {
    /// The request kinds by their command byte, as `ply-boot-protocol.h` names them.
    package enum Kind: UInt8, CaseIterable, Sendable {
        case ping = 0x50                // P
        case update = 0x55              // U
        case changeMode = 0x43          // C
        case systemUpdate = 0x75        // u
        case sysinit = 0x53             // S
        case deactivate = 0x44          // D
        case reactivate = 0x72          // r
        case quit = 0x51                // Q
        case password = 0x2A            // *
        case cachedPassword = 0x63      // c
        case question = 0x57            // W
        case displayMessage = 0x4D      // M
        case hideMessage = 0x6D         // m
        case watchKeystroke = 0x4B      // K
        case ignoreKeystroke = 0x4C     // L
        case pauseProgress = 0x41       // A
        case unpauseProgress = 0x61     // a
        case showSplash = 0x24          // $
        case hideSplash = 0x48          // H
        case newRoot = 0x52             // R
        case hasActiveVT = 0x56         // V
        case reportError = 0x21         // !

        /// The request's name in log lines (the `plymouth` command's word for it).
        package var name: String {
            switch self {
            case .ping: "ping"
            case .update: "update"
            case .changeMode: "change-mode"
            case .systemUpdate: "system-update"
            case .sysinit: "sysinit"
            case .deactivate: "deactivate"
            case .reactivate: "reactivate"
            case .quit: "quit"
            case .password: "password request"
            case .cachedPassword: "cached password request"
            case .question: "question"
            case .displayMessage: "display-message"
            case .hideMessage: "hide-message"
            case .watchKeystroke: "watch-keystroke"
            case .ignoreKeystroke: "ignore-keystroke"
            case .pauseProgress: "pause-progress"
            case .unpauseProgress: "unpause-progress"
            case .showSplash: "show-splash"
            case .hideSplash: "hide-splash"
            case .newRoot: "newroot"
            case .hasActiveVT: "has-active-vt"
            case .reportError: "report-error"
            }
        }
    }

    static let argumentMarker: UInt8 = 0x02
    /// The longest argument a request can carry (its length byte counts the NUL too).
    package static let maxArgumentBytes = 254

    /// The request's bytes; an argument longer than `maxArgumentBytes` is cut at the last
    /// whole UTF-8 character that fits.
    package static func encode(_ kind: Kind, _ argument: [UInt8]? = nil) -> [UInt8] {
        let command = kind.rawValue
        guard var argument else { return [command, 0] }
        if argument.count > maxArgumentBytes {
            var end = maxArgumentBytes
            // Back over continuation bytes (10xxxxxx) to the start of the cut character.
            while end > 0, argument[end] & 0xC0 == 0x80 { end -= 1 }
            argument.removeSubrange(end...)
        }
        if let nul = argument.firstIndex(of: 0) { argument.removeSubrange(nul...) }
        return [command, argumentMarker, UInt8(argument.count + 1)] + argument + [0]
    }

    package static func encode(_ kind: Kind, text: String?) -> [UInt8] {
        encode(kind, text.map { Array($0.utf8) })
    }
}

/// One Plymouth request as it came off the wire.
package struct PlymouthFrame: Equatable, Sendable {
    package var command: UInt8
    /// The argument up to its first NUL; nil when the request has none.
    package var argument: [UInt8]?

    package init(command: UInt8, argument: [UInt8]?) {
        self.command = command
        self.argument = argument
    }

    /// The request's kind; nil for a byte Plymouth's protocol does not know.
    package var kind: PlymouthRequest.Kind? { PlymouthRequest.Kind(rawValue: command) }

    /// The kind's name, or the byte in hex ("0x7F") for an unknown one.
    package var name: String {
        if let kind { return kind.name }
        let hex = String(command, radix: 16, uppercase: true)
        return "0x" + (hex.count < 2 ? "0" : "") + hex
    }
}

/// Splits a Plymouth connection's bytes into requests, as `PlymouthRequest.encode` writes
/// them (plymouthd reads any second byte other than `\x02` as "no argument"; so does this).
/// A request is at most 258 bytes, so little is held back.
package struct PlymouthFrameDecoder: MessageDecoder, Sendable {
    private var pending: [UInt8] = []
    private var start = 0

    package init() {}

    package var pendingByteCount: Int { pending.count - start }

    package mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if start > 0 {
            pending.removeFirst(start)
            start = 0
        }
        pending.append(contentsOf: bytes)
    }

    package mutating func next() -> PlymouthFrame? {
        let bytes = pending[start...]
        guard bytes.count >= 2 else { return nil }
        let first = bytes.startIndex
        let command = bytes[first]
        guard bytes[first + 1] == PlymouthRequest.argumentMarker else {
            start += 2
            return PlymouthFrame(command: command, argument: nil)
        }
        guard bytes.count >= 3 else { return nil }
        let size = Int(bytes[first + 2])
        guard bytes.count >= 3 + size else { return nil }
        let body = bytes[(first + 3)..<(first + 3 + size)]
        start += 3 + size
        return PlymouthFrame(command: command, argument: Array(body.prefix { $0 != 0 }))
    }

    /// An unfinished request at the end of the stream is dropped, as plymouthd drops it.
    package mutating func finish() -> PlymouthFrame? { nil }
}

/// Plymouth's replies beyond ACK and NAK, byte for byte as plymouthd writes them.
package enum PlymouthReply {
    package static let ackByte: UInt8 = 0x06
    package static let nakByte: UInt8 = 0x15
    static let answerByte: UInt8 = 0x02
    static let noAnswerByte: UInt8 = 0x05
    static let answersByte: UInt8 = 0x09

    /// `\x02`, the answer's length as 4 bytes, least significant first, then the answer
    /// (no NUL): a password, a question's answer or a key.
    package static func answer(_ bytes: [UInt8]) -> [UInt8] {
        let count = UInt32(truncatingIfNeeded: bytes.count)
        return [answerByte, UInt8(count & 0xFF), UInt8((count >> 8) & 0xFF), UInt8((count >> 16) & 0xFF), UInt8(count >> 24)]
            + bytes
    }

    /// `\x05`: no answer (cancelled, withdrawn, or no cached password).
    package static let noAnswer: [UInt8] = [noAnswerByte]
}

/// A reply as a client reads it: ACK, NAK, an answer, "no answer", or a list of answers.
package enum PlymouthResponse: Equatable, Sendable {
    case ack
    case nak
    /// A password, a question's answer or a key.
    case answer([UInt8])
    /// Cancelled, withdrawn, or nothing cached.
    case noAnswer
    /// Cached passwords (`\t`; Gauge's daemon never sends them, plymouthd may).
    case answers([[UInt8]])

    /// The longest answer taken from a daemon (plymouthd's own limit is far lower).
    package static let maxAnswerBytes = 1 << 16

    /// Reads one reply from the front of `bytes`: the reply and how many bytes it took;
    /// nil while it is incomplete. An unknown first byte or an over-long answer is
    /// `.failure`: the peer is not speaking the protocol.
    package static func decode(_ bytes: ArraySlice<UInt8>) -> Result<(PlymouthResponse, Int), PlymouthReplyError>? {
        guard let first = bytes.first else { return nil }
        switch first {
        case PlymouthReply.ackByte: return .success((.ack, 1))
        case PlymouthReply.nakByte: return .success((.nak, 1))
        case PlymouthReply.noAnswerByte: return .success((.noAnswer, 1))
        case PlymouthReply.answerByte, PlymouthReply.answersByte:
            guard bytes.count >= 5 else { return nil }
            let start = bytes.startIndex
            var size = 0
            for index in (1...4).reversed() { size = size << 8 | Int(bytes[start + index]) }
            guard size <= maxAnswerBytes else { return .failure(PlymouthReplyError(byte: first, size: size)) }
            guard bytes.count >= 5 + size else { return nil }
            let body = Array(bytes[(start + 5)..<(start + 5 + size)])
            if first == PlymouthReply.answerByte { return .success((.answer(body), 5 + size)) }
            let answers = body.split(separator: 0, omittingEmptySubsequences: true).map { Array($0) }
            return .success((.answers(answers), 5 + size))
        default:
            return .failure(PlymouthReplyError(byte: first, size: nil))
        }
    }
}

/// A reply that is not Plymouth's protocol.
package struct PlymouthReplyError: Error, Equatable, Sendable {
    package var byte: UInt8
    package var size: Int?
}
