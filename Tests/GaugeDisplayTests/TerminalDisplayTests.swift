import GaugeDisplay
import GaugeRender
import Glibc
import Testing

private let red: UInt32 = 0xff0000
private let blue: UInt32 = 0x0000ff
private let green: UInt32 = 0x00ff00
private let white: UInt32 = 0xffffff

private func full(_ display: TerminalDisplay) -> Rect {
    Rect(x: 0, y: 0, width: display.width, height: display.height)
}

/// 3 columns x 2 rows at scale 2 (6x8 pixels): the upper half red, the lower half blue.
private func redOverBlue(_ pipe: TestPipe) throws -> TerminalDisplay {
    let display = try TerminalDisplay(fd: pipe.writeFD, terminalSize: TerminalSize(columns: 3, rows: 2), scale: 2)
    paint(display, Rect(x: 0, y: 0, width: 6, height: 4), red)
    paint(display, Rect(x: 0, y: 4, width: 6, height: 4), blue)
    try display.present(damage: full(display))
    return display
}

@Suite struct TerminalDisplayTests {
    @Test func startsOnTheAlternateScreenWithTheCursorHidden() throws {
        let pipe = TestPipe()
        let display = try TerminalDisplay(fd: pipe.writeFD, terminalSize: TerminalSize(columns: 4, rows: 2))
        #expect(pipe.text() == VT.start)
        // Nothing is painted before the first frame.
        #expect(!display.wantsWrite)
    }

    @Test func firstPresentPaintsEveryCellWithTopAndBottomColours() throws {
        let pipe = TestPipe()
        let display = try TerminalDisplay(fd: pipe.writeFD, terminalSize: TerminalSize(columns: 2, rows: 1), scale: 1)
        #expect((display.width, display.height) == (2, 2))
        #expect(display.format == .xrgb8888)
        paint(display, Rect(x: 0, y: 0, width: 2, height: 1), red)
        paint(display, Rect(x: 0, y: 1, width: 2, height: 1), blue)
        try display.present(damage: full(display))
        // One cursor move, one SGR for both colours, then the two cells back to back.
        #expect(pipe.text() == VT.start + VT.move(1, 1) + VT.colours((255, 0, 0), (0, 0, 255)) + VT.block + VT.block)
        #expect(!display.wantsWrite)
        #expect(display.queuedByteCount == 0)
    }

    @Test func eachRowStartsWithACursorMoveAndColoursChangeOnlyWhenNeeded() throws {
        let pipe = TestPipe()
        let display = try redOverBlue(pipe)
        let expected = VT.start
            + VT.move(1, 1) + VT.colours((255, 0, 0), (255, 0, 0)) + VT.block + VT.block + VT.block
            + VT.move(2, 1) + VT.colours((0, 0, 255), (0, 0, 255)) + VT.block + VT.block + VT.block
        #expect(pipe.text() == expected)
        withExtendedLifetime(display) {}
    }

    @Test func anUnchangedFrameWritesNothing() throws {
        let pipe = TestPipe()
        let display = try redOverBlue(pipe)
        _ = pipe.drain()
        try display.present(damage: full(display))
        #expect(pipe.drain().isEmpty)
        try display.present(damage: .zero)
        #expect(pipe.drain().isEmpty)
        // Redrawing the same colours is no change either.
        paint(display, Rect(x: 0, y: 0, width: 6, height: 4), red)
        try display.present(damage: Rect(x: 0, y: 0, width: 6, height: 4))
        #expect(pipe.drain().isEmpty)
    }

    @Test func oneChangedCellIsTheOnlyOneWritten() throws {
        let pipe = TestPipe()
        let display = try redOverBlue(pipe)
        _ = pipe.drain()
        // The upper half of the cell in row 2, column 3 turns green; the damage is the
        // whole frame, so finding the cell is the display's work.
        paint(display, Rect(x: 4, y: 4, width: 2, height: 2), green)
        try display.present(damage: full(display))
        #expect(pipe.text() == VT.move(2, 3) + VT.colours((0, 255, 0), (0, 0, 255)) + VT.block)

        // The lower half of the first cell turns white, presented with just its damage.
        paint(display, Rect(x: 0, y: 2, width: 2, height: 2), white)
        try display.present(damage: Rect(x: 0, y: 2, width: 2, height: 2))
        #expect(pipe.text() == VT.move(1, 1) + VT.colours((255, 0, 0), (255, 255, 255)) + VT.block)

        // Within a frame, consecutive cells need no cursor move and colours are only
        // sent when they change.
        paint(display, Rect(x: 0, y: 0, width: 6, height: 2), green)
        paint(display, Rect(x: 2, y: 2, width: 4, height: 2), white)
        try display.present(damage: full(display))
        #expect(pipe.text() == VT.move(1, 1) + VT.colours((0, 255, 0), (255, 255, 255)) + VT.block + VT.block + VT.block)

        // Two cells apart on one row: a move for each; only the background changes.
        paint(display, Rect(x: 0, y: 2, width: 2, height: 2), red)
        paint(display, Rect(x: 4, y: 2, width: 2, height: 2), blue)
        try display.present(damage: full(display))
        #expect(pipe.text() == VT.move(1, 1) + VT.colours((0, 255, 0), (255, 0, 0)) + VT.block + VT.move(1, 3) + VT.bg(0, 0, 255) + VT.block)
    }

