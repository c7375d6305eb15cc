import GaugeProtocol
import GaugeRender
import GaugeSystem

/// What a person answers on the splash: Plymouth's questions asked there (`--ask`, a
/// `QuestionDesk`), and the keyboards read for Escape (the details view) and for Enter and R
/// (`wait-key`). The daemon says who has the screen (`handover`, `handoverChanged`); this
/// puts the question and the details view on the screen, and asks for the screen back
/// (`onHandover`) when a question must be seen.
final class ScreenQuestions {
    /// Plymouth's questions, asked on the screen (`--ask`); nil when they are not.
    private(set) var desk: QuestionDesk?
    /// Escape on the keyboards, on every boot (`--escape-input`): the details view and back.
    private(set) var escapeWatch: EscapeWatch?
    /// The `serial` of the question the screen was last told about (a new one shows a
    /// hidden splash). Its number only: a copy of the whole question kept here came out
    /// with its prompt's bits broken in the aarch64 build (an Optional holding a String,
    /// assigned through optional chaining), so it never equalled itself and every hide
    /// while asked brought the splash straight back.
    private(set) var shownSerial: UInt64?
    /// Root made the last `deactivate` (a display manager's), which a question does not undo.
    var deactivatedByRoot = false

    /// Who has the screen and why (the daemon's `ScreenOwner`).
    var handover: () -> ScreenHandover = { ScreenHandover() }
    /// Changes a reason to give the screen up (the daemon hands it over).
    var onHandover: ((inout ScreenHandover) -> Void) -> Void = { _ in }
    /// The question or the details view changed (true: a question came or went): a frame.
    var onChange: (_ questionCameOrWent: Bool) -> Void = { _ in }
    /// The boot's messages and steps, for the details view.
    var detailLines: () -> [String] = { [] }

    private let screen: ProgressScreen
    private let loop: EventLoop
    private let log: Log
    /// The details view as Escape on the `escapeWatch` left it (each press turns it over).
    private var detailsByEscape = false
    /// The desk reads the VT while the splash shows, Escape included.
    private var deskReadsEscape = false
    /// Clients waiting for Enter or R (`wait-key`), answered at the next press or the
    /// theme's `failure_timeout`.
    private lazy var keyWait = KeyWait(loop: loop, log: log) { [self] in updateKeyboards() }

    init(screen: ProgressScreen, loop: EventLoop, log: Log) {
        self.screen = screen
        self.loop = loop
        self.log = log
    }

    /// Asks Plymouth's questions on the screen, typed on `ttyPath` (nil: on the keyboards).
    func openDesk(ttyPath: String?, keymapPath: String?) -> QuestionDesk {
        deskReadsEscape = ttyPath != nil
        let desk = QuestionDesk(ttyPath: ttyPath, keymapPath: keymapPath, loop: loop, log: log)
        desk.onChange = { [self] in changed() }
        self.desk = desk
        return desk
    }

    /// Reads the keyboards under `directory` (`--escape-input`).
    func watchKeyboards(in directory: String) {
        escapeWatch = EscapeWatch(directory: directory, loop: loop, log: log) { [self] key in keyPressed(key) }
    }

    /// Whether a question is on the splash now.
    var isAsking: Bool { desk?.questions.current != nil }

    /// Whether a root client's question waits for an answer (the access policy's word).
    var isWaiting: Bool { desk?.isWaiting == true }

    /// The screen changed hands: the desk asks where it now may, the keyboards are read
    /// or not.
    func handoverChanged() {
        desk?.place = place
        updateKeyboards()
    }

    /// Caps Lock pressed alone sends no character: its notice follows the console's looks.
    func checkCapsLock() {
        if let desk, let entry = screen.model.entry, entry.capsLock != desk.capsLock { changed() }
    }

    /// A failure screen went up or down: a key kept from the last one is no answer now.
    func failureChanged() { keyWait.forgetKept() }

    func forget(_ client: ClientConnection) { keyWait.remove(client) }

