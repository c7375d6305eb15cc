import GaugeSystem

/// A console keymap as the kernel holds one: for each combination of modifiers (a bit
/// each: Shift, AltGr, Control, Alt, ShiftL, ShiftR, CtrlL, CtrlR) that the map defines, the
/// action of each of 128 key codes, as the 16-bit values `KDSKBENT` takes (a kernel keysym
/// `type << 8 | value`, or a Unicode character `U+XXXX ^ 0xF000`).
///
/// Read from the binary format `loadkeys -b` writes and busybox's `loadkmap` reads ("bkeymap",
/// then one flag byte per table, then 128 little-endian entries per table present), so any
/// keymap the console tools know can be carried into an initramfs without them; the
/// initramfs hooks write the machine's console keymap that way (docs/protocol.md).
struct ConsoleKeymap: Equatable {
    static let keyCount = 128
    static let tableCount = 256
    /// Where the initramfs hooks put the machine's keymap, and where gauged looks by default.
    static let defaultPath = "/etc/gauge/keymap.bmap"
    private static let magic = Array("bkeymap".utf8)

    /// Indexed by the modifier bits; nil where the map defines no table (no key acts then).
    private(set) var tables: [[UInt16]?]

    /// The action of `code` with the modifiers `table`; nil where the map has none.
    func action(table: Int, code: UInt16) -> UInt16? {
        guard table < tables.count, Int(code) < Self.keyCount, let keys = tables[table] else { return nil }
        return keys[Int(code)]
    }

    struct Invalid: Error, Equatable, CustomStringConvertible {
        let description: String
    }

    /// Decodes the binary format; what is wrong is said in `Invalid`.
    init(binary bytes: [UInt8]) throws(Invalid) {
        guard bytes.count >= Self.magic.count + Self.tableCount, Array(bytes.prefix(Self.magic.count)) == Self.magic else {
            throw Invalid(description: "not a binary keymap (it starts with \"bkeymap\" and a table of 256 flags; `loadkeys -b` writes one)")
        }
        let flags = bytes[Self.magic.count..<(Self.magic.count + Self.tableCount)]
        let present = flags.filter { $0 != 0 }.count
        let expected = Self.magic.count + Self.tableCount + present * Self.keyCount * 2
        guard bytes.count == expected else {
            throw Invalid(description: "a binary keymap with \(present) tables is \(expected) bytes, not \(bytes.count)")
        }
        var tables = [[UInt16]?](repeating: nil, count: Self.tableCount)
        var offset = Self.magic.count + Self.tableCount
        for (index, flag) in flags.enumerated() where flag != 0 {
            tables[index] = (0..<Self.keyCount).map { key in
                UInt16(bytes[offset + key * 2]) | UInt16(bytes[offset + key * 2 + 1]) << 8
            }
            offset += Self.keyCount * 2
        }
        guard tables[0] != nil else { throw Invalid(description: "a binary keymap without its plain table (no modifier)") }
        self.tables = tables
    }

    /// Reads the map at `path` (at most 128 KiB: 256 full tables and the header).
    init(path: String) throws(Invalid) {
        let bytes: [UInt8]
        do throws(RegularFile.Error) {
            bytes = try RegularFile.read(path, maxBytes: 7 + Self.tableCount * (1 + Self.keyCount * 2))
        } catch {
            throw Invalid(description: error.description)
        }
        do throws(Invalid) {
            try self.init(binary: bytes)
        } catch {
            throw Invalid(description: "\(path): \(error.description)")
        }
    }

    private init(tables: [[UInt16]?]) {
        self.tables = tables
    }

    /// The US layout, as the kernel's default map has it for the keys that type text: letters
    /// (Caps Lock applies), digits and punctuation with Shift, Control with letters, Space,
    /// Tab, Enter, Backspace (DEL, as the console sends it), Escape and the keypad.
    static let us: ConsoleKeymap = {
        var plain = [UInt16](repeating: Keysym.hole, count: keyCount)
        var shifted = plain
        var control = plain
        func row(_ first: Int, _ lower: String, _ upper: String) {
            for (offset, (l, u)) in zip(lower.utf8, upper.utf8).enumerated() {
                let isLetter = l >= UInt8(ascii: "a") && l <= UInt8(ascii: "z")
                let type: UInt16 = isLetter ? Keysym.letter : Keysym.latin
                plain[first + offset] = type << 8 | UInt16(l)
                shifted[first + offset] = type << 8 | UInt16(u)
                if isLetter { control[first + offset] = UInt16(l & 0x1F) }
            }
        }
        row(2, "1234567890-=", "!@#$%^&*()_+")
        row(16, "qwertyuiop[]", "QWERTYUIOP{}")
        row(30, "asdfghjkl;'`", "ASDFGHJKL:\"~")
        row(43, "\\zxcvbnm,./", "|ZXCVBNM<>?")
        let same: [(Int, UInt16)] = [
            (1, 0x1B), (14, 0x7F), (15, 0x09), (57, 0x20),
            (28, Keysym.enter), (96, Keysym.pad << 8 | 14), (58, Keysym.capsLock),
            (42, Keysym.shift << 8 | 0), (54, Keysym.shift << 8 | 0),
            (29, Keysym.shift << 8 | 2), (97, Keysym.shift << 8 | 2),
            (55, Keysym.pad << 8 | 12), (98, Keysym.pad << 8 | 13),
        ]
        // The keypad's 71-83: 7 8 9 - 4 5 6 + 1 2 3 0 .
        let keypad: [UInt16] = [7, 8, 9, 11, 4, 5, 6, 10, 1, 2, 3, 0, 16]
        var all = same
        for (offset, value) in keypad.enumerated() { all.append((71 + offset, Keysym.pad << 8 | value)) }
        for (code, action) in all {
            plain[code] = action
            shifted[code] = action
            if action >> 8 != Keysym.latin || action == 0x1B { control[code] = action }
        }
        var tables = [[UInt16]?](repeating: nil, count: tableCount)
        tables[0] = plain
        tables[1] = shifted
        tables[4] = control
        tables[5] = control
        return ConsoleKeymap(tables: tables)
    }()
}

/// The kernel's keysym types and the few values the decoder acts on (linux/keyboard.h).
enum Keysym {
    static let latin: UInt16 = 0, function: UInt16 = 1, special: UInt16 = 2, pad: UInt16 = 3
    static let dead: UInt16 = 4, shift: UInt16 = 7, lock: UInt16 = 10, letter: UInt16 = 11
    static let stickyLock: UInt16 = 12, dead2: UInt16 = 13
    static let hole: UInt16 = special << 8 | 0
    static let enter: UInt16 = special << 8 | 1
    static let capsLock: UInt16 = special << 8 | 7
    static let capsOn: UInt16 = special << 8 | 0x0C
    /// KG_CAPSSHIFT: Shift that also turns Caps Lock off.
    static let capsShift: UInt16 = 8
}
