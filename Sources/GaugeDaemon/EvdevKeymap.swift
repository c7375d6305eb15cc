/// Turns the kernel's input events (`struct input_event` records read from
/// `/dev/input/event*`) into the bytes a VT would have given for the same keys, for
/// machines with no VT: a pure decoder, fed whatever a read returned (a record may be
/// split across reads).
///
/// The limit: a US layout only (letters, digits, punctuation, space, Tab, Enter,
/// Backspace, Escape, the keypad's digits and operators whatever Num Lock says), with
/// Shift, Caps Lock (letters) and Ctrl (letters give their control character); no other
/// layouts, AltGr, dead keys or compose, and keys with no character (arrows, function
/// keys) are dropped. A system that loads another keymap has a VT and is read there.
struct EvdevKeymap {
    /// `struct input_event`: a `timeval`, then type (u16), code (u16) and value (s32).
    static let recordSize = MemoryLayout<Int>.size * 2 + 8
    private static let evKey: UInt16 = 1

    private var partial: [UInt8]
    private var shift = Set<UInt16>()
    private var control = Set<UInt16>()
    private(set) var capsLock = false

    init() {
        partial = []
        partial.reserveCapacity(Self.recordSize)
    }

    /// Decodes `bytes`, appending the characters of the keys pressed (and repeated) to `out`.
    mutating func feed(_ bytes: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        var index = 0
        while index < bytes.count {
            let take = min(Self.recordSize - partial.count, bytes.count - index)
            partial.append(contentsOf: bytes[index..<(index + take)])
            index += take
            guard partial.count == Self.recordSize else { break }
            let base = Self.recordSize - 8
            let type = UInt16(partial[base]) | UInt16(partial[base + 1]) << 8
            let code = UInt16(partial[base + 2]) | UInt16(partial[base + 3]) << 8
            let value = Int32(bitPattern: UInt32(partial[base + 4]) | UInt32(partial[base + 5]) << 8
                | UInt32(partial[base + 6]) << 16 | UInt32(partial[base + 7]) << 24)
            for i in partial.indices { partial[i] = 0 }
            partial.removeAll(keepingCapacity: true)
            if type == Self.evKey { key(code, value: value, into: &out) }
        }
    }

    /// Forgets what is held and which modifiers are down (the devices were closed).
    mutating func reset() {
        for i in partial.indices { partial[i] = 0 }
        partial.removeAll(keepingCapacity: true)
        shift = []
        control = []
    }

    private mutating func key(_ code: UInt16, value: Int32, into out: inout [UInt8]) {
        switch code {
        case 42, 54:  // KEY_LEFTSHIFT, KEY_RIGHTSHIFT
            if value == 0 { shift.remove(code) } else { shift.insert(code) }
            return
        case 29, 97:  // KEY_LEFTCTRL, KEY_RIGHTCTRL
            if value == 0 { control.remove(code) } else { control.insert(code) }
            return
        case 58:  // KEY_CAPSLOCK
            if value == 1 { capsLock.toggle() }
            return
        default:
            break
        }
        // 1 is a press, 2 the key repeating; 0 a release.
        guard value == 1 || value == 2, let (plain, shifted) = Self.characters(code) else { return }
        let isLetter = plain >= UInt8(ascii: "a") && plain <= UInt8(ascii: "z")
        if !control.isEmpty {
            if isLetter { out.append(plain & 0x1F) }
            return
        }
        let upper = !shift.isEmpty != (isLetter && capsLock)
        out.append(upper ? shifted : plain)
    }

    /// The US layout: a key code's character, and with Shift.
    private static func characters(_ code: UInt16) -> (UInt8, UInt8)? {
        let c = Int(code)
        switch c {
        case 1: return (0x1B, 0x1B)  // Escape
        case 2...13: return (rowOne[c - 2], rowOneShifted[c - 2])
        case 14: return (0x7F, 0x7F)  // Backspace, as the console sends it
        case 15: return (0x09, 0x09)
        case 16...27: return (rowTwo[c - 16], rowTwoShifted[c - 16])
        case 28, 96: return (0x0D, 0x0D)  // Enter, keypad Enter
        case 30...41: return (rowThree[c - 30], rowThreeShifted[c - 30])
        case 43...53: return (rowFour[c - 43], rowFourShifted[c - 43])
        case 55: return (0x2A, 0x2A)  // keypad *
        case 57: return (0x20, 0x20)
        case 71...83: return (keypad[c - 71], keypad[c - 71])
        case 98: return (0x2F, 0x2F)  // keypad /
        default: return nil
        }
    }

    // Key codes 2-13, 16-27, 30-41 and 43-53 (KEY_1 to KEY_EQUAL, KEY_Q to KEY_RIGHTBRACE,
    // KEY_A to KEY_GRAVE, KEY_BACKSLASH to KEY_SLASH), and the keypad's 71-83.
    private static let rowOne = Array("1234567890-=".utf8)
    private static let rowOneShifted = Array("!@#$%^&*()_+".utf8)
    private static let rowTwo = Array("qwertyuiop[]".utf8)
    private static let rowTwoShifted = Array("QWERTYUIOP{}".utf8)
    private static let rowThree = Array("asdfghjkl;'`".utf8)
    private static let rowThreeShifted = Array("ASDFGHJKL:\"~".utf8)
    private static let rowFour = Array("\\zxcvbnm,./".utf8)
    private static let rowFourShifted = Array("|ZXCVBNM<>?".utf8)
    private static let keypad = Array("789-456+1230.".utf8)
}
