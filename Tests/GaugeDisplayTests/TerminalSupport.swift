import GaugeDisplay
import GaugeRender
import Glibc

/// A pipe whose write end stands in for the terminal; the read end never blocks.
final class TestPipe {
    let readFD: Int32
    let writeFD: Int32

    init() {
        var fds: [Int32] = [-1, -1]
        precondition(pipe(&fds) == 0, "pipe failed")
        readFD = fds[0]
        writeFD = fds[1]
        _ = fcntl(readFD, F_SETFL, fcntl(readFD, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        closeRead()
        Glibc.close(writeFD)
    }

    private var readOpen = true

    func closeRead() {
        if readOpen { Glibc.close(readFD) }
        readOpen = false
    }

    /// Everything written so far and not yet read.
    func drain() -> [UInt8] {
        readAll(readFD)
    }

    /// What was written since the last drain, as text.
    func text() -> String {
        String(decoding: drain(), as: UTF8.self)
    }
}

func readAll(_ fd: Int32) -> [UInt8] {
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        if n > 0 {
            out.append(contentsOf: chunk[0..<n])
        } else if n < 0 && errno == EINTR {
            continue
        } else {
            return out
        }
    }
}

/// The escape sequences of the tests, spelt out.
enum VT {
    static let start = "\u{1B}[?1049h\u{1B}[?25l\u{1B}[?7l\u{1B}[0m\u{1B}[2J"
    static let restore = "\u{1B}[0m\u{1B}[?7h\u{1B}[?25h\u{1B}[?1049l"
    static let clear = "\u{1B}[0m\u{1B}[2J"
    static let block = "\u{2580}"

    static func move(_ row: Int, _ column: Int) -> String { "\u{1B}[\(row);\(column)H" }
    static func fg(_ r: Int, _ g: Int, _ b: Int) -> String { "\u{1B}[38;2;\(r);\(g);\(b)m" }
    static func bg(_ r: Int, _ g: Int, _ b: Int) -> String { "\u{1B}[48;2;\(r);\(g);\(b)m" }
    static func colours(_ f: (Int, Int, Int), _ b: (Int, Int, Int)) -> String {
        "\u{1B}[38;2;\(f.0);\(f.1);\(f.2);48;2;\(b.0);\(b.1);\(b.2)m"
    }
}

/// Fills a rectangle of the display's XRGB8888 frame buffer with 0xRRGGBB.
func paint(_ display: TerminalDisplay, _ rect: Rect, _ colour: UInt32) {
    let buffer = display.beginFrame()!.buffer
    let area = rect.intersection(buffer.bounds)
    guard !area.isEmpty else { return }
    for y in area.y..<area.maxY {
        for x in area.x..<area.maxX {
            buffer.base.storeBytes(of: (colour | 0xff00_0000).littleEndian, toByteOffset: y * buffer.stride + x * 4, as: UInt32.self)
        }
    }
}

func pixel(_ display: TerminalDisplay, x: Int, y: Int) -> UInt32 {
    let buffer = display.beginFrame()!.buffer
    return UInt32(littleEndian: buffer.base.load(fromByteOffset: y * buffer.stride + x * 4, as: UInt32.self)) & 0xff_ffff
}

/// Just enough of a terminal to replay what `TerminalDisplay` writes: cursor moves,
/// 24-bit SGR colours, clears, private modes and the upper half block. Anything else is
/// recorded in `unexpected`.
struct MiniTerminal {
    let columns: Int
    let rows: Int
    /// Colour of each cell's upper and lower half; nil where the terminal's default shows.
    var top: [UInt32?]
    var bottom: [UInt32?]
    var row = 0
    var column = 0
    var foreground: UInt32?
    var background: UInt32?
    var alternateScreen = false
    var cursorVisible = true
    var autowrap = true
    var unexpected: [String] = []
    private var carry: [UInt8] = []

    init(columns: Int, rows: Int) {
        self.columns = columns
        self.rows = rows
        top = Array(repeating: nil, count: columns * rows)
        bottom = top
    }

    func cell(row: Int, column: Int) -> (top: UInt32?, bottom: UInt32?) {
        (top[row * columns + column], bottom[row * columns + column])
    }

    mutating func feed(_ bytes: [UInt8]) {
        let data = carry + bytes
        carry = []
        var i = 0
        while i < data.count {
            if data[i] == 0x1B {
                guard i + 1 < data.count else { carry = Array(data[i...]); return }
                guard data[i + 1] == 0x5B else { unexpected.append("ESC \(data[i + 1])"); i += 2; continue }
                var j = i + 2
                while j < data.count && !(0x40...0x7E).contains(data[j]) { j += 1 }
                guard j < data.count else { carry = Array(data[i...]); return }
                control(String(decoding: data[(i + 2)..<j], as: UTF8.self), final: data[j])
                i = j + 1
            } else if data[i] == 0xE2 {
                guard i + 2 < data.count else { carry = Array(data[i...]); return }
                if data[i + 1] == 0x96 && data[i + 2] == 0x80 {
                    top[row * columns + column] = foreground
                    bottom[row * columns + column] = background
                    if column < columns - 1 { column += 1 }
                } else {
                    unexpected.append("UTF-8 \(data[i...(i + 2)])")
                }
                i += 3
            } else {
                unexpected.append("byte \(data[i])")
                i += 1
            }
        }
    }

    private mutating func control(_ parameters: String, final: UInt8) {
        switch (parameters, final) {
        case ("?1049", 0x68): alternateScreen = true
        case ("?1049", 0x6C): alternateScreen = false
        case ("?25", 0x68): cursorVisible = true
        case ("?25", 0x6C): cursorVisible = false
        case ("?7", 0x68): autowrap = true
        case ("?7", 0x6C): autowrap = false
        case ("2", 0x4A):
            top = Array(repeating: nil, count: columns * rows)
            bottom = top
        case (_, 0x48):
            let numbers = parameters.split(separator: ";").map { Int($0) ?? -1 }
            guard numbers.count == 2, (1...rows).contains(numbers[0]), (1...columns).contains(numbers[1]) else {
                unexpected.append("CUP \(parameters)")
                return
            }
            row = numbers[0] - 1
            column = numbers[1] - 1
        case (_, 0x6D):
            var numbers = parameters.split(separator: ";", omittingEmptySubsequences: false).map { Int($0) ?? -1 }[...]
            while let first = numbers.popFirst() {
                switch first {
                case 0:
                    foreground = nil
                    background = nil
                case 38, 48:
                    let rest = Array(numbers.prefix(4))
                    numbers = numbers.dropFirst(4)
                    guard rest.count == 4, rest[0] == 2, rest[1...].allSatisfy({ (0...255).contains($0) }) else {
                        unexpected.append("SGR \(parameters)")
                        return
                    }
                    let colour = UInt32(rest[1]) << 16 | UInt32(rest[2]) << 8 | UInt32(rest[3])
                    if first == 38 { foreground = colour } else { background = colour }
                default:
                    unexpected.append("SGR \(parameters)")
                    return
                }
            }
        default:
            unexpected.append("CSI \(parameters) \(final)")
        }
    }
}

/// A small deterministic generator for test pictures.
struct TestRandom {
    var state: UInt64

    mutating func next() -> UInt32 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt32(truncatingIfNeeded: state >> 33)
    }
}
