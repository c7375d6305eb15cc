/// Splits a byte stream into request lines (a `LineSplitter` at `\n`).
///
/// A line longer than `maxLineBytes` yields one `toolong` error and is skipped up to its
/// newline; a line that is not valid UTF-8 or holds a NUL byte yields a `utf8` / `syntax`
/// error. Bytes after the last newline wait for more input, or `finish()`.
package struct LineFramer: MessageDecoder, Sendable {
    package enum Item: Equatable, Sendable {
        case line(String)
        case error(ProtocolError)
    }

    package var maxLineBytes: Int { splitter.maxLineBytes }
    private var splitter: LineSplitter
    private var ready: [Item] = []
    private var readyIndex = 0

    package init(maxLineBytes: Int = Limits.maxLineBytes) {
        splitter = LineSplitter(maxLineBytes: maxLineBytes)
    }

    /// Bytes of an unfinished line held back.
    package var pendingByteCount: Int { splitter.pendingByteCount }

    /// Lines split and not yet taken with `next()`.
    var readyCount: Int { ready.count - readyIndex }

    package mutating func append(_ bytes: UnsafeRawBufferPointer) {
        let maxLineBytes = splitter.maxLineBytes
        splitter.split(bytes) { ready.append(Self.item($0, maxLineBytes: maxLineBytes)) }
    }

    package mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The next complete line or framing error, in stream order.
    package mutating func next() -> Item? {
        guard readyIndex < ready.count else {
            if !ready.isEmpty { ready.removeAll(keepingCapacity: ready.count <= 256); readyIndex = 0 }
            return nil
        }
        defer { readyIndex += 1 }
        return ready[readyIndex]
    }

    /// The last line when the stream ended without its newline.
    package mutating func finish() -> Item? {
        splitter.finish().map { Self.item($0, maxLineBytes: splitter.maxLineBytes) }
    }

    private static func item(_ piece: LineSplitter.Piece, maxLineBytes: Int) -> Item {
        switch piece {
        case .tooLong: return .error(ProtocolError(.toolong, "line longer than \(maxLineBytes) bytes"))
        case .line(let bytes): return decode(bytes)
        }
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
