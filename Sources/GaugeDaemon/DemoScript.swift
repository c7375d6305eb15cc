import GaugeProtocol
import GaugeSystem

/// The scripted sequence `gauged --demo` plays: a determinate run with messages, a phase
/// of unknown length, success, then quit.
enum DemoScript {
    package static let steps: [(at: Double, request: Request)] = {
        var steps: [(at: Double, request: Request)] = [
            (0.0, .title("Installing Gauge")),
            (0.0, .progress(0, message: "Preparing the disk")),
        ]
        let messages = [
            (10.0, "Partitioning /dev/sda"), (25.0, "Unpacking the base system"),
            (45.0, "Installing packages"), (70.0, "Configuring the bootloader"), (90.0, "Writing the initramfs"),
        ]
        var t = 0.5
        var value = 0.0
        while value < 100 {
            value = min(100, value + 3.7)
            let message = messages.last { $0.0 <= value }?.1
            steps.append((t, .progress(value, message: message)))
            t += 0.3
        }
        steps.append((t + 0.5, .mode(.indeterminate)))
        steps.append((t + 0.5, .message("Waiting for the network (unknown length)")))
        steps.append((t + 4.5, .mode(.determinate)))
        steps.append((t + 4.5, .state(.success, message: "Done. Rebooting soon.")))
        steps.append((t + 7.5, .quit(retain: false)))
        return steps
    }()
}

/// Plays `DemoScript` (`gauged --demo`): each step handed to `apply` when its time comes,
/// looked at 20 times a second until the last.
final class DemoPlayer {
    private let apply: (Request) -> Void
    private let start = MonotonicClock.now()
    private var index = 0
    private var timer: FrameTimer?

    init(loop: EventLoop, apply: @escaping (Request) -> Void) throws(SystemError) {
        self.apply = apply
        let timer = try FrameTimer(loop: loop) { [self] _ in play() }
        self.timer = timer
        try timer.start(fps: 20)
    }

    func close() {
        timer?.close()
    }

    private func play() {
        let elapsed = MonotonicClock.now() - start
        let steps = DemoScript.steps
        while index < steps.count, steps[index].at <= elapsed {
            apply(steps[index].request)
            index += 1
        }
        if index == steps.count { timer?.stop() }
    }
}
