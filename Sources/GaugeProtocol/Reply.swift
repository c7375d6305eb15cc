/// The one reply line the daemon sends for each request line (docs/protocol.md).
package enum Reply: Equatable, Sendable {
    /// `ok`, or `ok <payload>` (an empty payload is sent as plain `ok`).
    case ok(String?)
    /// `err <code> <message>`.
    case err(ProtocolError)

    package static let ok: Reply = .ok(nil)

    /// The reply line, ending in its single `\n`. Line breaks and other control
    /// characters (but tab) in the payload or message become spaces, so one reply is
    /// always exactly one line.
    package var encoded: String {
        switch self {
        case .ok(let payload):
            guard let payload, !payload.isEmpty else { return "ok\n" }
            return "ok " + Self.singleLine(payload) + "\n"
        case .err(let error):
            let head = "err " + error.code.rawValue
            guard !error.message.isEmpty else { return head + "\n" }
            return head + " " + Self.singleLine(error.message) + "\n"
        }
    }

    /// Reads a reply line (with or without its `\n` / `\r\n`); nil when it is not one.
    package static func parse(_ line: String) -> Reply? {
        // Bytes, not Characters: "\r\n", or a space followed by a combining mark, is
        // one Character.
        var bytes = Array(line.utf8)[...]
        if bytes.last == UInt8(ascii: "\n") { bytes = bytes.dropLast() }
        if bytes.last == UInt8(ascii: "\r") { bytes = bytes.dropLast() }
        let space = UInt8(ascii: " ")
        if bytes.elementsEqual("ok".utf8) { return .ok(nil) }
        if bytes.starts(with: "ok ".utf8) {
            let payload = bytes.dropFirst(3)
            return .ok(payload.isEmpty ? nil : String(decoding: payload, as: UTF8.self))
        }
        guard bytes.starts(with: "err ".utf8) else { return nil }
        let rest = bytes.dropFirst(4)
        let codeWord = rest.prefix { $0 != space }
        guard let code = ErrorCode(rawValue: String(decoding: codeWord, as: UTF8.self)) else { return nil }
        let message = rest.dropFirst(codeWord.count).drop { $0 == space }
        return .err(ProtocolError(code, String(decoding: message, as: UTF8.self)))
    }

    private static func singleLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: Request.isForbiddenControl) else { return text }
        var view = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            view.append(Request.isForbiddenControl(scalar) ? " " : scalar)
        }
        return String(view)
    }
}
