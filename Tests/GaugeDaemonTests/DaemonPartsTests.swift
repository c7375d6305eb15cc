@testable import GaugeDaemon
import GaugeDisplay
import GaugeRender
import GaugeSystem
import Testing
import GaugeTestSupport

/// The parts the daemon holds: when frames are due, the boot's estimate, who has the screen.
@Suite("Daemon parts")
struct DaemonPartsTests {
    // MARK: - FramePacer

    @Test("a change to a still screen is drawn at once; while the timer runs its next tick draws it")
    func pacerWakes() {
        var pacer = FramePacer(fps: 60)
        #expect(pacer.wake() == .rate(fps: 60, immediately: true))
        pacer.running = true
        #expect(pacer.wake() == nil)
    }

    @Test("stripes slower than --fps tick just after each step; faster ones at --fps")
    func pacerFollowsSteps() {
        var pacer = FramePacer(fps: 60)
        pacer.running = true
        let period = 1.0 / 35
        let stripes = pacer.afterFrame(animating: true, keepTicking: false) { (period, 10.5) }
        #expect(stripes == .steps(period: period, first: 10.5 + period / 50))
        let fast = pacer.afterFrame(animating: true, keepTicking: false) { (1.0 / 120, 10.5) }
        #expect(fast == .rate(fps: 60, immediately: false))
        let other = pacer.afterFrame(animating: true, keepTicking: false) { nil }
        #expect(other == .rate(fps: 60, immediately: false))
        #expect(pacer.running)
    }

    @Test("nothing moving and nobody waiting: no timer at all; a wait or a question keeps it")
    func pacerIdles() {
        var pacer = FramePacer(fps: 30)
        pacer.running = true
        #expect(pacer.afterFrame(animating: false, keepTicking: true) { nil } == .rate(fps: 30, immediately: false))
        #expect(pacer.running)
        var asked = false
        #expect(pacer.afterFrame(animating: false, keepTicking: false) { asked = true; return nil } == .idle)
        #expect(!pacer.running && !asked)
        #expect(pacer.wake() == .rate(fps: 30, immediately: true))
    }

    // MARK: - BootEstimator

    @Test("the boot's estimate never goes back, holds while paused, and stops for a client")
    func estimateNeverGoesBack() {
        let directory = TemporaryDirectory()
        var boot = BootEstimator(historyPath: directory.appending("history"), log: .silent)
        #expect(boot.valueToShow(at: 1) == nil)
        boot.start()
        #expect(boot.isRunning)
        var shown: [Double] = []
        for now in [1.0, 2, 4, 8] {
            if let value = boot.valueToShow(at: now) { shown.append(value) }
        }
        boot.jobsDone(0.9)
        if let value = boot.valueToShow(at: 9) { shown.append(value) }
        // Jobs added: the share falls, the bar does not.
        boot.jobsDone(0.2)
        #expect(boot.valueToShow(at: 9) == nil)
        if let value = boot.valueToShow(at: 10) { shown.append(value) }
        #expect(shown.count >= 5)
        #expect(shown == shown.sorted() && Set(shown).count == shown.count)
        #expect(shown.last! < 100)

        let before = shown.last!
        boot.setPaused(true, at: 10)
        #expect(boot.valueToShow(at: 60) == nil)
        #expect(boot.bootTime(at: 60) == 10)
        boot.setPaused(false, at: 60)
        #expect(boot.bootTime(at: 61) == 11)
        #expect((boot.valueToShow(at: 70) ?? before) >= before)

        boot.end(because: "a client reports progress")
        #expect(!boot.isRunning)
        #expect(boot.valueToShow(at: 80) == nil)
    }

    @Test("a boot's recorded steps, less its waits, are the next boot's history")
    func estimateSavesTheBoot() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("history")
        var boot = BootEstimator(historyPath: path, log: .silent)
        boot.start()
        boot.step("local-fs.target", at: 5, recorded: true)
        boot.step("untrusted.service", at: 6, recorded: false)
        boot.setPaused(true, at: 8)
        boot.setPaused(false, at: 18)
        boot.step("systemd-logind.service", at: 20, recorded: true)
        boot.saveHistory(endingAt: 30)
        let (history, problem) = BootHistory.load(path)
        #expect(problem == nil)
        #expect(history == BootHistory(duration: 20, steps: ["local-fs.target": 5, "systemd-logind.service": 10]))
    }

    // MARK: - ScreenOwner

    @Test("hide gives the device up and show takes it back; a display manager keeps the frame")
    func ownerHandsOver() throws {
        let (slot, card) = try OneCard.slot(log: .silent)
        let screen = ProgressScreen(theme: Theme(), display: slot.device) { _ in }
        let lines = HotplugFixture.LogLines()
        let owner = ScreenOwner(screen: screen, displays: slot, vt: "none", log: Log(sink: { lines.all.append($0) }))
        #expect(owner.takeForFirstFrame())
        #expect(screen.renderFrame(at: 1))

        #expect(owner.change { $0.hiddenByRequest = true })
        owner.handOver()
        #expect(owner.owner == .console && !screen.visible && !card.active)
        #expect(!owner.change { $0.passwordPending = true })

        #expect(owner.change { $0.deactivated = true })
        owner.handOver()
        #expect(owner.owner == .displayManager && !screen.visible && !card.active)

        #expect(owner.change {
            $0.deactivated = false
            $0.hiddenByRequest = false
            $0.passwordPending = false
        })
        owner.handOver()
        #expect(owner.owner == .gauge && screen.visible && card.active)
        #expect(lines.all.filter { $0.contains("screen:") } == [
            "gauged: screen: gauge → console\n", "gauged: screen: console → displayManager\n", "gauged: screen: displayManager → gauge\n",
        ])
        owner.close(retain: true)
        #expect(card.closed)
    }

    @Test("what goes wrong giving the screen back (a restore the card refused) reaches the log")
    func aFailedRestoreIsLogged() throws {
        let lines = HotplugFixture.LogLines()
        let (slot, card) = try OneCard.slot(log: Log(sink: { lines.all.append($0) }))
        let problem = "drm /dev/dri/card0: cannot give Virtual-1 back its console picture: Device or resource busy"
        card.problemOnRelease = problem
        slot.release()
        #expect(lines.all.filter { $0.contains(problem) }.count == 1)
        slot.close(retain: false)
        #expect(lines.all.filter { $0.contains(problem) }.count == 2)
    }

    @Test("--vt at-exit leaves the VT alone under a DRM card: no console while running")
    func atExitTakesNoConsoleUnderDRM() throws {
        let (slot, _) = try OneCard.slot(log: .silent)
        let screen = ProgressScreen(theme: Theme(), display: slot.device) { _ in }
        let owner = ScreenOwner(screen: screen, displays: slot, vt: DaemonOptions.vtAtExit, log: .silent)
        #expect(owner.consoleAtExit && owner.console == nil && !owner.hasVT)
        #expect(owner.takeForFirstFrame())
        #expect(screen.renderFrame(at: 1))
    }
}

/// One fake DRM card (320x240, bochs-drm) in a display slot of its own, for the screen
/// owner's tests.
private enum OneCard {
    static func slot(log: Log) throws -> (DisplaySlot, FakeDeviceDisplay) {
        let devices = try FakeDevices()
        devices.add(.drm, "/dev/dri/card0", driver: "bochs-drm", width: 320, height: 240, number: DeviceNumber(major: 226, minor: 0))
        let slot = DisplaySlot(policy: .best, devices: devices.environment, loop: try EventLoop(), log: log)
        return (slot, try #require(devices.display("/dev/dri/card0")))
    }
}
