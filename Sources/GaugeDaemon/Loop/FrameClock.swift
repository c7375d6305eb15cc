import CGaugeLinux
import GaugeDisplay
import GaugeProtocol
import GaugeSystem

/// The daemon's one frame clock: its `FrameTimer` armed as the `FramePacer` says (frames
/// while something moves, none while the screen is still), the clients whose `wait` the
/// frame showing the settled picture answers, and the start-up figure of the first frame
/// on a device.
final class FrameClock {
    private var timer: FrameTimer?
    private var pacer: FramePacer
    private let log: Log
    private var waiters: [ClientConnection] = []
    private var firstDeviceFrameLogged = false

    init(fps: Int, log: Log) {
        pacer = FramePacer(fps: fps)
        self.log = log
    }

    /// Takes the timer on `loop`; each expiry calls `tick`, which draws and then reports
    /// with `presented`. Until this, `schedule` arms nothing.
    func start(on loop: EventLoop, tick: @escaping () -> Void) throws(SystemError) {
        timer = try FrameTimer(loop: loop) { _ in tick() }
    }

    /// A frame was due while the display could not take one (a page flip pending).
    var owed: Bool {
        get { pacer.owed }
        set { pacer.owed = newValue }
    }

    /// Whether the timer is armed: a change may still wait for the tick that presents it.
    var isRunning: Bool { pacer.running }

    /// Draws a frame soon if anything may have changed; the timer runs only while needed.
    func schedule() {
        guard let timing = pacer.wake() else { return }
        pacer.running = arm(timing)
    }

    /// `client`'s `wait` is answered by `answerWaiters`; the clock ticks until then.
    func addWaiter(_ client: ClientConnection) {
        waiters.append(client)
        schedule()
    }

    func forget(_ client: ClientConnection) {
        waiters.removeAll { $0 === client }
    }

    /// The settled picture is on the display: every `wait` gets `reply`.
    func answerWaiters(_ reply: Reply) {
        guard !waiters.isEmpty else { return }
        let ready = waiters
        waiters = []
        for client in ready { client.complete(reply: reply.encoded) }
    }

    /// After a presented frame: the next tick as the picture moves (`animating`, in
    /// `steps`), or while something else needs frames (`keepTicking`, a `wait`); none once
    /// nothing does.
    func framePresented(animating: Bool, keepTicking: Bool, steps: () -> (period: Double, next: Double)?) {
        let timing = pacer.afterFrame(animating: animating, keepTicking: keepTicking || !waiters.isEmpty, steps: steps)
        _ = arm(timing)
    }

    /// Logs once how long after exec the first frame reached a display device: the
    /// start-up figure a boot splash is judged by.
    func notePresented(on device: (any DeviceDisplay)?) {
        guard !firstDeviceFrameLogged, let device else { return }
        firstDeviceFrameLogged = true
        let milliseconds = (MonotonicClock.now() - CGL_start_seconds()) * 1000
        log.info("first frame on \(device.name) \(PlainDecimal.format((milliseconds * 10).rounded() / 10)) ms after exec")
    }

    func close() {
        timer?.close()
    }

    /// Arms the timer as the pacer says; false (and a log line) when it cannot be.
    private func arm(_ timing: FramePacer.Timing) -> Bool {
        do {
            switch timing {
            case .rate(let fps, let immediately): try timer?.start(fps: fps, immediately: immediately)
            case .steps(let period, let first): try timer?.start(period: period, first: first)
            case .idle: timer?.stop()
            }
            return true
        } catch {
            log.info("cannot arm the frame timer: \(error)")
            return false
        }
    }
}
