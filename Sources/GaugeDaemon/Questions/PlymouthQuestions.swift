import CGaugeLinux
import GaugeSystem
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
/// Keys typed while nothing takes them (no question, no watch that wants them) are held
/// for `heldKeyLife`, with the loop turn they came in: a question asked meanwhile takes
/// those that came since its asker connected, as if typed after it. Its request may be
/// in the loop behind them (a `plymouth ask-for-password` connects and asks at once; the
/// person types when they see the prompt, but a fast typist or a busy daemon can beat
/// the request to the loop). Keys typed before the asker connected are no answer.
/// Escape with nothing asked drops what is held.
///
/// What is typed lives in buffers of fixed capacity (so it is never copied by a
/// reallocation), read from the keyboard's buffer without a copy per key and never
/// passed to the C library's buffered or formatting functions, and wiped (`wipe`, which
/// no optimisation drops) as soon as it is answered, cancelled, withdrawn, moved from
/// the splash to the console or back, or expired. No
/// answer is cached: Plymouth's cached-password request (`c`) is told there is none.
package struct PlymouthQuestions {
    package enum Kind: Equatable, Sendable {
        case password, question
    }

    package struct Question: Equatable, Sendable {
        /// The asking connection.
        package var owner: UInt64
        package var kind: Kind
        package var prompt: String
        /// Counts the questions asked, from 1: what tells one question from the next.
        package var serial: UInt64 = 0
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
    /// How long keys nothing took are held for a question (seconds).
    package static let heldKeyLife = 1.0

    package private(set) var questions: [Question] = []
    /// Questions asked so far (the last one's `serial`).
    private var asked: UInt64 = 0
    /// The details view (the boot's messages) is asked for: Escape toggles it while no
    /// question waits.
    package private(set) var detailsShown = false
    private var watches: [Watch] = []
    private var entry: [UInt8]
    /// Keys nothing took, and when each came (the loop turn's time), oldest first.
    private var held: [UInt8]
    private var heldTimes: [Double] = []

    package init() {
        entry = []
        entry.reserveCapacity(Self.maxEntryBytes)
        held = []
        held.reserveCapacity(Self.maxEntryBytes)
        heldTimes.reserveCapacity(Self.maxEntryBytes)
    }

    /// Bytes held for a question not asked yet.
    package var heldCount: Int { held.count }

    /// When the oldest held key expires; nil with none held.
    package var heldExpiry: Double? { heldTimes.first.map { $0 + Self.heldKeyLife } }

    /// The question on screen.
    package var current: Question? { questions.first }

    /// Keys are wanted: a question is asked or a keystroke watched.
    package var wantsKeys: Bool { !questions.isEmpty || !watches.isEmpty }

    var watchCount: Int { watches.count }

    /// Characters typed so far (a multi-byte character counts once): the bullets shown
    /// for a password.
    package var typedCount: Int { entry.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) } }

    /// The answer as typed, for a question (echoed); nil for a password.
    package var echoedText: String? {
        guard current?.kind == .question else { return nil }
        return String(decoding: entry, as: UTF8.self)
    }

    /// Queues a question. When it is the one on screen, the keys held since `since` (its
    /// asker's connection; nil: none) are typed into it as of `now`: the answers they
    /// complete (an Enter among them answers it) are returned.
    @discardableResult
    package mutating func ask(_ kind: Kind, prompt: String, owner: UInt64, since: Double? = nil, at now: Double = 0) -> [Reply] {
        asked += 1
        questions.append(Question(owner: owner, kind: kind, prompt: prompt, serial: asked))
        expireHeld(at: now)
        guard questions.count == 1, let since, let start = heldTimes.firstIndex(where: { $0 >= since }) else { return [] }
        var claimed: [UInt8] = []
        claimed.reserveCapacity(Self.maxEntryBytes)
        claimed += held[start...]
        clearHeld()
        let replies = claimed.withUnsafeBytes { type($0, at: now) }
        wipe(&claimed)
        return replies
    }

    /// Drops (and zeroes) the held keys that came before `now - heldKeyLife`.
    package mutating func expireHeld(at now: Double) {
        let stale = heldTimes.prefix { $0 < now - Self.heldKeyLife }.count
        guard stale > 0 else { return }
        let kept = held.count - stale
        held.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            memmove(base, base + stale, kept)
            CGL_wipe(base + kept, stale)
        }
        held.removeLast(stale)
        heldTimes.removeFirst(stale)
    }

    /// Zeroes and drops every held key.
    mutating func clearHeld() {
        wipe(&held)
        held.removeAll(keepingCapacity: true)
        heldTimes.removeAll(keepingCapacity: true)
    }

    private mutating func hold(_ character: UnsafeRawBufferPointer, at time: Double) {
        expireHeld(at: time)
        guard held.count + character.count <= Self.maxEntryBytes else { return }
        held.append(contentsOf: character)
        heldTimes += Array(repeating: time, count: character.count)
    }

    private mutating func hold(_ byte: UInt8, at time: Double) {
        withUnsafeBytes(of: byte) { hold($0, at: time) }
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
        clearHeld()
        let replies = questions.map { Reply(owner: $0.owner, bytes: PlymouthReply.noAnswer) }
            + watches.map { Reply(owner: $0.owner, bytes: PlymouthReply.noAnswer) }
        questions = []
        watches = []
        return replies
    }

    /// Applies the bytes read from the keyboard at `time` (the loop turn's); returns the
    /// answers they complete. What nothing takes is held (see the type's notes).
    package mutating func type(_ bytes: UnsafeRawBufferPointer, at time: Double = 0) -> [Reply] {
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
                    clearHeld()
                }
            case 0x0D, 0x0A, 0x7F, 0x08, 0x15:
                if current == nil {
                    hold(byte, at: time)
                } else if byte == 0x0D || byte == 0x0A {
                    replies += enter()
                } else if byte == 0x15 {
                    clearEntry()
                } else {
                    deleteCharacter()
                }
            case 0x03, 0x04:
                if current != nil {
                    replies += cancel()
                } else if let reply = withUnsafeBytes(of: byte, { keystroke($0) }) {
                    replies.append(reply)
                } else {
                    hold(byte, at: time)
                }
            default:
                let length = byte < 0x80 ? 1 : byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
                let end = min(bytes.count, index - 1 + length)
                // A view of the read buffer: the typed key is copied nowhere but `entry`.
                let character = UnsafeRawBufferPointer(rebasing: bytes[(index - 1)..<end])
                index = end
                if current != nil {
                    if byte >= 0x20, entry.count + character.count <= Self.maxEntryBytes { entry.append(contentsOf: character) }
                } else if let reply = keystroke(character) {
                    replies.append(reply)
                } else {
                    hold(character, at: time)
                }
            }
        }
        return replies
    }

    /// Zeroes what was typed, keeping the buffer (and so never freeing a copy).
    mutating func clearEntry() {
        wipe(&entry)
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

    private mutating func keystroke(_ character: UnsafeRawBufferPointer) -> Reply? {
        guard let index = watches.firstIndex(where: { watch in
            guard let keys = watch.keys else { return true }
            return Self.contains(keys, character)
        }) else { return nil }
        return Reply(owner: watches.remove(at: index).owner, bytes: PlymouthReply.answer(Array(character)))
    }

    private static func contains(_ keys: [UInt8], _ character: UnsafeRawBufferPointer) -> Bool {
        guard !character.isEmpty, keys.count >= character.count else { return false }
        for start in 0...(keys.count - character.count) where keys[start..<(start + character.count)].elementsEqual(character) {
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
    func isWaiting(owner: UInt64) -> Bool {
        questions.contains { $0.owner == owner } || watches.contains { $0.owner == owner }
    }
}
