import CGaugeLinux
import GaugeSystem

/// A terminal's size in character cells.
package struct TerminalSize: Equatable, Hashable, Sendable, CustomStringConvertible {
    package var columns: Int
    package var rows: Int

    package init(columns: Int, rows: Int) {
        self.columns = columns
        self.rows = rows
    }

    /// What is assumed when the output is not a terminal (a pipe, a file).
    package static let fallback = TerminalSize(columns: 80, rows: 24)

    /// The size the terminal on `fd` reports (`TIOCGWINSZ`); nil when `fd` is not a
    /// terminal or reports no size (a fresh pty before anyone set one).
    package static func of(fd: Int32) -> TerminalSize? {
        var ws = winsize()
        guard (try? Syscall.ioctl(fd, UInt(TIOCGWINSZ), &ws, "TIOCGWINSZ")) != nil, ws.ws_col > 0, ws.ws_row > 0 else { return nil }
        return TerminalSize(columns: Int(ws.ws_col), rows: Int(ws.ws_row))
    }

    /// The same size held within `1...maximum` on both sides.
    func clamped(to maximum: TerminalSize) -> TerminalSize {
        TerminalSize(columns: min(max(columns, 1), maximum.columns), rows: min(max(rows, 1), maximum.rows))
    }

    package var description: String { "\(columns)x\(rows)" }
}
