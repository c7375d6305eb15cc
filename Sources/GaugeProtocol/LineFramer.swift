/// Splits a byte stream into request lines.
///
/// A line longer than `maxLineBytes` yields one `toolong` error and is skipped up to its
/// newline; a line that is not valid UTF-8 or holds a NUL byte yields a `utf8` / `syntax`
/// error. Bytes after the last newline wait for more input.
package struct LineFramer: Sendable {
    package enum Item: Equatable, Sendable {
        case line(String)
        case error(ProtocolError)
    }

    package let maxLineBytes: Int
    private var pending: [UInt8] = []
    private var discarding = false
    private var ready: [Item] = []
    private var readyIndex = 0

    package init(maxLineBytes: Int = Limits.maxLineBytes) {
        self.maxLineBytes = maxLineBytes
    }

    /// Bytes of an unfinished line held back.
    package var pendingByteCount: Int { pending.count }

    package mutating func append(_ bytes: UnsafeRawBufferPointer) {
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if discarding {
                    discarding = false
                } else {
                    ready.append(Self.decode(pending))
                }
                pending.removeAll(keepingCapacity: true)
            } else if !discarding {
                if pending.count == maxLineBytes {
                    ready.append(.error(ProtocolError(.toolong, "line longer than \(maxLineBytes) bytes")))
                    pending.removeAll(keepingCapacity: true)
                    discarding = true
                } else {
                    pending.append(byte)
                }
            }
        }
    }

    package mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The next complete line or framing error, in stream order.
    package mutating func next() -> Item? {
        guard readyIndex < ready.count else {
            if !ready.isEmpty { ready.removeAll(keepingCapacity: true); readyIndex = 0 }
            return nil
        }
        defer { readyIndex += 1 }
        return ready[readyIndex]
    }

    private static func decode(_ bytes: [UInt8]) -> Item {
        var body = bytes[...]
        if body.last == UInt8(ascii: "\r") { body = body.dropLast() }
        if body.contains(0) {
            return .error(ProtocolError(.syntax, "NUL byte in line"))
        }
        guard let text = String(validating: body, as: UTF8.self) else {
            return .error(ProtocolError(.utf8, "line is not valid UTF-8"))
        }
        return .line(text)
    }
}