    @Test func halfCellsAreBoxAverages() throws {
        let pipe = TestPipe()
        let display = try TerminalDisplay(fd: pipe.writeFD, terminalSize: TerminalSize(columns: 1, rows: 1), scale: 2)
        #expect((display.width, display.height) == (2, 4))
        // Upper half-cell: two red pixels and two black ones; 510 / 4 rounds to 128.
        paint(display, Rect(x: 0, y: 0, width: 2, height: 1), red)
        paint(display, Rect(x: 0, y: 2, width: 2, height: 2), 0x0a141e)
        try display.present(damage: full(display))
        #expect(pipe.text() == VT.start + VT.move(1, 1) + VT.colours((128, 0, 0), (10, 20, 30)) + VT.block)
    }

    @Test func closeGivesTheTerminalBack() throws {
        let pipe = TestPipe()
        let display = try redOverBlue(pipe)
        _ = pipe.drain()
        #expect(fcntl(pipe.writeFD, F_GETFL) & O_NONBLOCK != 0)
        display.close()
        #expect(pipe.text() == VT.restore)
        // The descriptor is as it was found.
        #expect(fcntl(pipe.writeFD, F_GETFL) & O_NONBLOCK == 0)
        #expect(display.beginFrame() == nil)
        try display.present(damage: full(display))
        display.close()
        #expect(pipe.drain().isEmpty)
    }

    @Test func deinitGivesTheTerminalBackToo() throws {
        let pipe = TestPipe()
        do {
            _ = try redOverBlue(pipe)
        }
        #expect(pipe.text().hasSuffix(VT.restore))
    }

    @Test func pixelSizeFollowsTheTerminal() throws {
        let pipe = TestPipe()
        let standard = try TerminalDisplay(fd: pipe.writeFD, terminalSize: TerminalSize(columns: 80, rows: 24))
        #expect((standard.width, standard.height) == (640, 384))
        #expect(standard.physicalSize == nil)
        #expect(standard.name == "terminal 80x24")
        let coarse = try TerminalDisplay(fd: pipe.writeFD, terminalSize: TerminalSize(columns: 80, rows: 24), scale: 1)
        #expect((coarse.width, coarse.height) == (80, 48))
        // A huge terminal gets a smaller scale rather than a huge buffer.
        let huge = try TerminalDisplay(fd: pipe.writeFD, terminalSize: TerminalSize(columns: 1000, rows: 300))
        #expect((huge.width, huge.height) == (4000, 2400))
        let fixed = try TerminalDisplay(fd: pipe.writeFD, terminalSize: TerminalSize(columns: 80, rows: 24), pixelSize: (640, 360))
        #expect((fixed.width, fixed.height) == (640, 360))
        #expect(throws: DisplayError.self) { try TerminalDisplay(fd: pipe.writeFD, pixelSize: (0, 10)) }
        #expect(throws: DisplayError.self) { try TerminalDisplay(fd: pipe.writeFD, scale: 0) }
        #expect(throws: DisplayError.self) { try TerminalDisplay(fd: -1) }
    }

    @Test func aFixedPixelSizeKeepsItsAspectRatio() throws {
        let pipe = TestPipe()
        // 4x2 pixels on 4x2 cells (4x4 half-cells): the picture takes the middle two half-rows.
        let display = try TerminalDisplay(fd: pipe.writeFD, terminalSize: TerminalSize(columns: 4, rows: 2), pixelSize: (4, 2))
        paint(display, Rect(x: 0, y: 0, width: 4, height: 1), red)
        paint(display, Rect(x: 0, y: 1, width: 4, height: 1), blue)
        try display.present(damage: full(display))
        let expected = VT.start
            + VT.move(1, 1) + VT.colours((0, 0, 0), (255, 0, 0)) + String(repeating: VT.block, count: 4)
            + VT.move(2, 1) + VT.colours((0, 0, 255), (0, 0, 0)) + String(repeating: VT.block, count: 4)
        #expect(pipe.text() == expected)
    }

