/// Turns the kernel's input events (`struct input_event` records read from
/// `/dev/input/event*`) into the bytes a VT would have given for the same keys, for
/// keyboards read without a VT: a pure decoder, fed whatever a read returned (a record may be
/// split across reads).
///
/// Keys mean what a console keymap says (`ConsoleKeymap`: the machine's, which the
/// initramfs hooks carry, or the US layout), decoded as the kernel's keyboard handler does:
/// the modifiers held and locked choose the table; letters follow Caps Lock; characters
/// come out in UTF-8; the keypad types its digits and operators whatever Num Lock says;
/// the six dead keys of the kernel's default map (grave, acute, circumflex, tilde,
/// diaeresis, cedilla) compose with the Latin-1 letters that carry them, and give the
/// accent itself before Space or a letter that has no such form. Keys with no character
/// (arrows, function keys, Alt with a key, console switching) are dropped.
struct EvdevKeymap {
    /// `struct input_event`: a `timeval`, then type (u16), code (u16) and value (s32).
    static let recordSize = MemoryLayout<Int>.size * 2 + 8
    private static let evKey: UInt16 = 1
    private static let capsLockKey: UInt16 = 58

    private let map: ConsoleKeymap
    private var partial: [UInt8]
    /// How many keys hold each modifier down (two Shift keys, say).
    private var held = [UInt8](repeating: 0, count: 9)
    private var locked: UInt8 = 0
    private var sticky: UInt8 = 0
    /// The VT's Caps Lock flag (K_CAPS), which letters follow.
    private var capsFlag = false
    /// The modifier the Caps Lock key locks, in maps that make it a lock (console-setup's do).
    private var capsLockBit: UInt8?
    private var pendingAccent: UInt32?

    init(map: ConsoleKeymap = .us) {
        self.map = map
        partial = []
        partial.reserveCapacity(Self.recordSize)
    }

