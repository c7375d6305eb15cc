import CGaugeLinux
import GaugeProtocol
import GaugeSystem

/// Serves Plymouth's questions and keystroke watches (`gauged --ask`): keeps the askers'
/// connections, whose answers are deferred until given, reads the keyboard while the
/// splash is on screen, and answers each asker in Plymouth's format; Escape with nothing
/// asked toggles the details view. A question whose asker disconnects is withdrawn. With
/// no VT the keys come from the input devices (`EvdevKeyboard`), opened only while the
/// splash is on screen and something is asked. Without a keyboard every question is
/// answered "no answer" at once, so the caller falls back rather than waiting forever.
///
/// A question outlives the splash (`Place`): hidden by request, it goes on on the text
/// console (its prompt written on the tty, echo off, a `*` per character of a password,
/// Enter answers, Escape cancels), and the tty gets the settings found back once nothing
/// waits; where the console is not gauged's (a display manager's, or no VT) every asker
/// is told "no answer" at once, so it falls back to its own prompt. What was typed is
/// wiped whenever the question moves. While another program asks on the console, a
/// question waits, unread, until the splash shows again.
final class QuestionDesk {
    typealias Asker = Connection

    private(set) var questions = PlymouthQuestions()
    private var askers: [UInt64: Asker] = [:]
    /// The VT's keys, read while the splash shows or something is asked.
    private var keyboard: KeyboardInput?
    /// With no VT: the input devices' keys, read only while something is asked.
    private(set) var evdev: EvdevKeyboard?
    private let log: Log
    private let loop: EventLoop
    /// Drops held keys once they are too old to answer a question (`PlymouthQuestions`).
    private var heldKeyTimer: FrameTimer?
    /// The question on screen, what was typed or the details view changed: draw it.
    var onChange: (() -> Void)?
    /// Accepts the askers' connections already waiting to be accepted.
    var acceptWaitingAskers: (() -> Void)?
    /// Where a question is asked while the screen is in its current hands.
    enum Place: Equatable {
        /// On the splash: keys are read (the VT's even with nothing asked, for Escape's
        /// details view).
        case splash
        /// The splash is hidden and the text console is gauged's: asked there.
        case console
        /// Another program asks on the console: a question waits, unread, for the splash.
        case waiting
        /// A display manager has the display: nothing can be asked; askers are told so.
        case nowhere
    }

    /// Where questions are asked; the tty is given its settings back when nothing is read.
    var place: Place = .waiting {
        didSet {
            guard place != oldValue else { return }
            // A question moving between the splash and the console starts afresh.
            questions.clearEntry()
            if place != .splash, questions.wantsKeys {
                log.info(place == .console ? "the splash is hidden: what is asked goes on, asked on the console" : "the splash is gone: what is asked waits for it")
            }
            update()
        }
    }

    /// The splash is on screen (`place` is `.splash`).
    var screenShown: Bool { place == .splash }

    /// The console shows a prompt line gauged wrote: it is ended with a new line when the
    /// question ends or moves.
    private var consoleLineOpen = false

    /// Something root asked waits for the keyboard: a question or a keystroke watch.
    var isWaiting: Bool { questions.wantsKeys }

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
        self.loop = loop
        // Holds the desk until `close()`, like the keyboard's handler.
        heldKeyTimer = try? FrameTimer(loop: loop) { [self] _ in expireHeldKeys() }
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
        guard canAsk() else {
            log.info("\(Self.describe(ask)) not asked: \(place == .splash || place == .waiting ? "no keyboard to answer it" : "the console is not gauged's"); no answer sent")
            return PlymouthReply.noAnswer
        }
        // Keys typed since the asker connected, read before its request was, are its.
        let since = screenShown ? asker.openedAt : nil
        var early: [PlymouthQuestions.Reply] = []
        switch ask {
        case .password(let prompt):
            early = questions.ask(.password, prompt: prompt, owner: asker.id, since: since, at: loop.wakeTime)
        case .question(let prompt):
            early = questions.ask(.question, prompt: prompt, owner: asker.id, since: since, at: loop.wakeTime)
        case .watchKeystroke(let keys):
            questions.watch(keys: keys, owner: asker.id)
        case .ignoreKeystroke:
            break
        }
        askers[asker.id] = asker
        log.info("\(asker.label): \(Self.describe(ask)) waits for the keyboard\(place == .waiting ? " (read once the splash is on screen)" : "")")
        if !early.isEmpty {
            // Answered by keys already typed: sent once the request's handler has
            // deferred its reply.
            loop.execute { [self] in
                let outcome = early.first?.bytes == PlymouthReply.noAnswer ? "cancelled" : "answered"
                log.info("\(asker.label): \(outcome) by keys typed as it was asked")
                deliver(&early)
                update()
            }
        }
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
        if consoleLineOpen { keyboard?.write(Array("\r\n".utf8)) }
        consoleLineOpen = false
        keyboard?.stop()
        keyboard = nil
        evdev?.stop()
        evdev = nil
        heldKeyTimer?.close()
        heldKeyTimer = nil
        onChange = nil
        acceptWaitingAskers = nil
    }

