import CGaugeLinux
import GaugeProtocol

/// Serves Plymouth's questions and keystroke watches (`gauged --ask`): keeps the askers'
/// connections, whose answers are deferred until given, reads the keyboard while the
/// splash shows or something waits for a key, and answers each asker in Plymouth's
/// format; Escape with nothing asked toggles the details view. A question
/// whose asker disconnects is withdrawn. With no VT the keys come from the input
/// devices (`EvdevKeyboard`), opened only while something is asked. Without a keyboard every question is
/// answered "no answer" at once, so the caller falls back rather than waiting forever.
final class QuestionDesk {
    typealias Asker = Connection<PlymouthFrameDecoder>

    private(set) var questions = PlymouthQuestions()
    private var askers: [UInt64: Asker] = [:]
    /// The VT's keys, read while the splash shows or something is asked.
    private var keyboard: KeyboardInput?
    /// With no VT: the input devices' keys, read only while something is asked.
    private(set) var evdev: EvdevKeyboard?
    private let log: Log
    /// The question on screen, what was typed or the details view changed: draw it.
    var onChange: (() -> Void)?
    /// Keys are read while the splash is on screen even with nothing asked, for Escape's
    /// details view; the tty is given its settings back when the splash leaves.
    var readsWhileShown = false {
        didSet {
            guard readsWhileShown != oldValue else { return }
            if readsWhileShown { keyboard?.start() }
            update()
        }
    }

    /// Whether Caps Lock is on, on the keyboard questions are answered from.
    var capsLock: Bool { keyboard?.capsLock ?? evdev?.capsLock ?? false }

    /// Makes sure the VT is still read as it should be (a step of the boot: systemd may
    /// have reset the console's settings since).
    func checkKeyboard() {
        keyboard?.reassertMode()
    }

    /// `ttyPath`: where keys are read from; nil: no VT, so the keyboards under
    /// `inputDirectory` (evdev), in the layout of `keymapPath` (`EvdevKeyboard.layout`); nil
    /// as well: no keyboard.
    init(ttyPath: String?, inputDirectory: String? = "/dev/input", keymapPath: String? = nil, loop: EventLoop, log: Log) {
        self.log = log
        if let ttyPath {
            keyboard = KeyboardInput(path: ttyPath, loop: loop, log: log) { [self] keys in typed(keys) }
        } else if let inputDirectory {
            evdev = EvdevKeyboard(
                directory: inputDirectory, layout: EvdevKeyboard.layout(path: keymapPath, log: log), loop: loop, log: log
            ) { [self] keys in typed(keys) }
        }
    }

    /// Takes a request from `asker`; the bytes to send at once, or nil when the answer
    /// comes later (through the connection's deferred reply).
    func ask(_ ask: PlymouthAsk, from asker: Asker) -> [UInt8]? {
        switch ask {
        case .ignoreKeystroke(let keys):
            var replies = questions.ignore(keys: keys)
            let ended = !replies.isEmpty
            deliver(&replies)
            if ended { log.info("keystroke watch ended by ignore-keystroke") }
            update()
            return []
        case .password, .question, .watchKeystroke:
            break
        }
        guard keyboard?.start() == true || evdev?.start() == true else {
            log.info("\(Self.describe(ask)) not asked: no keyboard to answer it; no answer sent")
            return PlymouthReply.noAnswer
        }
        switch ask {
        case .password(let prompt):
            questions.ask(.password, prompt: prompt, owner: asker.id)
        case .question(let prompt):
            questions.ask(.question, prompt: prompt, owner: asker.id)
        case .watchKeystroke(let keys):
            questions.watch(keys: keys, owner: asker.id)
        case .ignoreKeystroke:
            break
        }
        askers[asker.id] = asker
        log.info("\(asker.label): \(Self.describe(ask)) waits for the keyboard")
        update()
        return nil
    }

    /// The connection is gone: what it asked is withdrawn.
    func disconnected(_ asker: Asker) {
        guard askers.removeValue(forKey: asker.id) != nil else { return }
        questions.withdraw(owner: asker.id)
        log.info("\(asker.label): gone; its question is withdrawn")
        update()
    }

    /// Every waiting asker gets "no answer" (the daemon is leaving). The keyboard and
    /// `onChange` hold this desk and its owner: they are let go here.
    func close() {
        var replies = questions.cancelAll()
        deliver(&replies)
        askers = [:]
        keyboard?.stop()
        keyboard = nil
        evdev?.stop()
        evdev = nil
        onChange = nil
    }

    private func typed(_ keys: UnsafeRawBufferPointer) {
        let asked = questions.current
        let details = questions.detailsShown
        var replies = questions.type(keys)
        for reply in replies {
            let label = askers[reply.owner]?.label ?? "a client"
            log.info("\(label): \(reply.bytes == PlymouthReply.noAnswer ? "cancelled, no answer sent" : "answered")")
        }
        deliver(&replies)
        if asked != nil || !replies.isEmpty || questions.detailsShown != details { update() }
    }

    /// Sends each reply to its asker, then zeroes the reply: an answer is a typed secret,
    /// and the connection keeps (and zeroes) its own copy only until it is sent.
    private func deliver(_ replies: inout [PlymouthQuestions.Reply]) {
        for index in replies.indices {
            let owner = replies[index].owner
            if let asker = askers[owner] {
                asker.complete(sending: replies[index].bytes, sensitive: true)
                if !questions.isWaiting(owner: owner) { askers[owner] = nil }
            }
            replies[index].bytes.withUnsafeMutableBytes { raw in
                if let base = raw.baseAddress { memset(base, 0, raw.count) }
            }
        }
    }

    private func update() {
        if !questions.wantsKeys {
            evdev?.stop()
            if !readsWhileShown { keyboard?.stop() }
        }
        onChange?()
    }

    private static func describe(_ ask: PlymouthAsk) -> String {
        switch ask {
        case .password(let prompt): "password request \(CompatText.quoted(prompt))"
        case .question(let prompt): "question \(CompatText.quoted(prompt))"
        case .watchKeystroke(let keys): "keystroke watch \(CompatText.quoted(keys.map { CompatText.clean($0) } ?? "(any key)"))"
        case .ignoreKeystroke: "ignore-keystroke"
        }
    }
}
