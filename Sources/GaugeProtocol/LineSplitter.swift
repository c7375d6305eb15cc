/// Splits a byte stream into lines at a separator byte, holding back at most
/// `maxLineBytes` of an unfinished line: the one bounded splitter behind the native
/// protocol's `LineFramer`, psplash's commands and `gaugectl gauge`.
///
/// A line longer than `maxLineBytes` comes out once as `.tooLong` and the rest of it, up
/// to its separator, is skipped. Bytes after the last separator wait for more input, or
/// for `finish()` at the end of the stream.
package struct LineSplitter: Sendable {
    package enum Piece: Equatable, Sendable {
        /// A line without its separator.
        case line([UInt8])
        /// A line longer than `maxLineBytes`, dropped.
        case tooLong
    }

    package let maxLineBytes: Int
    private let isSeparator: @Sendable (UInt8) -> Bool
    private var pending: [UInt8] = []
    private var discarding = false

    /// Lines end at `\n` unless told otherwise.
    package init(
        maxLineBytes: Int = Limits.maxLineBytes,
        isSeparator: @escaping @Sendable (UInt8) -> Bool = { $0 == UInt8(ascii: "\n") }
    ) {
        self.maxLineBytes = maxLineBytes
        self.isSeparator = isSeparator
    }

    /// Bytes of an unfinished line held back.
    package var pendingByteCount: Int { pending.count }

    /// Feeds bytes; `emit` gets each line (or `.tooLong`) they complete, in order.
    package mutating func split<Bytes: Sequence<UInt8>>(_ bytes: Bytes, _ emit: (Piece) -> Void) {
        for byte in bytes {
            if isSeparator(byte) {
                if discarding {
                    discarding = false
                } else {
                    emit(.line(pending))
                }
                pending.removeAll(keepingCapacity: pending.count <= 4096)
            } else if !discarding {
                if pending.count == maxLineBytes {
                    emit(.tooLong)
                    pending.removeAll(keepingCapacity: true)
                    discarding = true
                } else {
                    pending.append(byte)
                }
            }
        }
    }

    /// The end of the stream: the last line if it had no separator (nil if nothing, or
    /// only the rest of a line already reported too long, is held back).
    package mutating func finish() -> Piece? {
        defer {
            pending.removeAll()
            discarding = false
        }
        guard !discarding, !pending.isEmpty else { return nil }
        return .line(pending)
    }
}

/// Turns a connection's byte stream into messages, one at a time (the idea of NIO's
/// `ByteToMessageDecoder`): the daemon's one connection type reads bytes, `append`s them,
/// and takes `next()` messages only as fast as it serves them, so every input — native
/// lines, Plymouth frames, psplash commands — gets the same limits and fairness.
package protocol MessageDecoder {
    associatedtype Message

    /// Takes the bytes just read.
    mutating func append(_ bytes: UnsafeRawBufferPointer)
    /// The next whole message, nil when the bytes so far complete none.
    mutating func next() -> Message?
    /// At the end of the stream: the message the held-back bytes still make (a last
    /// request without its newline), nil if none.
    mutating func finish() -> Message?
    /// Bytes held back for an unfinished message.
    var pendingByteCount: Int { get }
}
