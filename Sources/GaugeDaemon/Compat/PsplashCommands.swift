import GaugeProtocol

/// Reads the psplash FIFO protocol (SPEC §2): `PROGRESS <n>`, `MSG <text>` and `QUIT`,
/// each ended by a newline or a NUL byte (`psplash-write` ends its one command with NUL,
/// `echo` into the FIFO with newline), several per write or one split across writes.
///
/// - `PROGRESS n` → `.progress(n, message: nil)`; `n` may have a fraction and is
///   clamped to 0...100 as psplash clamps it.
/// - `MSG text` → `.message(text)` (`MSG` alone clears the message).
/// - `QUIT` → `.quit(retain: false)`.
/// - Empty commands are skipped; anything else is ignored with a log line.
/// - A command longer than `maxCommandBytes` is dropped with one log line, up to its
///   separator, so a writer that never ends a command cannot grow the buffer.
///
/// Pure: no file descriptors. Feed it whatever `PsplashFIFO.readAvailable()` returned.
package struct PsplashCommands: Sendable {
    package let maxCommandBytes: Int
    private var pending: [UInt8] = []
    private var discarding = false

    package init(maxCommandBytes: Int = Limits.maxLineBytes) {
        self.maxCommandBytes = maxCommandBytes
    }

    /// Bytes of an unfinished command held back.
    package var pendingByteCount: Int { pending.count }

    package mutating func consume<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> CompatOutput {
        var output = CompatOutput()
        for byte in bytes {
            if byte == 0 || byte == UInt8(ascii: "\n") {
                if discarding {
                    discarding = false
                } else {
                    Self.interpret(pending, into: &output)
                }
                pending.removeAll(keepingCapacity: true)
            } else if !discarding {
                if pending.count == maxCommandBytes {
                    output.logs.append("psplash: command longer than \(maxCommandBytes) bytes dropped")
                    pending.removeAll(keepingCapacity: true)
                    discarding = true
                } else {
                    pending.append(byte)
                }
            }
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
                output.logs.append("psplash: ignored command \(CompatText.quoted(String(decoding: body, as: UTF8.self)))")
            }
        case "PROGRESS":
            let text = String(decoding: rest, as: UTF8.self)
            guard let value = CompatText.percentage(text) else {
                output.logs.append("psplash: PROGRESS needs a number 0-100, not \(CompatText.quoted(text))")
                return
            }
            output.requests.append(.progress(value, message: nil))
        case "MSG":
            output.requests.append(.message(CompatText.clean(rest)))
        case "QUIT":
            output.requests.append(.quit(retain: false))
        default:
            output.logs.append("psplash: unknown command \(CompatText.quoted(String(decoding: body, as: UTF8.self)))")
        }
    }
}
