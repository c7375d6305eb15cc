/// Plymouth's boot protocol (`ply-boot-protocol.h`) byte for byte, both ways: what the
/// `plymouth` command sends plymouthd and what comes back. The daemon's side reads it
/// in `PlymouthSession`; the `plymouth` applet writes it.
///
/// A request is a command byte, then `\0` when it has no argument, or `\x02`, a length
/// byte N and N bytes: the argument and its NUL (so an argument has at most 254 bytes).
package enum PlymouthRequest {
    package static let argumentMarker: UInt8 = 0x02
    /// The longest argument a request can carry (its length byte counts the NUL too).
    package static let maxArgumentBytes = 254

    /// The request's bytes; an argument longer than `maxArgumentBytes` is cut at the last
    /// whole UTF-8 character that fits.
    package static func encode(_ command: UInt8, _ argument: [UInt8]? = nil) -> [UInt8] {
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

    package static func encode(_ command: UInt8, text: String?) -> [UInt8] {
        encode(command, text.map { Array($0.utf8) })
    }
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
