import GaugeProtocol

/// Reads the psplash FIFO protocol (docs/protocol.md): `PROGRESS <n>`, `MSG <text>` and `QUIT`,
/// each ended by a newline or a NUL byte (`psplash-write` ends its one command with NUL,
/// `echo` into the FIFO with newline), several per write or one split across writes.
///
/// - `PROGRESS n` → `.progress(n, message: nil)`; `n` may have a fraction and is
///   clamped to 0...100 as psplash clamps it.
/// - `MSG text` → `.message(text)` (`MSG` alone clears the message).
/// - `QUIT` → `.quit(retain: false)`.
/// - Empty commands are skipped; anything else is ignored with a log line (the daemon
///   prefixes `psplash:`).
/// - A command longer than `maxCommandBytes` is dropped with one log line, up to its
///   separator, so a writer that never ends a command cannot grow the buffer.
///
/// Pure: no file descriptors. As a `MessageDecoder` it yields what each command makes,
/// one command at a time; `consume` translates a whole chunk at once.
package struct PsplashCommands: MessageDecoder, Sendable {
    package var maxCommandBytes: Int { splitter.maxLineBytes }
    private var splitter: LineSplitter
    private var ready: [LineSplitter.Piece] = []
    private var readyIndex = 0

    package init(maxCommandBytes: Int = Limits.maxLineBytes) {
        splitter = LineSplitter(maxLineBytes: maxCommandBytes) { $0 == 0 || $0 == UInt8(ascii: "\n") }
    }

    /// Bytes of an unfinished command held back.
    package var pendingByteCount: Int { splitter.pendingByteCount }

    package mutating func append(_ bytes: UnsafeRawBufferPointer) {
        splitter.split(bytes) { ready.append($0) }
    }

    /// What the next whole command makes (requests, log lines).
    package mutating func next() -> CompatOutput? {
        guard readyIndex < ready.count else {
            if !ready.isEmpty { ready.removeAll(keepingCapacity: ready.count <= 256); readyIndex = 0 }
            return nil
        }
        defer { readyIndex += 1 }
        return translate(ready[readyIndex])
    }

    /// The FIFO never ends (the daemon holds a writer), so nothing is left to finish.
    package mutating func finish() -> CompatOutput? {
        splitter.finish().map(translate)
    }

    package mutating func consume<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> CompatOutput {
        var output = CompatOutput()
        let maxCommandBytes = maxCommandBytes
        splitter.split(bytes) { output.append(Self.translate($0, maxCommandBytes: maxCommandBytes)) }
        return output
    }

    private func translate(_ piece: LineSplitter.Piece) -> CompatOutput {
        Self.translate(piece, maxCommandBytes: maxCommandBytes)
    }

    private static func translate(_ piece: LineSplitter.Piece, maxCommandBytes: Int) -> CompatOutput {
        var output = CompatOutput()
        switch piece {
        case .tooLong: output.logs.append("command longer than \(maxCommandBytes) bytes dropped")
        case .line(let command): interpret(command, into: &output)
        }
        return output
    }

    private static func interpret(_ command: [UInt8], into output: inout CompatOutput) {
        var body = command[...]
        if body.last == UInt8(ascii: "\r") { body = body.dropLast() }
        let word = body.prefix { $0 != UInt8(ascii: " ") }
        let rest = body.dropFirst(word.count).dropFirst()  // the one separating space
        switch String(decoding: word, as: UTF8.self) {
        case "":
            if !body.allSatisfy({ $0 == UInt8(ascii: " ") }) {
                output.logs.append("ignored command \(CompatText.quoted(String(decoding: body, as: UTF8.self)))")
            }
        case "PROGRESS":
            let text = String(decoding: rest, as: UTF8.self)
            guard let value = CompatText.percentage(text) else {
                output.logs.append("PROGRESS needs a number 0-100, not \(CompatText.quoted(text))")
                return
            }
            output.requests.append(.progress(value, message: nil))
        case "MSG":
            output.requests.append(.message(CompatText.clean(rest)))
        case "QUIT":
            output.requests.append(.quit(retain: false))
        default:
            output.logs.append("unknown command \(CompatText.quoted(String(decoding: body, as: UTF8.self)))")
        }
    }
}
