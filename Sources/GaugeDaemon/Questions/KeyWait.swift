import GaugeProtocol
import GaugeRender
import GaugeSystem

/// `wait-key`'s clients (a failure screen's way out), answered together: `enter` or `r` at
/// the next such key on the keyboards, or, when the theme's `failure_timeout` is set and
/// that long has passed since the first of them began to wait with no key, as its
/// `failure_timeout_action` says (`restart` as R, `console` as Enter), for a machine with
/// nobody at a keyboard. The timer runs only while someone waits. A key pressed while the
/// failure screen is up and nobody waits yet (the screen says "Press Enter" while its script
/// still reads the journal) is kept for the next client (`takeKept`); one pressed before the
/// screen went up never answers.
final class KeyWait {
    private(set) var clients: [ClientConnection] = []
    /// The last Enter or R pressed on the failure screen before anyone waited.
    private var kept: String?
    private var timer: FrameTimer?
    /// The timeout armed for the clients waiting now.
    private var armed: (timeout: Double, action: FailureTimeoutAction)?
    private let loop: EventLoop
    private let log: Log
    /// Called after every answer and removal: the keyboards are read only while someone waits.
    private var changed: () -> Void

    init(loop: EventLoop, log: Log, changed: @escaping () -> Void) {
        self.loop = loop
        self.log = log
        self.changed = changed
    }

    var isEmpty: Bool { clients.isEmpty }

    /// `client` waits; the first arms the theme's timeout, if any.
    func add(_ client: ClientConnection, timeout: Double, action: FailureTimeoutAction) {
        if clients.isEmpty, timeout > 0 { arm(timeout, action) }
        clients.append(client)
        changed()
    }

    /// A client gone before its answer.
    func remove(_ client: ClientConnection) {
        guard clients.contains(where: { $0 === client }) else { return }
        clients.removeAll { $0 === client }
        if clients.isEmpty { disarm() }
        changed()
    }

    /// Enter or R pressed: every client gets it; with none, the key is kept when
    /// `onFailureScreen`.
    func keyPressed(r: Bool, onFailureScreen: Bool) {
        guard !clients.isEmpty else {
            guard onFailureScreen else { return }
            kept = r ? "r" : "enter"
            log.info("wait-key: \(r ? "R" : "Enter") pressed on the failure screen: kept for its wait-key")
            return
        }
        log.info("wait-key: \(r ? "R" : "Enter") pressed")
        answer(r ? "r" : "enter")
    }

    /// The key kept for the next client (see the type), once.
    func takeKept() -> String? {
        defer { kept = nil }
        return kept
    }

    /// The failure screen went (or a new one came): a key kept for the old one is not an
    /// answer to anything now.
    func forgetKept() { kept = nil }

    private func answer(_ text: String) {
        disarm()
        let ready = clients
        clients = []
        for client in ready { client.complete(reply: Reply.ok(text).encoded) }
        changed()
    }

    private func arm(_ timeout: Double, _ action: FailureTimeoutAction) {
        do throws(SystemError) {
            if timer == nil {
                timer = try FrameTimer(loop: loop) { [self] _ in expired() }
            }
            try timer?.start(period: timeout, first: MonotonicClock.now() + timeout)
            armed = (timeout, action)
        } catch {
            log.info("wait-key: no failure_timeout (\(error)): waiting for a key")
        }
    }

    private func disarm() {
        timer?.stop()
        armed = nil
    }

    private func expired() {
        guard let (timeout, action) = armed, !clients.isEmpty else { return disarm() }
        log.info("wait-key: no key in \(PlainDecimal.format(timeout)) s (failure_timeout): answering as \(action == .restart ? "R" : "Enter") (failure_timeout_action = \(action.rawValue))")
        answer(action == .restart ? "r" : "enter")
    }

    /// Closes the timer (the loop holds it until then).
    func close() {
        timer?.close()
        timer = nil
        changed = {}
    }
}