    /// `wait-key`: answered at the next Enter or R on the keyboards, or at the theme's
    /// `failure_timeout` (`KeyWait`).
    func waitKey(for client: ClientConnection?) -> ReplyAction {
        guard escapeWatch != nil else {
            return .reply(Reply.err(ProtocolError(.state, "no keyboards are read here (--escape-input none)")).encoded)
        }
        guard let client else { return .reply(Reply.err(ProtocolError(.state, "wait-key needs a connection to answer on")).encoded) }
        if let key = keyWait.takeKept() {
            log.info("wait-key: answered with the key pressed on the failure screen before")
            return .reply(Reply.ok(key).encoded)
        }
        keyWait.add(client, timeout: screen.theme.failureTimeout, action: screen.theme.failureTimeoutAction)
        return .deferred
    }

    /// The details view, while asked for (Escape, on the VT the desk reads or on the
    /// keyboards the `escapeWatch` reads) and no question is on screen.
    func showDetails() {
        let asked = (desk?.questions.detailsShown ?? false) != detailsByEscape
        let shown = asked && desk?.questions.current == nil
        screen.setDetails(shown ? detailLines() : nil)
    }

    func close() {
        keyWait.close()
        escapeWatch?.setActive(false)
        escapeWatch = nil
    }

    /// Where Plymouth's questions are asked while the screen is in its current hands: on
    /// the splash; on the console when it was hidden by request (it is gauged's then);
    /// nowhere when root handed the display to a display manager (the askers fall back);
    /// and waiting for the splash while another program asks on the console, or a
    /// member's `deactivate`, which a question undoes, holds it.
    private var place: QuestionDesk.Place {
        let handover = handover()
        switch handover.owner {
        case .gauge: return .splash
        case .displayManager: return deactivatedByRoot ? .nowhere : .waiting
        case .console: return handover.passwordPending || handover.consoleQuestion ? .waiting : .console
        }
    }

    /// The question on screen or what is typed changed.
    private func changed() {
        let previous = shownSerial
        shownSerial = desk?.questions.current?.serial
        if let desk, let question = desk.questions.current {
            let field: ScreenModel.Entry.Field = question.kind == .password
                ? .hidden(count: desk.questions.typedCount) : .shown(desk.questions.echoedText ?? "")
            screen.setEntry(ScreenModel.Entry(prompt: question.prompt, field: field, capsLock: desk.capsLock))
            // A question must be seen: a splash hidden by request, or handed over by a
            // peer other than root, comes back for it, as plymouthd shows a splash to ask
            // on. (Root may hide it again: the question is then asked on the console; a
            // display manager root handed the display to keeps it: askers are told at once.)
            let handover = handover()
            let memberDeactivated = handover.deactivated && !deactivatedByRoot
            if handover.hiddenByRequest || memberDeactivated, question.serial != previous {
                log.info("a question is asked: the splash is shown for it")
                onHandover {
                    $0.hiddenByRequest = false
                    if memberDeactivated { $0.deactivated = false }
                }
            }
        } else {
            screen.setEntry(nil)
        }
        updateKeyboards()
        showDetails()
        onChange((previous == nil) != (shownSerial == nil))
    }

    /// Whether the desk reads the keys itself (the VT, or the input devices while one
    /// waits), Escape included.
    private var deskReadsKeys: Bool { deskReadsEscape || desk?.isWaiting == true }

    /// The keyboards are read while the splash is on screen, for Escape unless the desk
    /// reads the keys itself, and for Enter and R while a client waits for them.
    private func updateKeyboards() {
        escapeWatch?.setActive(handover().owner == .gauge && (!deskReadsKeys || !keyWait.isEmpty))
    }

    /// A key on the keyboards: Escape turns the details view over (the desk's own when it
    /// reads the keys), Enter and R answer `wait-key`.
    private func keyPressed(_ key: EscapeWatch.Key) {
        guard key != .escape else {
            if !deskReadsKeys { escapePressed() }
            return
        }
        keyWait.keyPressed(r: key == .r, onFailureScreen: screen.model.failure != nil)
    }

    private func escapePressed() {
        detailsByEscape.toggle()
        log.info(detailsByEscape ? "Escape: the boot's messages shown" : "Escape: the splash shown again")
        showDetails()
        onChange(false)
    }
}
