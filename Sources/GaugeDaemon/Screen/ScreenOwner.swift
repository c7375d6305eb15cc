import GaugeDisplay
import GaugeSystem

/// Who has the screen and the acts that hand it over: the VT in graphics or text mode and
/// its switching signals, DRM master (or the fbdev device) held or let go, the splash
/// shown or hidden. `handover` says who should have it; each change of its owner is acted
/// on here, as are the VT switches and a display device coming or going.
final class ScreenOwner {
    /// Why Gauge gives the screen up, if it does.
    var handover = ScreenHandover()
    private let screen: ProgressScreen
    /// The DRM or fbdev display, which may come, go and change (nil for memory, terminal
    /// or none).
    let displays: DisplaySlot?
    /// The VT under a device display (with `--vt at-exit` on DRM, none until the exit).
    private(set) var console: ConsoleVT?
    /// `--vt at-exit`: the VT is left alone while a DRM card shows the frame, taken on
    /// fbdev and taken again after a getty's hangup.
    let consoleAtExit: Bool
    private let log: Log

    /// `vt` is `--vt`'s value: a tty, `none`, `at-exit`, or nil for the active VT.
    init(screen: ProgressScreen, displays: DisplaySlot?, vt: String?, log: Log) {
        self.screen = screen
        self.displays = displays
        consoleAtExit = vt == DaemonOptions.vtAtExit
        if displays == nil || vt == "none" || (consoleAtExit && displays?.device?.kind == .drm) {
            console = nil
        } else {
            console = ConsoleVT(path: consoleAtExit ? nil : vt, log: log)
        }
        self.log = log
    }

    var owner: ScreenHandover.Owner { handover.owner }
    var device: (any DeviceDisplay)? { displays?.device }
    /// Whether the VT takes part (VT switches are signalled to the daemon).
    var hasVT: Bool { console?.isAvailable == true }

    /// Changes a reason to give the screen up; whether its owner changed (then `handOver`
    /// acts on it).
    func change(_ change: (inout ScreenHandover) -> Void) -> Bool {
        let before = handover.owner
        change(&handover)
        let after = handover.owner
        guard after != before else { return false }
        log.info("screen: \(before.rawValue) → \(after.rawValue)")
        return true
    }

    /// `--vt at-exit` with the VT taken (fbdev): a getty ending on it puts it in text mode
    /// (the console draws its text over the frame) and hangs it up; the VT is taken again
    /// and `redraw` draws a whole frame.
    func watchHangup(on loop: EventLoop, redraw: @escaping () -> Void) {
        guard consoleAtExit, let console, console.isAvailable else { return }
        let fd = console.descriptor
        do throws(SystemError) {
            try loop.register(fd, events: []) { [self] _ in
                loop.unregister(fd)
                if consoleHungUp() { redraw() }
                watchHangup(on: loop, redraw: redraw)
            }
        } catch {
            log.info("cannot watch the console for a hangup: \(error)")
        }
    }

    /// Gives the screen to its owner.
    func handOver() {
        switch handover.owner {
        case .gauge:
            // Back from the text console or from a display manager: graphics mode, VT
            // switches signalled again, DRM master, and a whole frame.
            // No graphics mode while there is no device: the console stays readable.
            if device != nil { console?.takeGraphics() }
            do throws(DisplayError) {
                try displays?.acquire()
            } catch {
                log.info("cannot take the display back: \(error)")
            }
            // A device may have come while the screen was given up.
            if device != nil {
                console?.takeGraphics()
                console?.enableProcessSwitching()
            }
            screen.show()
        case .console:
            screen.hide()
            displays?.release()
            console?.releaseText()
        case .displayManager:
            // Stop drawing and let go of DRM master and VT switching; our last frame stays
            // on screen and the console in graphics mode, so neither black nor text shows
            // before the display manager's first frame.
            screen.hide()
            displays?.release(keepingFrame: true)
            console?.disableProcessSwitching()
        }
    }

    /// Before the first frame: graphics mode on the VT when Gauge shows on a device (true
    /// then), or the screen left to the console when a password request waits.
    func takeForFirstFrame() -> Bool {
        let showing = handover.owner == .gauge && device != nil
        if showing {
            console?.takeGraphics()
        } else if handover.owner != .gauge {
            screen.hide()
            displays?.release()
            log.info("a password request is waiting: the console keeps the screen")
        }
        return showing
    }

    /// Switching to another VT: let it have the screen, then acknowledge.
    func vtReleased() {
        if screen.visible { displays?.release() }
        console?.acknowledgeRelease()
    }

    /// Back on our VT: the display taken back; whether a whole frame is due.
    func vtAcquired() -> Bool {
        console?.acknowledgeAcquire()
        guard screen.visible, let displays else { return false }
        do throws(DisplayError) {
            try displays.acquire()
        } catch {
            log.info("cannot take the display back: \(error)")
        }
        screen.invalidate()
        return true
    }

    /// The display device came (`next`), went or changed: the VT follows while Gauge has
    /// the screen; with none left for good (`settled`) the console gets it. Whether Gauge
    /// has the screen (a frame is due).
    func deviceChanged(to next: (any DeviceDisplay)?, settled: Bool) -> Bool {
        guard handover.owner == .gauge else { return false }
        if next != nil {
            console?.takeGraphics()
            console?.enableProcessSwitching()
        } else if settled {
            console?.releaseText()
        }
        return true
    }

    /// The console was hung up (a getty on it ended, putting it in text mode):
    /// opened and taken again; whether a whole frame is due.
    func consoleHungUp() -> Bool {
        log.info("the console was hung up (a getty ended): taking it again")
        console?.reopen()
        guard handover.owner == .gauge, device != nil else { return false }
        console?.takeGraphics()
        screen.invalidate()
        return true
    }

    /// On exit: the display closed, its last frame kept when `retain` and Gauge has the
    /// screen; the console given back, or left in graphics mode under a kept frame.
    func close(retain: Bool) {
        if retain, console == nil, consoleAtExit, displays != nil {
            // The getty is gone by now: graphics mode before the frame is left on screen
            // (copied into the console's buffer on kernels before 6.8).
            let vt = ConsoleVT(log: log)
            vt.takeGraphics()
            console = vt
        }
        displays?.close(retain: retain && handover.owner == .gauge)
        if retain {
            // The console stays in graphics mode so the kernel does not draw over the frame.
            log.info("leaving the last frame on screen")
            console?.disableProcessSwitching()
        } else {
            console?.restore()
        }
    }
}