    @Test func resizeToANewPixelSizeAsksForAWholeNewFrame() throws {
        let pipe = TestPipe()
        let display = try TerminalDisplay(fd: pipe.writeFD, terminalSize: TerminalSize(columns: 2, rows: 1), scale: 1)
        paint(display, full(display), red)
        try display.present(damage: full(display))
        _ = pipe.drain()

        #expect(try display.resize(to: TerminalSize(columns: 3, rows: 1)))
        #expect((display.width, display.height) == (3, 2))
        #expect(display.terminalSize == TerminalSize(columns: 3, rows: 1))
        // The screen is cleared at once; nothing is painted from the new, undrawn buffer.
        #expect(pipe.text() == VT.clear)
        let target = try #require(display.beginFrame())
        #expect(target.staleRegion == Rect(x: 0, y: 0, width: 3, height: 2))
        #expect(target.buffer.width == 3 && target.buffer.stride == 12)
        #expect(pixel(display, x: 2, y: 1) == 0)

        paint(display, full(display), blue)
        try display.present(damage: full(display))
        #expect(pipe.text() == VT.move(1, 1) + VT.colours((0, 0, 255), (0, 0, 255)) + VT.block + VT.block + VT.block)
        #expect(display.beginFrame()?.staleRegion.isEmpty == true)
    }

    @Test func resizeWithTheSamePixelSizeRepaintsAtOnce() throws {
        let pipe = TestPipe()
        let display = try TerminalDisplay(fd: pipe.writeFD, terminalSize: TerminalSize(columns: 2, rows: 1), pixelSize: (2, 2))
        paint(display, Rect(x: 0, y: 0, width: 2, height: 1), red)
        paint(display, Rect(x: 0, y: 1, width: 2, height: 1), blue)
        try display.present(damage: full(display))
        _ = pipe.drain()

        // SIGWINCH without a change (or after something scribbled on the terminal): all again.
        #expect(try display.resize(to: TerminalSize(columns: 2, rows: 1)) == false)
        #expect(pipe.text() == VT.clear + VT.move(1, 1) + VT.colours((255, 0, 0), (0, 0, 255)) + VT.block + VT.block)

        // Wider terminal, same picture: centred, black either side.
        #expect(try display.resize(to: TerminalSize(columns: 4, rows: 1)) == false)
        #expect((display.width, display.height) == (2, 2))
        #expect(display.beginFrame()?.staleRegion.isEmpty == true)
        var screen = MiniTerminal(columns: 4, rows: 1)
        screen.feed(pipe.drain())
        #expect(screen.unexpected.isEmpty)
        #expect(screen.cell(row: 0, column: 0) == (0, 0))
        #expect(screen.cell(row: 0, column: 1) == (red, blue))
        #expect(screen.cell(row: 0, column: 2) == (red, blue))
        #expect(screen.cell(row: 0, column: 3) == (0, 0))
    }

    @Test func aSlowTerminalNeverBlocksAndEndsOnTheLatestFrame() throws {
        let pipe = TestPipe()
        let size = TerminalSize(columns: 120, rows: 50)
        // One pixel per half-cell, every one a different colour: a full repaint is far
        // more than the pipe holds.
        let display = try TerminalDisplay(fd: pipe.writeFD, terminalSize: size, scale: 1)
        var random = TestRandom(state: 7)
        var screen = MiniTerminal(columns: size.columns, rows: size.rows)
        screen.feed(pipe.drain())
        let bound = size.columns * size.rows * 52 + 64
        for frame in 0..<6 {
            for y in 0..<display.height {
                for x in 0..<display.width where frame == 0 || random.next() % 4 == 0 {
                    paint(display, Rect(x: x, y: y, width: 1, height: 1), random.next() & 0xff_ffff)
                }
            }
            try display.present(damage: full(display))
            #expect(display.queuedByteCount > 0)
            #expect(display.queuedByteCount <= bound)
            #expect(display.wantsWrite)
        }
        // The terminal catches up: read, and write more whenever it has room.
        var rounds = 0
        while display.wantsWrite && rounds < 1000 {
            screen.feed(pipe.drain())
            try display.flush()
            rounds += 1
        }
        #expect(rounds > 1)
        screen.feed(pipe.drain())
        #expect(!display.wantsWrite)
        #expect(screen.unexpected.isEmpty)
        #expect(screen.alternateScreen && !screen.cursorVisible)
        var wrong = 0
        for row in 0..<size.rows {
            for column in 0..<size.columns {
                let cell = screen.cell(row: row, column: column)
                if cell.top != pixel(display, x: column, y: 2 * row) || cell.bottom != pixel(display, x: column, y: 2 * row + 1) {
                    wrong += 1
                }
            }
        }
        #expect(wrong == 0)
    }

