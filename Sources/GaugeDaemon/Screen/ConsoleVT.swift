import CGaugeLinux
import GaugeSystem

/// The virtual terminal under a real display: in graphics mode
/// (`KD_GRAPHICS`) while the daemon shows its screen so the text console does not draw
/// over it, back in text mode (`KD_TEXT`) on release and exit. With `VT_PROCESS` switching
/// the kernel asks before switching VTs away (release signal) and tells when it comes back
/// (acquire signal); the daemon drops and retakes the display and acknowledges.
///
/// Every method is safe without a VT (a container, a serial console, no permission): it
/// does nothing, and the reason is logged once when opening.
package final class ConsoleVT {
    package enum Switch: Equatable, Sendable {
        case release, acquire
    }

    package static let releaseSignal = SIGUSR1
    static let acquireSignal = SIGUSR2

    private let log: Log
    private var fd: Int32 = -1
    private var savedVTMode: vt_mode?
    private var inGraphics = false
    /// The tty opened, for messages.
    package private(set) var path: String?

    package var isAvailable: Bool { fd >= 0 }

    /// The open tty (-1 without one), to watch for its hangup.
    package var descriptor: Int32 { fd }

    /// Opens `path`, or the active VT (found through `/dev/tty0`) when nil.
    package init(path: String? = nil, log: Log) {
        self.log = log
        do throws(SystemError) {
            let ttyPath: String
            if let path { ttyPath = path } else { ttyPath = try Self.activeVTPath() }
            let fd = try Syscall.open(ttyPath, flags: O_RDWR | O_NOCTTY | O_NONBLOCK)
            var mode: Int32 = 0
            do throws(SystemError) {
                try Syscall.ioctl(fd, CGL_KDGETMODE, &mode, "KDGETMODE \(ttyPath)")
            } catch {
                Syscall.close(fd)
                throw error
            }
            self.fd = fd
            self.path = ttyPath
            log.debug("console: \(ttyPath)")
        } catch {
            log.info("no console VT (\(error)); leaving the console alone")
        }
    }

    deinit {
        restore()
    }

    /// `/dev/ttyN` of the VT on screen.
    private static func activeVTPath() throws(SystemError) -> String {
        let console = try Syscall.open("/dev/tty0", flags: O_RDWR | O_NOCTTY | O_NONBLOCK)
        defer { Syscall.close(console) }
        var state = vt_stat()
        try Syscall.ioctl(console, CGL_VT_GETSTATE, &state, "VT_GETSTATE /dev/tty0")
        return "/dev/tty\(state.v_active)"
    }

    /// Opens the same tty again after a hangup (a getty's end hangs its VT up: every
    /// ioctl on the old descriptor then fails with `EIO`), in graphics mode again if it was.
    /// VT switching is not taken again.
    package func reopen() {
        guard let path, isAvailable else { return }
        let wasGraphics = inGraphics
        Syscall.close(fd)
        fd = -1
        inGraphics = false
        savedVTMode = nil
        do throws(SystemError) {
            fd = try Syscall.open(path, flags: O_RDWR | O_NOCTTY | O_NONBLOCK)
        } catch {
            log.info("console: cannot open \(path) again: \(error)")
            return
        }
        if wasGraphics { takeGraphics() }
    }

    /// Graphics mode: the kernel stops drawing the text console.
    package func takeGraphics() {
        guard isAvailable, !inGraphics else { return }
        if setKDMode(CGL_KD_GRAPHICS) { inGraphics = true }
    }

    /// Text mode again: the console shows what it holds, with its cursor.
    package func releaseText() {
        guard isAvailable, inGraphics else { return }
        if setKDMode(CGL_KD_TEXT) {
            inGraphics = false
            let showCursor = Array("\u{1B}[?25h".utf8)
            _ = showCursor.withUnsafeBytes { try? Syscall.write(fd, $0) }
        }
    }

    /// Asks the kernel to signal VT switches (`VT_PROCESS`) instead of doing them behind
    /// the daemon's back. The signals must already be blocked and read through the
    /// `SignalSource` (add `releaseSignal` and `acquireSignal` to it first).
    package func enableProcessSwitching(
        releaseSignal: Int32 = ConsoleVT.releaseSignal, acquireSignal: Int32 = ConsoleVT.acquireSignal
    ) {
        guard isAvailable, savedVTMode == nil else { return }
        do throws(SystemError) {
            var current = vt_mode()
            try Syscall.ioctl(fd, CGL_VT_GETMODE, &current, "VT_GETMODE")
            var mode = vt_mode()
            mode.mode = CChar(CGL_VT_PROCESS)
            mode.relsig = Int16(releaseSignal)
            mode.acqsig = Int16(acquireSignal)
            try Syscall.ioctl(fd, CGL_VT_SETMODE, &mode, "VT_SETMODE VT_PROCESS")
            savedVTMode = current
        } catch {
            log.info("console: \(error)")
        }
    }

    /// Automatic VT switching again (the mode found at start), leaving the console mode
    /// as it is: for a display manager that takes over.
    func disableProcessSwitching() {
        guard isAvailable, var saved = savedVTMode else { return }
        do throws(SystemError) {
            try Syscall.ioctl(fd, CGL_VT_SETMODE, &saved, "VT_SETMODE")
            savedVTMode = nil
        } catch {
            log.info("console: \(error)")
        }
    }

    /// What a signal means for the console, nil if it is not a VT switch signal.
    package func switchRequested(by signal: Int32) -> Switch? {
        guard savedVTMode != nil else { return nil }
        if signal == Self.releaseSignal { return .release }
        if signal == Self.acquireSignal { return .acquire }
        return nil
    }

    /// Lets a requested switch away proceed (after the display was dropped).
    package func acknowledgeRelease() {
        guard isAvailable, savedVTMode != nil else { return }
        do throws(SystemError) {
            try Syscall.ioctl(fd, CGL_VT_RELDISP, value: 1, "VT_RELDISP")
        } catch {
            log.info("console: \(error)")
        }
    }

    /// Confirms that the daemon has the VT again (before retaking the display).
    package func acknowledgeAcquire() {
        guard isAvailable, savedVTMode != nil else { return }
        do throws(SystemError) {
            try Syscall.ioctl(fd, CGL_VT_RELDISP, value: UInt(CGL_VT_ACKACQ), "VT_RELDISP VT_ACKACQ")
        } catch {
            log.info("console: \(error)")
        }
    }

    /// Text mode and the switching mode found at start, then closes the tty. Called on
    /// every exit path (also by deinit); harmless twice.
    package func restore() {
        guard isAvailable else { return }
        releaseText()
        disableProcessSwitching()
        savedVTMode = nil
        Syscall.close(fd)
        fd = -1
    }

    private func setKDMode(_ mode: Int32) -> Bool {
        do throws(SystemError) {
            try Syscall.ioctl(fd, CGL_KDSETMODE, value: UInt(mode), mode == CGL_KD_GRAPHICS ? "KD_GRAPHICS" : "KD_TEXT")
            return true
        } catch {
            log.info("console: \(error)")
            return false
        }
    }
}