    private func typed(_ keys: UnsafeRawBufferPointer) {
        // Keys nothing takes are held with this turn's time, and a question takes those
        // since its asker's connection was accepted. The kernel may report the keyboard
        // in a turn that does not report yet an asker who connected before the keys were
        // typed: accepted now, it gets this turn's time, as its keys do.
        if questions.current == nil { acceptWaitingAskers?() }
        let asked = questions.current
        let details = questions.detailsShown
        var replies = questions.type(keys, at: loop.wakeTime)
        for reply in replies {
            let label = askers[reply.owner]?.label ?? "a client"
            log.info("\(label): \(reply.bytes == PlymouthReply.noAnswer ? "cancelled, no answer sent" : "answered")")
        }
        deliver(&replies)
        if asked != nil || !replies.isEmpty || questions.detailsShown != details { update() }
        armHeldKeyTimer()
    }

    private func armHeldKeyTimer() {
        guard let expiry = questions.heldExpiry else {
            heldKeyTimer?.stop()
            return
        }
        // Just past the expiry: the timer's clock and the loop's are the same monotonic one.
        let first = max(0.001, expiry - MonotonicClock.now() + 0.001)
        do {
            try heldKeyTimer?.start(period: PlymouthQuestions.heldKeyLife, first: first)
        } catch {
            log.info("cannot arm the held keys' timer: \(error); they are dropped with the next key")
        }
    }

    private func expireHeldKeys() {
        questions.expireHeld(at: MonotonicClock.now())
        armHeldKeyTimer()
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
            wipe(&replies[index].bytes)
        }
    }

    /// Whether a question can be asked where the screen is now: on the splash a keyboard
    /// that opens, on the console the VT's, while another program asks any keyboard (it is
    /// opened once the splash shows, and a failure then answers "no answer").
    private func canAsk() -> Bool {
        switch place {
        case .splash: keyboard?.start() == true || evdev?.start() == true
        case .console: keyboard?.start() == true
        case .waiting: keyboard != nil || evdev != nil
        case .nowhere: false
        }
    }

    /// Reads the keyboard exactly while the splash is on screen (the input devices only
    /// while something is asked, too) or a question is asked on the console; what cannot
    /// be asked where the screen is gets "no answer".
    private func update() {
        if consoleLineOpen, place != .console || questions.current == nil {
            // Ended or moved: the console's prompt line is closed while the tty is open.
            keyboard?.write(Array("\r\n".utf8))
            consoleLineOpen = false
        }
        var reading = true
        switch place {
        case .splash:
            if let keyboard, !keyboard.isReading { reading = keyboard.start() }
            if let evdev {
                if questions.wantsKeys { reading = evdev.start() } else { evdev.stop() }
            }
        case .console where questions.wantsKeys:
            evdev?.stop()
            reading = keyboard?.start() == true
        case .console, .waiting, .nowhere:
            reading = place != .nowhere
            keyboard?.stop()
            evdev?.stop()
            // Held keys wait for a question on screen.
            questions.clearHeld()
        }
        if !reading, questions.wantsKeys {
            log.info(place == .nowhere || place == .console
                ? "the console is not gauged's: what is asked gets no answer, its askers ask elsewhere"
                : "no keyboard to answer what is asked: no answer sent")
            // Sent after the turn's handlers: this may run inside an asker's own.
            var replies = questions.cancelAll()
            loop.execute { [self] in deliver(&replies) }
        }
        let placed = place
        onChange?()
        // The owner may have moved the question (a new one brings the splash back): that
        // move's own update has drawn it.
        if place == placed { drawConsole() }
    }

    /// Writes the question's prompt line on the console while it is asked there (a `*`
    /// per character of a password, a question's answer as typed).
    private func drawConsole() {
        guard place == .console, let question = questions.current, let keyboard, keyboard.isReading else { return }
        let prompt = question.prompt.isEmpty ? (question.kind == .password ? "Password:" : "Answer:") : question.prompt
        var line = Array((consoleLineOpen ? "\r\u{1B}[K" : "\r\n").utf8) + Array(CompatText.clean(prompt).utf8) + [0x20]
        if question.kind == .password {
            line += [UInt8](repeating: UInt8(ascii: "*"), count: min(questions.typedCount, PlymouthQuestions.maxEntryBytes))
        } else {
            line += Array(questions.echoedText.map { CompatText.clean($0) }?.utf8 ?? "".utf8)
        }
        keyboard.write(line)
        consoleLineOpen = true
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