    @Test func aVanishedReaderIsReportedOnce() throws {
        signal(SIGPIPE, SIG_IGN)
        let pipe = TestPipe()
        let display = try TerminalDisplay(fd: pipe.writeFD, terminalSize: TerminalSize(columns: 2, rows: 1))
        pipe.closeRead()
        paint(display, full(display), red)
        #expect(throws: DisplayError.self) { try display.present(damage: full(display)) }
        paint(display, full(display), blue)
        try display.present(damage: full(display))
        #expect(!display.wantsWrite || display.queuedByteCount == 0)
        display.close()
    }

    @Test func aRealTerminalGivesItsSizeAndItsChanges() throws {
        let pty = try #require(TestPTY(columns: 30, rows: 10))
        let display = try TerminalDisplay(fd: pty.slave)
        #expect(display.terminalSize == TerminalSize(columns: 30, rows: 10))
        #expect((display.width, display.height) == (240, 160))
        // Written through a private reopen, so the shared descriptor keeps blocking.
        #expect(display.outputFD != pty.slave)
        #expect(fcntl(pty.slave, F_GETFL) & O_NONBLOCK == 0)
        #expect(fcntl(display.outputFD, F_GETFL) & O_NONBLOCK != 0)
        #expect(String(decoding: pty.drain(), as: UTF8.self) == VT.start)

        pty.setSize(columns: 40, rows: 12)
        #expect(try display.resize())
        #expect(display.terminalSize == TerminalSize(columns: 40, rows: 12))
        #expect((display.width, display.height) == (320, 192))
        #expect(try display.resize() == false)

        paint(display, full(display), green)
        try display.present(damage: full(display))
        var screen = MiniTerminal(columns: 40, rows: 12)
        screen.feed(pty.drain())
        #expect(screen.unexpected.isEmpty)
        #expect(screen.cell(row: 11, column: 39) == (green, green))
        display.close()
        #expect(String(decoding: pty.drain(), as: UTF8.self) == VT.restore)
    }
}

/// A pseudo-terminal pair. Glibc's module does not export the pty calls, so they are
/// looked up at run time.
final class TestPTY {
    let master: Int32
    let slave: Int32

    init?(columns: Int, rows: Int) {
        typealias Unlock = @convention(c) (Int32) -> Int32
        typealias Name = @convention(c) (Int32, UnsafeMutablePointer<CChar>?, Int) -> Int32
        guard let handle = dlopen(nil, RTLD_NOW),
              let unlockSymbol = dlsym(handle, "unlockpt"),
              let nameSymbol = dlsym(handle, "ptsname_r") else { return nil }
        let unlock = unsafeBitCast(unlockSymbol, to: Unlock.self)
        let name = unsafeBitCast(nameSymbol, to: Name.self)
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard master >= 0 else { return nil }
        var path = [CChar](repeating: 0, count: 128)
        guard unlock(master) == 0, name(master, &path, path.count) == 0 else {
            Glibc.close(master)
            return nil
        }
        slave = open(String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard slave >= 0 else {
            Glibc.close(master)
            return nil
        }
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        // Output exactly as written: no newline translation.
        var modes = termios()
        tcgetattr(slave, &modes)
        cfmakeraw(&modes)
        tcsetattr(slave, TCSANOW, &modes)
        setSize(columns: columns, rows: rows)
    }

    deinit {
        Glibc.close(slave)
        Glibc.close(master)
    }

    func setSize(columns: Int, rows: Int) {
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
    }

    /// What the slave side has written so far, waiting briefly for it to come through.
    func drain() -> [UInt8] {
        var out: [UInt8] = []
        var idle = 0
        while idle < 5 {
            var p = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, 20) > 0 {
                let chunk = readAll(master)
                if chunk.isEmpty { idle += 1 } else { out += chunk; idle = 0 }
            } else {
                idle += 1
            }
        }
        return out
    }
}
