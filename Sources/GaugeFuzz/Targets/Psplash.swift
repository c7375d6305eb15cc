import GaugeDaemon
import GaugeProtocol

/// The psplash FIFO's commands.
extension FuzzTarget {
    static let psplash = FuzzTarget(
        name: "psplash",
        summary: "psplash commands through the decoder (in pieces) and consume (at once): the same output, "
            + "one output per command ended by a newline or NUL, held-back bytes within the limit, requests "
            + "valid with progress clamped to 0...100, log lines short",
        maxLength: 12_000, dictionary: ["PROGRESS ", "MSG ", "QUIT", "\n", "\0", " ", "\r"],
        seeds: { [Array("PROGRESS 10\0MSG Starting up\nPROGRESS 42.5\0QUIT\0".utf8), Array("MSG\nPROGRESS -5\nPROGRESS 1000\nBOGUS x\n\n".utf8)] }
    ) { input, probe throws(FuzzFailure) in
        for limit in [Limits.maxLineBytes, 32] {
            var separators = 0
            var tail = 0
            for byte in input {
                if byte == 0 || byte == UInt8(ascii: "\n") { separators += 1; tail = 0 } else { tail += 1 }
            }
            let commands = separators + (tail > 0 ? 1 : 0)

            var decoder = PsplashCommands(maxCommandBytes: limit)
            var outputs: [CompatOutput] = []
            for chunk in FuzzBytes.chunks(input) {
                chunk.withUnsafeBytes { decoder.append($0) }
                try check(decoder.pendingByteCount <= limit, "psplash holds \(decoder.pendingByteCount) bytes, limit \(limit)")
                while let output = decoder.next() { outputs.append(output) }
            }
            if let last = decoder.finish() { outputs.append(last) }
            try check(outputs.count == commands, "\(outputs.count) outputs for \(commands) commands")

            var whole = PsplashCommands(maxCommandBytes: limit)
            var all = whole.consume(input)
            if let last = whole.finish() {
                all.requests += last.requests
                all.logs += last.logs
            }
            try check(all.requests == outputs.flatMap(\.requests) && all.logs == outputs.flatMap(\.logs),
                      "consume and the decoder disagree")
            for request in all.requests {
                probe.hit("request", NativeSamples.kind(of: request))
                try FuzzBytes.checkValid(request, from: "psplash")
            }
            for line in all.logs {
                probe.hit("log", String(line.prefix(12)))
                try FuzzBytes.checkLogLine(line, from: "psplash")
            }
            try check(all.reply.isEmpty, "psplash answered")
        }
    }
}
