import GaugeProtocol
import GaugeRender
import GaugeSystem

/// `wait-key`'s clients (a failure screen's way out), answered together: `enter` or `r` at
/// the next such key on the keyboards, or, when the theme's `failure_timeout` is set and
/// that long has passed since the first of them began to wait with no key, as its
/// `failure_timeout_action` says (`restart` as R, `console` as Enter), for a machine with
/// nobody at a keyboard. The timer runs only while someone waits.
final class KeyWait {
    private(set) var clients: [ClientConnection] = []
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

    /// Enter or R pressed: every client gets it.
    func keyPressed(r: Bool) {
        guard !clients.isEmpty else { return }
        log.info("wait-key: \(r ? "R" : "Enter") pressed")
        answer(r ? "r" : "enter")
    }

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
