import CGaugeLinux
import GaugeDisplay
import GaugeSystem

/// How the daemon finds, opens and follows display devices; the system's by default, and
/// fakes in tests (a device that appears is then a memory display).
package struct DisplayDevices {
    /// Opened before the first look at the devices, so no event in between is missed.
    package var openEvents: () throws(SystemError) -> any DeviceEventSource
    /// The display device nodes there are now.
    package var nodes: () -> [DeviceNode]
    /// What a node's driver calls itself.
    package var probe: (DeviceNode) -> Result<String, DisplayError>
    package var open: (DeviceNode) throws(DisplayError) -> any DeviceDisplay

    package init(
        openEvents: @escaping () throws(SystemError) -> any DeviceEventSource,
        nodes: @escaping () -> [DeviceNode],
        probe: @escaping (DeviceNode) -> Result<String, DisplayError>,
        open: @escaping (DeviceNode) throws(DisplayError) -> any DeviceDisplay
    ) {
        self.openEvents = openEvents
        self.nodes = nodes
        self.probe = probe
        self.open = open
    }

    package static var system: DisplayDevices {
        DisplayDevices(
            openEvents: systemDeviceEventSource, nodes: { displayDeviceNodes() },
            probe: probeDisplayDriver, open: openDeviceDisplay)
    }
}

