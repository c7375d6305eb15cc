import GaugeDaemon
import GaugeDisplay
import GaugeProtocol
import GaugeRender
import Glibc
import Testing

/// `--display terminal` on the smallest terminal anyone uses, 80x24 cells: every element
/// of a finished screen is drawn whole, inside the picture.
@Suite struct TerminalLayoutTests {
    @Test(arguments: [RunState.success, .failure])
    func everyElementFitsAn80x24Terminal(state: RunState) throws {
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        defer { close(fds[0]); close(fds[1]) }
        let terminal = try TerminalDisplay(
            fd: fds[1], terminalSize: TerminalSize(columns: 80, rows: 24), scale: Daemon.terminalScale)
        defer { terminal.close() }
        #expect((terminal.width, terminal.height) == (240, 144))

        let screen = ProgressScreen(theme: Theme(), display: terminal, log: { _ in })
        screen.setTitle("Installing")
        screen.setProgress(100, message: "Unpacking packages", at: 0)
        screen.setState(state, message: "Done", at: 0)
        screen.renderFrame(at: 10)

        let rects = Dictionary(uniqueKeysWithValues: screen.elementRects.map { ($0.name, $0.rect) })
        let picture = Rect(x: 0, y: 0, width: terminal.width, height: terminal.height)
        for name in ["bar", "title", "message", "mark"] {
            let rect = try #require(rects[name])
            #expect(!rect.isEmpty, "\(name) is drawn")
            #expect(picture.intersection(rect) == rect, "\(name) \(rect) lies inside \(picture)")
        }
        let mark = try #require(rects["mark"])
        let bar = try #require(rects["bar"])
        // The mark's image is square; a cut one would be narrower than it is high.
        #expect(mark.width == mark.height, "the whole mark: \(mark)")
        #expect(mark.x > bar.maxX && mark.maxX <= picture.maxX, "beside the bar, inside the picture: \(mark), bar \(bar)")

        // Its pixels are there, in the state's colour, in columns the terminal shows.
        let frame = try #require(terminal.beginFrame()).buffer
        let expected = state == .success ? Theme().successColor : Theme().failureColor
        var columns = Set<Int>()
        for y in mark.y..<mark.maxY {
            for x in mark.x..<mark.maxX {
                let p = (frame.base + y * frame.stride + x * 4).assumingMemoryBound(to: UInt8.self)
                if abs(Int(p[2]) - Int(expected.red * 255)) < 8, abs(Int(p[1]) - Int(expected.green * 255)) < 8,
                    abs(Int(p[0]) - Int(expected.blue * 255)) < 8
                {
                    columns.insert(x / Daemon.terminalScale)
                }
            }
        }
        #expect(!columns.isEmpty, "the mark is drawn in the state colour")
        #expect((columns.max() ?? 80) < 80, "cells \(columns.sorted())")
    }
}
