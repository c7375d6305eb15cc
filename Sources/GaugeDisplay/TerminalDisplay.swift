import CGaugeLinux
import GaugeRender

/// Gauge in a terminal window: the display for trying the daemon without a spare screen.
///
/// Frames are drawn into an offscreen XRGB8888 buffer. By default its size follows the
/// terminal: every cell holds two square "half-cell" pixels (the upper half block `▀`
/// with a 24-bit foreground for the top one and a 24-bit background for the bottom one),
/// and the buffer has `scale` x `scale` real pixels for each of them (80x24 cells give
/// 640x384 pixels at the default scale of 8). A fixed `pixelSize` can be asked for
/// instead; it is then shown as large as fits, centred, with its aspect ratio kept.
/// `present` box-averages the damaged pixels into half-cells and writes only the cells
/// whose colours differ from what the terminal already shows, with an SGR code only
/// where the colour changes and a cursor move only where the cells written are not
/// consecutive (and at the start of every frame, which also sets both colours).
///
/// Output never blocks. The descriptor is written non-blocking (see `TerminalOutput`),
/// and at most one frame's text is ever queued: while the terminal has not taken the
/// last one, further frames only update the wanted cell colours, and as soon as the
/// queue drains the difference between those and the queued frame is sent in one go.
/// A terminal that cannot keep up therefore skips frames and always ends on the latest
/// one, and the queue is bounded by one full repaint (about 50 bytes a cell).
///
/// What the daemon does with it:
/// - on `SIGWINCH`, call `resize()`. It re-reads the terminal size and repaints every
///   cell. It returns true when the pixel size changed (`width`/`height` differ): the
///   scene has to be laid out again, and the next `beginFrame()` reports the whole
///   (new, black) buffer as stale. With a fixed `pixelSize` it always returns false.
/// - while `wantsWrite` is true, wait for `outputFD` to become writable (`EPOLLOUT`)
///   and call `flush()`; otherwise the rest of a frame the terminal could not take at
///   once waits for the next `present`.
/// - ignore `SIGPIPE` (a pipe whose reader is gone), and call `close()` on exit to give
///   the terminal back (normal screen, cursor shown, colours reset); `deinit` does it too.
///
/// The first write failure (terminal hung up) is thrown once from `present`, `flush` or
/// `resize`; after it output is dropped silently.
///
/// `▀` is East Asian "ambiguous" width: a terminal set to draw those characters double
/// width (some CJK setups) shows a garbled picture.
package final class TerminalDisplay: Display {
    static let defaultScale = 8
    /// The largest side of a derived pixel buffer; the scale shrinks to stay within it.
    static let maximumPixelSide = 4096
    /// Terminals larger than this are drawn in their top left corner.
    static let maximumTerminalSize = TerminalSize(columns: 1000, rows: 500)

    package var name: String { "terminal \(terminalSize)" }
    package private(set) var width: Int
    package private(set) var height: Int
    package var format: PixelFormat { .xrgb8888 }
    package var physicalSize: (width: Int, height: Int)? { nil }
    /// The terminal size in use, from `TIOCGWINSZ` unless one was given.
    package private(set) var terminalSize: TerminalSize
    /// The descriptor written to: the one passed in, or a private reopen of the same
    /// terminal. Watch it for writability while `wantsWrite` is true.
    package var outputFD: Int32 { output.fd }
    /// True while text is queued or cells wait to be sent: call `flush()` when `outputFD`
    /// is writable.
    package var wantsWrite: Bool { !closed && (!output.isIdle || (hasFrame && !dirtyCells.isEmpty)) }
    /// Bytes queued for the terminal and not yet written (at most about one full repaint).
    package var queuedByteCount: Int { output.pendingCount }

    private let output: TerminalOutput
    private let fixedPixelSize: (width: Int, height: Int)?
    private let scale: Int
    private var pixels: UnsafeMutableRawPointer
    private var stride: Int { width * 4 }
    /// Where the picture lies on the grid of half-cells (`columns` x `rows * 2`).
    private var viewport = Rect.zero
    /// Colour wanted in each half-cell, 0xRRGGBB, row-major over the half-cell grid.
    private var wanted: [UInt32] = []
    /// Colour the terminal shows (or will, once the queued text is out); `unknown` where
    /// it cannot be trusted.
    private var shown: [UInt32] = []
    /// Cells (not half-cells) in which `wanted` may differ from `shown`.
    private var dirtyCells = Rect.zero
    /// False until the first frame, and again after the buffer is replaced: the terminal
    /// is not painted from a buffer nobody has drawn.
    private var hasFrame = false
    private var staleRegion = Rect.zero
    /// Terminal state after the queued text: cursor cell, current SGR colours.
    private var cursor: (row: Int, column: Int)?
    private var foreground: UInt32?
    private var background: UInt32?
    private var closed = false

    private static let unknown = UInt32.max
    /// Alternate screen, cursor hidden, no autowrap, default colours, cleared.
    static let startSequence = Array("\u{1B}[?1049h\u{1B}[?25l\u{1B}[?7l\u{1B}[0m\u{1B}[2J".utf8)
    /// Default colours, autowrap and cursor back, normal screen. Starts with ESC, which
    /// also ends any escape sequence a dropped frame left half written.
    static let restoreSequence = Array("\u{1B}[0m\u{1B}[?7h\u{1B}[?25h\u{1B}[?1049l".utf8)
    static let clearSequence = Array("\u{1B}[0m\u{1B}[2J".utf8)
    static let upperHalfBlock = Array("\u{2580}".utf8)

    /// Takes over the terminal on `fd` (alternate screen, hidden cursor).
    /// - Parameters:
    ///   - terminalSize: the size to assume instead of asking the terminal (tests).
    ///   - pixelSize: a fixed buffer size instead of one derived from the terminal.
    ///   - scale: pixels per half-cell side when the size is derived (1...64).
    package init(
        fd: Int32 = STDOUT_FILENO, terminalSize: TerminalSize? = nil,
        pixelSize: (width: Int, height: Int)? = nil, scale: Int = defaultScale
    ) throws(DisplayError) {
        if let pixelSize {
            let sides = 1...Self.maximumPixelSide
            guard sides.contains(pixelSize.width), sides.contains(pixelSize.height) else {
                throw DisplayError("terminal: pixel size \(pixelSize.width)x\(pixelSize.height) outside 1x1...\(Self.maximumPixelSide)x\(Self.maximumPixelSide)")
            }
        }
        guard (1...64).contains(scale) else { throw DisplayError("terminal: scale \(scale) outside 1...64") }
        output = try TerminalOutput(fd: fd)
        self.terminalSize = (terminalSize ?? TerminalSize.of(fd: fd) ?? .fallback).clamped(to: Self.maximumTerminalSize)
        fixedPixelSize = pixelSize
        self.scale = scale
        (width, height) = pixelSize ?? Self.pixelSize(for: self.terminalSize, scale: scale)
        pixels = Self.allocateZeroed(byteCount: width * height * 4)
        layOut()
        output.append(Self.startSequence)
        try output.flush()
    }

    deinit {
        close()
        pixels.deallocate()
    }

    package func beginFrame() -> FrameTarget? {
        guard !closed else { return nil }
        let buffer = Framebuffer(base: pixels, width: width, height: height, stride: stride, format: .xrgb8888)
        return FrameTarget(buffer: buffer, staleRegion: staleRegion)
    }

    package func present(damage: Rect) throws(DisplayError) {
        guard !closed else { return }
        resample(damage.union(staleRegion))
        hasFrame = true
        staleRegion = .zero
        try pump()
    }

    /// Writes what the terminal takes now: queued text, then the cells that changed
    /// since. Call it when `outputFD` is writable while `wantsWrite` is true.
    package func flush() throws(DisplayError) {
        guard !closed else { return }
        try pump()
    }

    /// Re-reads the terminal size (`TIOCGWINSZ`) and repaints every cell: the call for
    /// `SIGWINCH`. Returns true when the pixel size changed; see the type's notes.
    @discardableResult
    package func resize() throws(DisplayError) -> Bool {
        try resize(to: TerminalSize.of(fd: output.fd) ?? terminalSize)
    }

    /// `resize()` with the size given rather than asked for.
    @discardableResult
    package func resize(to size: TerminalSize) throws(DisplayError) -> Bool {
        guard !closed else { return false }
        terminalSize = size.clamped(to: Self.maximumTerminalSize)
        let newSize = fixedPixelSize ?? Self.pixelSize(for: terminalSize, scale: scale)
        let changed = newSize != (width, height)
        if changed {
            pixels.deallocate()
            (width, height) = newSize
            pixels = Self.allocateZeroed(byteCount: width * height * 4)
            hasFrame = false
            staleRegion = Rect(x: 0, y: 0, width: width, height: height)
        }
        layOut()
        // Text for the old layout is of no use now; the clear starts with ESC.
        output.replacePending(with: Self.clearSequence)
        try pump()
        return changed
    }

    /// Gives the terminal back: normal screen, cursor shown, default colours. Waits at
    /// most a quarter of a second for the terminal to take that; further frames are
    /// ignored.
    package func close() {
        guard !closed else { return }
        closed = true
        output.finish(with: Self.restoreSequence, timeoutMilliseconds: 250)
    }

    // MARK: - Pixels to cells

    static func pixelSize(for terminal: TerminalSize, scale: Int) -> (width: Int, height: Int) {
        var scale = scale
        while scale > 1 && max(terminal.columns, terminal.rows * 2) * scale > maximumPixelSide {
            scale -= 1
        }
        return (terminal.columns * scale, terminal.rows * 2 * scale)
    }

    /// The largest centred rectangle of the half-cell grid with the picture's aspect ratio.
    static func fit(width: Int, height: Int, columns: Int, rows: Int) -> Rect {
        var w = columns, h = rows
        if width * rows > height * columns {
            h = min(rows, max(1, (height * columns + width / 2) / width))
        } else if width * rows < height * columns {
            w = min(columns, max(1, (width * rows + height / 2) / height))
        }
        return Rect(x: (columns - w) / 2, y: (rows - h) / 2, width: w, height: h)
    }

    /// Sizes the cell arrays for the terminal and marks everything for repainting.
    private func layOut() {
        let columns = terminalSize.columns, halfRows = terminalSize.rows * 2
        viewport = Self.fit(width: width, height: height, columns: columns, rows: halfRows)
        wanted = [UInt32](repeating: 0, count: columns * halfRows)
        shown = [UInt32](repeating: Self.unknown, count: columns * halfRows)
        resample(Rect(x: 0, y: 0, width: width, height: height))
        dirtyCells = Rect(x: 0, y: 0, width: columns, height: terminalSize.rows)
        cursor = nil
        foreground = nil
        background = nil
    }

    /// Recomputes the half-cells that `damage` touches (a margin of one either side) and
    /// marks their cells dirty.
    private func resample(_ damage: Rect) {
        let area = damage.intersection(Rect(x: 0, y: 0, width: width, height: height))
        guard !area.isEmpty else { return }
        let vw = viewport.width, vh = viewport.height
        let ix0 = max(0, area.x * vw / width - 1), ix1 = min(vw, (area.maxX * vw + width - 1) / width + 1)
        let iy0 = max(0, area.y * vh / height - 1), iy1 = min(vh, (area.maxY * vh + height - 1) / height + 1)
        let columns = terminalSize.columns
        for iy in iy0..<iy1 {
            let y0 = iy * height / vh, y1 = max(y0 + 1, (iy + 1) * height / vh)
            let rowBase = (viewport.y + iy) * columns + viewport.x
            for ix in ix0..<ix1 {
                let x0 = ix * width / vw, x1 = max(x0 + 1, (ix + 1) * width / vw)
                wanted[rowBase + ix] = average(x: x0..<x1, y: y0..<y1)
            }
        }
        let top = (viewport.y + iy0) / 2, bottom = (viewport.y + iy1 + 1) / 2
        dirtyCells = dirtyCells.union(Rect(x: viewport.x + ix0, y: top, width: ix1 - ix0, height: bottom - top))
    }

    /// The mean colour of a block of pixels, 0xRRGGBB, rounded to nearest.
    private func average(x: Range<Int>, y: Range<Int>) -> UInt32 {
        var r = 0, g = 0, b = 0
        for row in y {
            let line = pixels + row * stride
            for column in x {
                let word = UInt32(littleEndian: line.load(fromByteOffset: column * 4, as: UInt32.self))
                r += Int(word >> 16 & 0xff)
                g += Int(word >> 8 & 0xff)
                b += Int(word & 0xff)
            }
        }
        let n = x.count * y.count
        return UInt32((r + n / 2) / n) << 16 | UInt32((g + n / 2) / n) << 8 | UInt32((b + n / 2) / n)
    }

    // MARK: - Cells to text

    /// Sends queued text; once it is all out, queues and sends the cells still dirty.
    private func pump() throws(DisplayError) {
        try output.flush()
        guard output.isIdle, hasFrame, !dirtyCells.isEmpty else { return }
        output.append(encode(dirtyCells))
        dirtyCells = .zero
        try output.flush()
    }

    /// The text that makes the terminal show `wanted` in `cells`, skipping cells that
    /// already show it. Each frame starts with a cursor move and both colours, so text
    /// someone else wrote in between (a log line, an echoed key) cannot misplace it.
    private func encode(_ cells: Rect) -> [UInt8] {
        var out: [UInt8] = []
        cursor = nil
        foreground = nil
        background = nil
        let columns = terminalSize.columns
        for row in cells.y..<cells.maxY {
            for column in cells.x..<cells.maxX {
                let upper = 2 * row * columns + column, lower = upper + columns
                let top = wanted[upper], bottom = wanted[lower]
                if shown[upper] == top && shown[lower] == bottom { continue }
                if cursor.map({ $0 != (row, column) }) ?? true {
                    out.append(contentsOf: [0x1B, 0x5B])  // ESC [
                    Self.appendDecimal(row + 1, to: &out)
                    out.append(0x3B)  // ;
                    Self.appendDecimal(column + 1, to: &out)
                    out.append(0x48)  // H
                }
                let newForeground = foreground != top, newBackground = background != bottom
                if newForeground || newBackground {
                    out.append(contentsOf: [0x1B, 0x5B])
                    if newForeground { Self.appendColour(38, top, to: &out) }
                    if newForeground && newBackground { out.append(0x3B) }
                    if newBackground { Self.appendColour(48, bottom, to: &out) }
                    out.append(0x6D)  // m
                    foreground = top
                    background = bottom
                }
                out.append(contentsOf: Self.upperHalfBlock)
                shown[upper] = top
                shown[lower] = bottom
                // Without autowrap the cursor stays on the last column; go there explicitly.
                cursor = column + 1 < columns ? (row, column + 1) : nil
            }
        }
        return out
    }

    /// `38;2;R;G;B` (foreground) or `48;2;R;G;B` (background).
    private static func appendColour(_ selector: Int, _ colour: UInt32, to out: inout [UInt8]) {
        appendDecimal(selector, to: &out)
        out.append(contentsOf: [0x3B, 0x32])  // ;2
        for shift: UInt32 in [16, 8, 0] {
            out.append(0x3B)
            appendDecimal(Int(colour >> shift & 0xff), to: &out)
        }
    }

    private static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        if value >= 10 { appendDecimal(value / 10, to: &out) }
        out.append(0x30 + UInt8(value % 10))
    }

    private static func allocateZeroed(byteCount: Int) -> UnsafeMutableRawPointer {
        let memory = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 64)
        memset(memory, 0, byteCount)
        return memory
    }
}