/// The kernel display devices the daemon draws on, which may change while it runs.
///
/// `best` (`--display auto`) starts on the best device there is (see `DeviceRank`), or
/// none, and moves to a better one as soon as it appears; where that is a DRM card of a
/// real driver, every such card is taken (a second GPU's screens too, a card that
/// appears later as it appears), and every framebuffer that no DRM card drives (see
/// `DeviceRank.showsBeside`), each with its own heads, shown as one `DisplayGroup`. A
/// device that fails to open or goes away is logged and left, never stopping the others.
/// `named` (`--display drm:PATH`) waits for that one device when it is not there. A device
/// that goes away (its remove event, or a call failing with ENODEV) is abandoned at once:
/// unmapped, closed, and never written again. A burst of events leads to one look at the
/// devices, after a short quiet time; a better device that fails to open is tried again a
/// few times.
///
/// While the display is released (hidden, VT switched away) no device is opened: the look
/// waits for `acquire()`.
package final class DisplaySlot {
    package enum Policy: Equatable {
        case best
        case named(DeviceNode)
    }

    /// What the daemon draws on: the device in use, the devices in use as one
    /// (`DisplayGroup`) when there are several, nil while there is none.
    package private(set) var device: (any DeviceDisplay)?
    /// The devices in use, real drivers' cards first, each kind in the order taken.
    private var members: [any DeviceDisplay] = []
    /// The device changed: the new one, or nil. `settled` is false while a replacement for
    /// a device that went away is still waited for (`replacementGrace`: the console need
    /// not come back yet).
    var onChange: (_ device: (any DeviceDisplay)?, _ settled: Bool) -> Void = { _, _ in }
    /// The device can take a frame again (a page flip finished).
    var onFrameReady: () -> Void = {}
    /// The device in use showed our picture again (`DeviceDisplay.showAgain()`): the next
    /// frame must be whole.
    var onShownAgain: () -> Void = {}

    /// Quiet time after an event before looking at the devices.
    static let settleDelay = 0.05
    /// A better device that failed to open is tried again after 0.1, 0.2, 0.4, 0.8, 1.6 s.
    static let retryLimit = 5
    /// How long, after the last device in use went away, a replacement is waited for before
    /// the console is given the screen back (`onChange(nil, true)`). A DRM driver removes
    /// the firmware's framebuffer as it starts to probe and registers its card a moment
    /// later (0.1-0.3 s in a VM, seconds for a GPU that loads firmware); the console,
    /// given text mode in between, would show its cursor on the card's new framebuffer.
    package static let replacementGrace = 3.0
    /// After a framebuffer device is added beside a DRM card in use, our picture is put on it
    /// again at the look that follows (`settleDelay`) and once more this much later. The
    /// card's fbdev emulation registers after the card, and the console moving onto it can
    /// clear our buffer (seen on bochs-drm: the screen black but for what the next frames
    /// changed); the kernel finishes that after the event, at a time of its own.
    package static let showAgainDelay = 0.5

    private let policy: Policy
    private let devices: DisplayDevices
    private let loop: EventLoop
    private let log: Log
    private var watcher: DisplayWatcher?
    private var released = false
    private var lookPending = false
    private var retries = 0
    private var replacementWanted = false
    /// How many more times the device in use is to show our picture again (see
    /// `showAgainDelay`).
    private var showsAgainDue = 0
    /// When the device in use went away (monotonic seconds).
    private var droppedAt = 0.0
    private var lastProblem: String?

    /// Opens the event source and the first device (logged), and registers both in `loop`.
    package init(policy: Policy, devices: DisplayDevices, loop: EventLoop, log: Log) {
        self.policy = policy
        self.devices = devices
        self.loop = loop
        self.log = log
        do throws(SystemError) {
            let watcher = try DisplayWatcher(source: try devices.openEvents(), loop: loop)
            watcher.onEvents = { [self] events, lost in deviceEvents(events, lost: lost) }
            watcher.onSettled = { [self] in settled() }
            self.watcher = watcher
            log.info("following display devices through the \(watcher.source.name)")
        } catch {
            log.info("no device events (\(error)): the display stays as found")
        }
        if !look() { watcher?.settle(after: Self.retryDelay(0)) }
    }

    /// Drops DRM master and stops frames (hide, VT switched away); with `keepingFrame`
    /// the last frame stays on screen for the next user (a display manager).
    package func release(keepingFrame: Bool = false) {
        released = true
        device?.release(keepingFrame: keepingFrame)
        for problem in device?.takeProblems() ?? [] { log.info(problem) }
    }

    /// Takes the device back, after the look at the devices that waited for it.
    package func acquire() throws(DisplayError) {
        released = false
        for member in members where !member.isPresent() { drop(member, reason: "the device went away") }
        if lookPending, !look() { watcher?.settle(after: Self.retryDelay(0)) }
        try device?.acquire()
        for problem in device?.takeProblems() ?? [] { log.info(problem) }
    }

    /// After a frame: a device that failed for good (ENODEV, or no head took the first
    /// frame's mode) is abandoned, and the next best one is looked for.
    func checkDevice() {
        for member in members where member.isGone {
            drop(member, reason: "the device went away (ENODEV) or refused every mode")
        }
    }

    package func close(retain: Bool) {
        watcher?.close()
        watcher = nil
        for member in members {
            unregister(member)
            member.close(retain: retain)
            for problem in member.takeProblems() { log.info(problem) }
        }
        members = []
        device = nil
        onChange = { _, _ in }
        onFrameReady = {}
        onShownAgain = {}
    }

    // MARK: - Events

    private func deviceEvents(_ events: [DeviceEvent], lost: Bool) {
        for member in members
        where DeviceEventSummary.of(events, currentPath: member.path, currentNumber: member.deviceNumber).currentRemoved {
            drop(member, reason: "the device was removed")
        }
        let summary = DeviceEventSummary.of(events, currentPath: nil, currentNumber: nil)
        if summary.framebufferAdded, device?.kind == .drm { showsAgainDue = 2 }
        if summary.displaysChanged || lost {
            retries = 0
            watcher?.settle(after: Self.settleDelay)
        }
    }

    private func settled() {
        if !look(), retries < Self.retryLimit {
            retries += 1
            watcher?.settle(after: Self.retryDelay(retries))
        }
        showAgainIfDue()
    }

    private func showAgainIfDue() {
        guard showsAgainDue > 0, let device, !released else { return }
        showsAgainDue -= 1
        if showsAgainDue > 0 { watcher?.settle(after: Self.showAgainDelay) }
        do throws(DisplayError) {
            try device.showAgain()
            log.info("\(device.name): picture shown again whole (a framebuffer device was added beside it)")
        } catch {
            log.info("\(error)")
        }
        for problem in device.takeProblems() { log.info(problem) }
        onShownAgain()
    }

    /// 0.05 s for the first look, then 0.1, 0.2, ... 1.6 s.
    private static func retryDelay(_ attempt: Int) -> Double { 0.05 * Double(1 << min(attempt, Self.retryLimit)) }

    // MARK: - Choosing

    /// Looks at the devices once: takes a better one if it opens, and beside real drivers'
    /// DRM cards every other device with a screen of its own. False when a device that
    /// would have been taken failed to open (worth trying again soon).
    @discardableResult
    private func look() -> Bool {
        for member in members where !member.isPresent() { drop(member, reason: "the device went away") }
        guard !released else {
            lookPending = true
            return true
        }
        lookPending = false
        var problems: [String] = []
        var opened = true
        switch policy {
        case .named(let node):
            guard members.isEmpty else { break }
            do throws(DisplayError) {
                take([try devices.open(node)])
            } catch {
                problems.append(error.message)
                opened = false
            }
        case .best:
            var taken: [any DeviceDisplay] = []
            var cards = Self.cardDrivers(members)
            for candidate in wantedCandidates(problems: &problems) {
                // Below a real driver's card one device is enough; beside one, every device
                // with a screen of its own.
                if !taken.isEmpty || !cards.isEmpty {
                    guard !cards.isEmpty else { break }
                    guard DeviceRank.showsBeside(cards: cards, kind: candidate.kind, driver: candidate.driver) else { continue }
                }
                do throws(DisplayError) {
                    taken.append(try devices.open(DeviceNode(kind: candidate.kind, path: candidate.path)))
                    if candidate.rank == .drm { cards.append(candidate.driver) }
                } catch {
                    problems.append(error.message)
                    opened = false
                }
            }
            if !taken.isEmpty { take(taken) }
        }
        if members.isEmpty {
            let waited = MonotonicClock.now() - droppedAt
            if replacementWanted, waited < Self.replacementGrace {
                // A device that failed to open is retried sooner (`settled`) while retries last.
                if opened || retries >= Self.retryLimit { watcher?.settle(after: Self.replacementGrace - waited) }
                return opened
            }
            report("no display (\(problems.isEmpty ? "no device" : problems.joined(separator: "; "))); waiting for one")
            if replacementWanted {
                replacementWanted = false
                onChange(nil, true)
            }
        } else if !problems.isEmpty {
            report("kept \(device!.name) (passed over: \(problems.joined(separator: "; ")))")
        }
        return opened
    }

    /// The devices worth opening, best first: those better than the ones in use, and
    /// beside a real driver's DRM card in use every other device with a screen of its own.
    /// Nodes whose kind cannot be wanted are not even opened to ask their driver.
    private func wantedCandidates(problems: inout [String]) -> [DisplayCandidate] {
        let current = members.map { DeviceRank(kind: $0.kind, driver: $0.driver) }.max()
        let cards = Self.cardDrivers(members)
        var candidates: [DisplayCandidate] = []
        for node in devices.nodes() {
            if members.contains(where: { $0.path == node.path }) { continue }
            if let current, cards.isEmpty, DeviceRank.best(of: node.kind) <= current { continue }
            switch devices.probe(node) {
            case .success(let driver):
                let candidate = DisplayCandidate(kind: node.kind, path: node.path, driver: driver)
                let wanted = cards.isEmpty
                    ? current.map { candidate.rank > $0 } ?? true
                    : DeviceRank.showsBeside(cards: cards, kind: node.kind, driver: driver)
                if wanted { candidates.append(candidate) }
            case .failure(let error):
                problems.append(error.message)
            }
        }
        return DisplayCandidate.preferred(candidates)
    }

    /// The drivers of the real KMS drivers' cards among `displays`.
    private static func cardDrivers(_ displays: [any DeviceDisplay]) -> [String] {
        displays.filter { isCard($0) }.map { $0.driver }
    }

    private static func isCard(_ display: any DeviceDisplay) -> Bool {
        DeviceRank(kind: display.kind, driver: display.driver) == .drm
    }

    /// Takes `opened` (one device, or real drivers' cards and the devices beside them):
    /// where cards are in use or among them, beside the devices in use that show a screen
    /// of their own; in place of every device in use otherwise.
    private func take(_ opened: [any DeviceDisplay]) {
        let cards = Self.cardDrivers(members + opened)
        for old in members where cards.isEmpty || !DeviceRank.showsBeside(cards: cards, kind: old.kind, driver: old.driver) {
            unregister(old)
            members.removeAll { $0 === old }
            old.close(retain: false)
            log.info("left \(old.name) for a better display")
        }
        for next in opened {
            members.append(next)
            if let fd = next.eventDescriptor {
                do throws(SystemError) {
                    try loop.register(fd, events: .readable) { [self, next] events in deviceReadable(next, events) }
                } catch {
                    log.info("cannot watch \(next.name): \(error)")
                }
            }
            log.info("display: \(next.summary)")
        }
        // The cards first: `status` and snapshots show the first.
        members = members.filter { Self.isCard($0) } + members.filter { !Self.isCard($0) }
        replacementWanted = false
        showsAgainDue = 0
        lastProblem = nil
        membersChanged()
        onChange(device, true)
    }

    private func drop(_ gone: any DeviceDisplay, reason: String) {
        guard let index = members.firstIndex(where: { $0 === gone }) else { return }
        unregister(gone)
        members.remove(at: index)
        membersChanged()
        gone.abandon()
        log.info("left \(gone.name): \(reason)")
        if members.isEmpty {
            replacementWanted = true
            droppedAt = MonotonicClock.now()
            onChange(nil, false)
        } else {
            onChange(device, true)
        }
        watcher?.settle(after: Self.settleDelay)
    }

    /// `device` for the members now.
    private func membersChanged() {
        device = members.count > 1 ? DisplayGroup(members) : members.first
    }

    private func deviceReadable(_ member: any DeviceDisplay, _ events: IOEvents) {
        guard members.contains(where: { $0 === member }) else { return }
        if events.contains(.hangup) || events.contains(.error) {
            drop(member, reason: "its descriptor hung up")
        } else {
            let ready = member.handleEvents()
            for problem in member.takeProblems() { log.info(problem) }
            if ready { onFrameReady() }
        }
    }

    /// Stops watching `member`'s events (before it is closed or abandoned: its descriptor
    /// is still its own then; one never registered is no registration of the loop's).
    private func unregister(_ member: any DeviceDisplay) {
        if let fd = member.eventDescriptor { loop.unregister(fd) }
    }

    /// Logs a problem once, not again while it stays the same.
    private func report(_ problem: String) {
        guard problem != lastProblem else { return }
        lastProblem = problem
        log.info(problem)
    }
}
