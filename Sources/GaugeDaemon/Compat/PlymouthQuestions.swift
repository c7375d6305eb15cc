import CGaugeLinux
import GaugeProtocol

/// What a Plymouth request asks of the person at the screen (when the daemon asks at
/// all; see `PlymouthSession.asks`).
package enum PlymouthAsk: Equatable, Sendable {
    /// `*`: a password, typed blind; the prompt may be empty.
    case password(prompt: String)
    /// `W`: a question whose answer is echoed as it is typed.
    case question(prompt: String)
    /// `K`: answer with the first key pressed that is one of `keys` (any key when nil).
    case watchKeystroke(keys: [UInt8]?)
    /// `L`: end the watch for exactly these `keys` (its asker gets "no answer").
    case ignoreKeystroke(keys: [UInt8]?)
}

/// The questions Plymouth clients have asked and the keystrokes they watch for, and what
/// is being typed: a pure model, fed the bytes read from the keyboard's tty.
///
/// Questions queue in the order asked; the first is on screen and takes what is typed.
/// While none is asked, keys go to the keystroke watches, the oldest matching one first,
/// as plymouthd does (a key no watch wants is dropped). Enter answers, Backspace deletes
/// a character, Ctrl-U clears the field, Escape (and Ctrl-C, Ctrl-D) cancels: the asker
/// gets "no answer". Escape while no question waits toggles the details view instead, as
/// Plymouth's Escape does. Enter, Backspace, Escape and Ctrl-U are never keystrokes.
///
/// What is typed lives in one buffer of fixed capacity (so it is never copied by a
/// reallocation), zeroed as soon as it is answered, cancelled or withdrawn. No answer
/// is cached: Plymouth's cached-password request (`c`) is told there is none.
package struct PlymouthQuestions {
    package enum Kind: Equatable, Sendable {
        case password, question
    }

    package struct Question: Equatable, Sendable {
        /// The asking connection.
        package var owner: UInt64
        package var kind: Kind
        package var prompt: String
    }

    /// The bytes owed to one asker.
    package struct Reply: Equatable, Sendable {
        package var owner: UInt64
        package var bytes: [UInt8]
    }

    struct Watch {
        var owner: UInt64
        var keys: [UInt8]?
    }

    /// The longest answer kept, in bytes; what is typed beyond it is dropped.
    package static let maxEntryBytes = 255

    package private(set) var questions: [Question] = []
    /// The details view (the boot's messages) is asked for: Escape toggles it while no
    /// question waits.
    package private(set) var detailsShown = false
    private var watches: [Watch] = []
    private var entry: [UInt8]

    package init() {
        entry = []
        entry.reserveCapacity(Self.maxEntryBytes)
    }

    /// The question on screen.
    package var current: Question? { questions.first }

    /// Keys are wanted: a question is asked or a keystroke watched.
    package var wantsKeys: Bool { !questions.isEmpty || !watches.isEmpty }

    package var watchCount: Int { watches.count }

    /// Characters typed so far (a multi-byte character counts once): the bullets shown
    /// for a password.
    package var typedCount: Int { entry.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) } }

    /// The answer as typed, for a question (echoed); nil for a password.
    package var echoedText: String? {
        guard current?.kind == .question else { return nil }
        return String(decoding: entry, as: UTF8.self)
    }

    package mutating func ask(_ kind: Kind, prompt: String, owner: UInt64) {
        questions.append(Question(owner: owner, kind: kind, prompt: prompt))
    }

    package mutating func watch(keys: [UInt8]?, owner: UInt64) {
        watches.append(Watch(owner: owner, keys: keys.flatMap { $0.isEmpty ? nil : $0 }))
    }

    /// Ends the oldest watch for exactly `keys`; its asker gets "no answer".
    package mutating func ignore(keys: [UInt8]?) -> [Reply] {
        let keys = keys.flatMap { $0.isEmpty ? nil : $0 }
        guard let index = watches.firstIndex(where: { $0.keys == keys }) else { return [] }
        return [Reply(owner: watches.remove(at: index).owner, bytes: PlymouthReply.noAnswer)]
    }

    /// The asker is gone: its questions and watches go, unanswered.
    package mutating func withdraw(owner: UInt64) {
        if current?.owner == owner { clearEntry() }
        questions.removeAll { $0.owner == owner }
        watches.removeAll { $0.owner == owner }
    }

    /// Every question and watch ends with "no answer" (the daemon is leaving).
    package mutating func cancelAll() -> [Reply] {
        clearEntry()
        let replies = questions.map { Reply(owner: $0.owner, bytes: PlymouthReply.noAnswer) }
            + watches.map { Reply(owner: $0.owner, bytes: PlymouthReply.noAnswer) }
        questions = []
        watches = []
        return replies
    }

    /// Applies the bytes read from the keyboard; returns the answers they complete.
    package mutating func type(_ bytes: UnsafeRawBufferPointer) -> [Reply] {
        var replies: [Reply] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case 0x1B:
                // A key's escape sequence (arrows, function keys) arrives in one read and is
                // ignored; a lone Escape cancels the question, or toggles the details.
                if index < bytes.count, bytes[index] == UInt8(ascii: "[") || bytes[index] == UInt8(ascii: "O") {
                    index = Self.endOfSequence(bytes, from: index)
                } else if current != nil {
                    replies += cancel()
                } else {
                    detailsShown.toggle()
                }
            case 0x0D, 0x0A:
                replies += enter()
            case 0x7F, 0x08:
                deleteCharacter()
            case 0x15:
                clearEntry()
            case 0x03, 0x04:
                if current != nil { replies += cancel() } else { replies += keystroke([byte]) }
            default:
                let length = byte < 0x80 ? 1 : byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
                let end = min(bytes.count, index - 1 + length)
                let character = Array(bytes[(index - 1)..<end])
                index = end
                if current != nil {
                    if byte >= 0x20, entry.count + character.count <= Self.maxEntryBytes { entry += character }
                } else {
                    replies += keystroke(character)
                }
            }
        }
        return replies
    }

    /// Zeroes what was typed, keeping the buffer (and so never freeing a copy).
    package mutating func clearEntry() {
        entry.withUnsafeMutableBytes { raw in
            if let base = raw.baseAddress { memset(base, 0, raw.count) }
        }
        entry.removeAll(keepingCapacity: true)
    }

    private mutating func enter() -> [Reply] {
        guard let question = current else { return [] }
        let reply = Reply(owner: question.owner, bytes: PlymouthReply.answer(entry))
        clearEntry()
        questions.removeFirst()
        return [reply]
    }

    private mutating func cancel() -> [Reply] {
        guard let question = current else { return [] }
        clearEntry()
        questions.removeFirst()
        return [Reply(owner: question.owner, bytes: PlymouthReply.noAnswer)]
    }

    private mutating func deleteCharacter() {
        while let last = entry.popLast() {
            if last & 0xC0 != 0x80 { break }
        }
    }

    private mutating func keystroke(_ character: [UInt8]) -> [Reply] {
        guard let index = watches.firstIndex(where: { watch in
            guard let keys = watch.keys else { return true }
            return Self.contains(keys, character)
        }) else { return [] }
        return [Reply(owner: watches.remove(at: index).owner, bytes: PlymouthReply.answer(character))]
    }

    private static func contains(_ keys: [UInt8], _ character: [UInt8]) -> Bool {
        guard !character.isEmpty, keys.count >= character.count else { return false }
        for start in 0...(keys.count - character.count) where Array(keys[start..<(start + character.count)]) == character {
            return true
        }
        return false
    }

    /// The index after an escape sequence whose introducer (`[` or `O`) is at `index`.
    private static func endOfSequence(_ bytes: UnsafeRawBufferPointer, from index: Int) -> Int {
        if bytes[index] == UInt8(ascii: "O") { return min(bytes.count, index + 2) }
        // The Linux console's F1-F5: `ESC [ [ A` to `ESC [ [ E`.
        if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "[") { return min(bytes.count, index + 3) }
        var next = index + 1
        while next < bytes.count {
            let byte = bytes[next]
            next += 1
            if (0x40...0x7E).contains(byte) { break }
        }
        return next
    }
}

extension PlymouthQuestions {
    /// `owner` still has a question or watch waiting.
    package func isWaiting(owner: UInt64) -> Bool {
        questions.contains { $0.owner == owner } || watches.contains { $0.owner == owner }
    }
}
