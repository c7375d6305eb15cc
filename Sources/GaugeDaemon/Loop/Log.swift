import CGaugeLinux
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
    package static let standardError: Sink = { line in write(line, to: 2) }

    /// Where stderr is the kernel's log (`/dev/kmsg`, as initramfs-tools' script starts the
    /// daemon, before any journal runs), each line is written through a new opening of it:
    /// the kernel allows an opening ten lines in five seconds and drops the rest without
    /// an error, and a start, a hand-over to a card and a move into the new root write more
    /// than that in a few seconds. A line is one record either way, marked `<6>`: at the
    /// level the journal gives the same line on stderr under systemd (info), where the
    /// kernel's default, warning, would put every line of the daemon's among a failed
    /// boot's warnings (`journalctl -p warning`, the failure screen's lines and QR code).
    package static func forStandardError() -> Sink {
        guard let status = try? Syscall.fstat(2), status.st_mode & UInt32(S_IFMT) == UInt32(S_IFCHR),
            DeviceNumber(UInt64(status.st_rdev)) == DeviceNumber(major: 1, minor: 11)
        else { return standardError }
        return { line in
            let record = "<6>" + line
            guard let fd = try? Syscall.open("/proc/self/fd/2", flags: O_WRONLY | O_CLOEXEC | O_NONBLOCK) else {
                return write(record, to: 2)
            }
            write(record, to: fd)
            Syscall.close(fd)
        }
    }

    private static func write(_ line: String, to fd: Int32) {
        var line = line
        line.withUTF8 { bytes in
            var rest = UnsafeRawBufferPointer(bytes)
            while !rest.isEmpty {
                // A full non-blocking stderr drops the rest of the line: the loop never waits on its log.
                guard let written = try? Syscall.write(fd, rest), written > 0 else { return }
                rest = UnsafeRawBufferPointer(rebasing: rest[written...])
            }
        }
    }
}