    /// Whether Caps Lock is on, as the keys read so far left it.
    var capsLock: Bool {
        capsFlag || capsLockBit.map { locked & (1 << $0) != 0 } ?? false
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

    /// Forgets what is held, which modifiers are down and a pending accent (the devices were
    /// closed); the locks stay, as the keyboard's lights do.
    mutating func reset() {
        for i in partial.indices { partial[i] = 0 }
        partial.removeAll(keepingCapacity: true)
        held = held.map { _ in 0 }
        sticky = 0
        pendingAccent = nil
    }

    private mutating func key(_ code: UInt16, value: Int32, into out: inout [UInt8]) {
        // 1 is a press, 2 the key repeating, 0 a release.
        guard value >= 0, value <= 2 else { return }
        let down = value != 0, repeating = value == 2
        let modifiers = Int((heldMask | sticky) ^ locked)
        guard let action = map.action(table: modifiers, code: code) ?? (down ? nil : map.action(table: 0, code: code)) else { return }
        if action & 0xF000 != 0 {
            // U+XXXX ^ 0xF000: a Unicode character.
            if down { typeCharacter(UInt32(action ^ 0xF000), into: &out) }
            return
        }
        let kind = action >> 8, argument = UInt8(action & 0xFF)
        switch kind {
        case Keysym.shift:
            let bit = argument == UInt8(Keysym.capsShift) ? 0 : argument
            guard bit < 8, !repeating else { return }
            if argument == UInt8(Keysym.capsShift), down { capsFlag = false }
            if down {
                held[Int(bit)] &+= 1
            } else if held[Int(bit)] > 0 {
                held[Int(bit)] -= 1
            }
        case Keysym.lock, Keysym.stickyLock:
            guard down, !repeating, argument < 8 else { return }
            if code == Self.capsLockKey { capsLockBit = argument }
            if kind == Keysym.lock { locked ^= 1 << argument } else { sticky ^= 1 << argument }
        case Keysym.special:
            guard down else { return }
            switch action {
            case Keysym.enter: emit(0x0D, into: &out)
            case Keysym.capsLock: if !repeating { capsFlag.toggle() }
            case Keysym.capsOn: capsFlag = true
            default: break
            }
        case Keysym.latin:
            if down { typeCharacter(UInt32(argument), into: &out) }
        case Keysym.letter:
            guard down else { return }
            var character = action
            if capsFlag, let flipped = map.action(table: modifiers ^ 1, code: code) { character = flipped }
            if character & 0xF000 != 0 {
                typeCharacter(UInt32(character ^ 0xF000), into: &out)
            } else if [Keysym.latin, Keysym.letter].contains(character >> 8) {
                typeCharacter(UInt32(character & 0xFF), into: &out)
            }
        case Keysym.pad:
            guard down, Int(argument) < Self.padCharacters.count else { return }
            emit(UInt32(Self.padCharacters[Int(argument)]), into: &out)
        case Keysym.dead:
            guard down, Int(argument) < Self.deadAccents.count else { return }
            accent(UInt32(Self.deadAccents[Int(argument)]), into: &out)
        case Keysym.dead2:
            if down { accent(UInt32(argument), into: &out) }
        default:
            break
        }
    }

    private var heldMask: UInt8 {
        var mask: UInt8 = 0
        for bit in 0..<8 where held[bit] > 0 { mask |= 1 << bit }
        return mask
    }

    /// A dead key: the next character carries its accent.
    private mutating func accent(_ accent: UInt32, into out: inout [UInt8]) {
        if let pending = pendingAccent {
            // The same dead key twice, as the kernel does: the accent itself.
            pendingAccent = nil
            emit(pending, into: &out)
            if pending == accent { return }
        }
        pendingAccent = accent
    }

    /// A character typed: composed with a pending accent where one applies.
    private mutating func typeCharacter(_ character: UInt32, into out: inout [UInt8]) {
        sticky = 0
        guard let accent = pendingAccent else {
            emit(character, into: &out)
            return
        }
        pendingAccent = nil
        if character == 0x20 {
            emit(accent, into: &out)
        } else if let composed = Self.compose(accent, character) {
            emit(composed, into: &out)
        } else {
            emit(accent, into: &out)
            emit(character, into: &out)
        }
    }

    /// `character` in UTF-8, as a VT in Unicode mode sends it.
    private func emit(_ character: UInt32, into out: inout [UInt8]) {
        guard let scalar = Unicode.Scalar(character) else { return }
        UTF8.encode(scalar) { out.append($0) }
    }

    /// The keypad's characters by KT_PAD value, as the kernel's `pad_chars`.
    private static let padCharacters = Array("0123456789+-*/\r,.?()#".utf8)
    /// The accents of KT_DEAD's values, as the kernel's `ret_diacr`.
    private static let deadAccents = Array("`'^~\",".utf8)

    /// The Latin-1 letter `base` carries with `accent` (written as the kernel's default
    /// accent table has it, or as the spacing accent's own character), if there is one.
    static func compose(_ accent: UInt32, _ base: UInt32) -> UInt32? {
        let forms: (bases: String, first: [UInt32])
        switch accent {
        case 0x60: forms = ("AEIOUaeiou", [0xC0, 0xC8, 0xCC, 0xD2, 0xD9, 0xE0, 0xE8, 0xEC, 0xF2, 0xF9])
        case 0x27, 0xB4: forms = ("AEIOUYaeiouy", [0xC1, 0xC9, 0xCD, 0xD3, 0xDA, 0xDD, 0xE1, 0xE9, 0xED, 0xF3, 0xFA, 0xFD])
        case 0x5E: forms = ("AEIOUaeiou", [0xC2, 0xCA, 0xCE, 0xD4, 0xDB, 0xE2, 0xEA, 0xEE, 0xF4, 0xFB])
        case 0x7E: forms = ("ANOano", [0xC3, 0xD1, 0xD5, 0xE3, 0xF1, 0xF5])
        case 0x22, 0xA8: forms = ("AEIOUaeiouy", [0xC4, 0xCB, 0xCF, 0xD6, 0xDC, 0xE4, 0xEB, 0xEF, 0xF6, 0xFC, 0xFF])
        case 0x2C, 0xB8: forms = ("Cc", [0xC7, 0xE7])
        default: return nil
        }
        guard let index = forms.bases.unicodeScalars.firstIndex(where: { $0.value == base }) else { return nil }
        return forms.first[forms.bases.unicodeScalars.distance(from: forms.bases.unicodeScalars.startIndex, to: index)]
    }
}
