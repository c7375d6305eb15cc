import GaugeSystem

/// The daemon's log: one line per event on standard error, `gauged: <message>`.
///
/// `info` lines are always written (start, stop, refused clients, failures); `debug` lines
/// only with `verbose` (connections coming and going). Nothing is logged per frame.
package struct Log: Sendable {
    package typealias Sink = @Sendable (String) -> Void

    package var verbose: Bool
    private let sink: Sink

    package init(verbose: Bool = false, sink: @escaping Sink = Log.standardError) {
        self.verbose = verbose
        self.sink = sink
    }

    /// A log that writes nothing (tests that do not look at the log).
    package static let silent = Log(sink: { _ in })

    package func info(_ message: @autoclosure () -> String) {
        sink(Self.line(message()))
    }

    package func debug(_ message: @autoclosure () -> String) {
        if verbose { sink(Self.line(message())) }
    }

    /// One line, whatever the message holds (client text can contain line breaks).
    private static func line(_ message: String) -> String {
        var text = "gauged: "
        for character in message.unicodeScalars {
            switch character {
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            default: text.unicodeScalars.append(character)
            }
        }
        text += "\n"
        return text
    }

    /// Writes the line with a single `write(2)`, so lines from one process never interleave.
    package static let standardError: Sink = { line in
        var line = line
        line.withUTF8 { bytes in
            var rest = UnsafeRawBufferPointer(bytes)
            while !rest.isEmpty {
                // A full non-blocking stderr drops the rest of the line: the loop never waits on its log.
                guard let written = try? Syscall.write(2, rest), written > 0 else { return }
                rest = UnsafeRawBufferPointer(rebasing: rest[written...])
            }
        }
    }
}
