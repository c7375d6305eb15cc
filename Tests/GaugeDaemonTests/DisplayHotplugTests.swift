import GaugeDaemon
import GaugeDisplay
import GaugeSystem
import GaugeProtocol
import GaugeRender
import Glibc
import Testing
import GaugeTestSupport

/// A kernel display device that is a memory display underneath. It records its first
/// frame, and every attempt to draw on it once it was closed or abandoned.
final class FakeDeviceDisplay: DeviceDisplay {
    let memory: MemoryDisplay
    let kind: DeviceKind
    let path: String
    let driver: String
    let deviceNumber: DeviceNumber?
    /// The kernel removed it (`isPresent()` says so from now on).
    var removed = false
    /// The next `present` fails with ENODEV.
    var failNextPresentAsGone = false
    /// What a release, acquire or close goes wrong with where no caller gets an error
    /// (a CRTC that would not take the console's picture back), for `takeProblems`.
    var problemOnRelease: String?
    private var problems: [String] = []
    private(set) var isGone = false
    private(set) var closed = false
    private(set) var abandoned = false
    private(set) var active = true
    private(set) var drawsAfterClose = 0
    private(set) var firstFrame: [UInt8]?

    init(kind: DeviceKind, path: String, driver: String, width: Int, height: Int, number: DeviceNumber) throws {
        memory = try MemoryDisplay(width: width, height: height)
        self.kind = kind
        self.path = path
        self.driver = driver
        deviceNumber = number
    }

    var name: String { "\(kind.rawValue) \(path) \(driver)" }
    var summary: String { "\(name) \(width)x\(height)" }
    var width: Int { memory.width }
    var height: Int { memory.height }
    var format: PixelFormat { memory.format }
    var physicalSize: (width: Int, height: Int)? { nil }
    var eventDescriptor: Int32? { nil }
    var frameCount: Int { memory.frameCount }

    func beginFrame() -> FrameTarget? {
        if closed { drawsAfterClose += 1 }
        guard !closed, active else { return nil }
        return memory.beginFrame()
    }

    func present(damage: Rect) throws(DisplayError) {
        if closed { drawsAfterClose += 1 }
        guard !closed, active else { return }
        if failNextPresentAsGone {
            isGone = true
            throw DisplayError("\(path): the device is gone")
        }
        try memory.present(damage: damage)
        if firstFrame == nil { firstFrame = bytes() }
        onPresent?()
    }

    /// Called after each frame is presented.
    var onPresent: (() -> Void)?

    func bytes() -> [UInt8] { Array(UnsafeRawBufferPointer(start: memory.base, count: memory.byteCount)) }

    func handleEvents() -> Bool { active }
    func release(keepingFrame: Bool) {
        active = false
        if let problemOnRelease { problems.append(problemOnRelease) }
    }

    func acquire() throws(DisplayError) { active = true }

    /// Times the daemon put its picture on the device again.
    private(set) var shownAgain = 0
    func showAgain() throws(DisplayError) { shownAgain += 1 }

    func close(retain: Bool) {
        closed = true
        if let problemOnRelease { problems.append(problemOnRelease) }
    }

    func takeProblems() -> [String] {
        defer { problems = [] }
        return problems
    }
    func isPresent() -> Bool { !removed && !isGone }

    func abandon() {
        closed = true
        abandoned = true
    }
}

/// Display devices that the test makes come and go: nodes to list, drivers to report,
/// memory displays to open, and kernel uevents on a socket pair announcing each change.
final class FakeDevices {
    struct Node {
        var node: DeviceNode
        var driver: String
        var width: Int
        var height: Int
        var number: DeviceNumber
    }

    private(set) var nodes: [Node] = []
    private(set) var opened: [FakeDeviceDisplay] = []
    /// Paths whose open fails.
    var failing: Set<String> = []
    /// Looks at the device list so far.
    private(set) var scans = 0
    private let sender: Int32
    private let receiver: Int32

    init() throws {
        var pair: [Int32] = [-1, -1]
        let made = pair.withUnsafeMutableBufferPointer {
            socketpair(AF_UNIX, sockDgram | sockNonBlock | Int32(SOCK_CLOEXEC.rawValue), 0, $0.baseAddress)
        }
        try #require(made == 0)
        sender = pair[0]
        receiver = pair[1]
    }

    deinit { Syscall.close(sender) }

    var environment: DisplayDevices {
        DisplayDevices(
            openEvents: { [receiver] () throws(SystemError) in KernelUevents(descriptor: receiver, kernelOnly: false) },
            nodes: { [unowned self] in
                scans += 1
                return nodes.map(\.node)
            },
            probe: { [unowned self] node in
                guard let found = nodes.first(where: { $0.node == node }) else {
                    return .failure(DisplayError("\(node.path): cannot open: No such file or directory"))
                }
                return .success(found.driver)
            },
            open: { [unowned self] node throws(DisplayError) in
                guard let found = nodes.first(where: { $0.node == node }) else {
                    throw DisplayError("\(node.kind.rawValue) \(node.path): cannot open: No such file or directory")
                }
                if failing.contains(node.path) { throw DisplayError("\(node.path): no connected connector") }
                do {
                    let display = try FakeDeviceDisplay(
                        kind: node.kind, path: node.path, driver: found.driver, width: found.width,
                        height: found.height, number: found.number)
                    opened.append(display)
                    return display
                } catch {
                    throw DisplayError("\(error)")
                }
            })
    }

    /// The display opened last on `path`.
    func display(_ path: String) -> FakeDeviceDisplay? { opened.last { $0.path == path } }

    func add(_ kind: DeviceKind, _ path: String, driver: String, width: Int, height: Int, number: DeviceNumber) {
        nodes.append(Node(node: DeviceNode(kind: kind, path: path), driver: driver, width: width, height: height, number: number))
        announce("add", kind, path, number)
    }

    func remove(_ path: String) {
        guard let index = nodes.firstIndex(where: { $0.node.path == path }) else { return }
        let gone = nodes.remove(at: index)
        for display in opened where display.path == path { display.removed = true }
        announce("remove", gone.node.kind, path, gone.number)
    }

    /// A kernel uevent as the netlink socket carries it.
    private func announce(_ action: String, _ kind: DeviceKind, _ path: String, _ number: DeviceNumber) {
        let devname = String(path.dropFirst("/dev/".count))
        let subsystem = kind == .drm ? "drm" : "graphics"
        let devpath = "/devices/pci0000:00/0000:00:02.0/\(subsystem)/\(devname.split(separator: "/").last!)"
        let fields = [
            "\(action)@\(devpath)", "ACTION=\(action)", "DEVPATH=\(devpath)", "SUBSYSTEM=\(subsystem)",
            "MAJOR=\(number.major)", "MINOR=\(number.minor)", "DEVNAME=\(devname)", "SEQNUM=\(nodes.count + 100)",
        ]
        let bytes: [UInt8] = fields.flatMap { Array($0.utf8) + [0] }
        let sent = bytes.withUnsafeBytes { Glibc.send(sender, $0.baseAddress, $0.count, 0) }
        precondition(sent == bytes.count, "the test's uevent did not fit the socket")
    }
}

/// The daemon on fake devices, driven from the test's thread.
final class HotplugFixture {
    let directory = TemporaryDirectory()
    let devices: FakeDevices
    let daemon: Daemon
    let client: TestClient
    let lines: LogLines

    final class LogLines: @unchecked Sendable {
        var all: [String] = []
    }

    init(display: DaemonOptions.DisplayChoice = .auto, before: (FakeDevices) -> Void = { _ in }) throws {
        devices = try FakeDevices()
        before(devices)
        var options = DaemonOptions()
        options.display = display
        options.socketPath = directory.appending("gauged.sock")
        options.vt = "none"
        let lines = LogLines()
        self.lines = lines
        daemon = try Daemon(options: options, log: Log(sink: { lines.all.append($0) }), devices: devices.environment)
        try daemon.start()
        client = try TestClient(path: options.socketPath)
    }

    deinit {
        client.close()
        daemon.shutdown()
    }

    @discardableResult
    func request(_ line: String) throws -> String {
        let before = client.lines.count
        client.send(line + "\n")
        try #require(try pump(daemon.loop) { client.lines.count > before }, "no reply to \(line)")
        return client.lines[before]
    }

    func status() throws -> Status {
        let reply = try request("status")
        return try #require(Status.parse(json: String(reply.dropFirst(3))), "status reply \(reply)")
    }

    func pumpUntil(_ what: String, seconds: Double = 30, _ condition: () -> Bool) throws {
        try #require(try pump(daemon.loop, seconds: seconds, until: condition), "timed out waiting until \(what)")
    }

    /// A daemon started with one 320x240 device there, once it shows its first frame.
    static func showing(_ kind: DeviceKind, _ path: String, driver: String, number: DeviceNumber) throws
        -> (HotplugFixture, FakeDeviceDisplay)
    {
        let fixture = try HotplugFixture { $0.add(kind, path, driver: driver, width: 320, height: 240, number: number) }
        let display = try #require(fixture.devices.display(path))
        try fixture.pumpUntil("the first frame") { display.frameCount > 0 }
        return (fixture, display)
    }

    /// The frame the daemon's screen draws for this state on a `width` x `height` memory display.
    static func reference(width: Int, height: Int, progress: Double, message: String) throws -> [UInt8] {
        var theme = Theme()
        try theme.set("animate", "false")
        try theme.set("transition_duration", "0")
        let display = try MemoryDisplay(width: width, height: height)
        let screen = ProgressScreen(theme: theme, display: display, scale: 1) { _ in }
        screen.setProgress(progress, message: message, at: 0)
        screen.renderFrame(at: 1)
        return Array(UnsafeRawBufferPointer(start: display.base, count: display.byteCount))
    }
}

@Suite("Displays that come and go")
struct DisplayHotplugTests {
    let fb0 = DeviceNumber(major: 29, minor: 0)
    let card0 = DeviceNumber(major: 226, minor: 0)
    let card1 = DeviceNumber(major: 226, minor: 1)

    /// One bochs card (320x240), and the options of a daemon on it with no VT and its socket
    /// in `directory`.
    private func oneCard(_ directory: TemporaryDirectory) throws -> (FakeDevices, DaemonOptions) {
        let devices = try FakeDevices()
        devices.add(.drm, "/dev/dri/card0", driver: "bochs-drm", width: 320, height: 240, number: card0)
        var options = DaemonOptions()
        options.socketPath = directory.appending("gauged.sock")
        options.vt = "none"
        return (devices, options)
    }

    /// The socket is bound before a display is opened: a ping sent while the card opens
    /// (here: from within its open) is answered before the first frame is drawn; a request
    /// that changes the picture, sent then too, waits (the ping behind it on its connection
    /// with it) until the first frame is up, and is then carried out, in order.
    @Test func aClientConnectedWhileTheCardOpensIsAnsweredBeforeTheFirstFrame() throws {
        let directory = TemporaryDirectory()
        let (devices, options) = try oneCard(directory)
        var environment = devices.environment
        let open = environment.open
        var pinging: TestClient?
        var reporting: TestClient?
        var connectError: String?
        environment.open = { node throws(DisplayError) in
            do {
                pinging = try TestClient(path: options.socketPath)
                pinging?.send("ping\n")
                reporting = try TestClient(path: options.socketPath)
                reporting?.send("progress 30\nping\n")
            } catch {
                connectError = "\(error)"
            }
            return try open(node)
        }
        let daemon = try Daemon(options: options, log: Log(sink: { _ in }), devices: environment)
        defer { daemon.shutdown() }
        #expect(connectError == nil, "no socket while the card opened: \(connectError ?? "")")
        let client = try #require(pinging)
        let reporter = try #require(reporting)
        defer {
            client.close()
            reporter.close()
        }
        let display = try #require(devices.display("/dev/dri/card0"))
        var atFirstFrame: (ping: [String], report: [String])?
        display.onPresent = { atFirstFrame = atFirstFrame ?? (client.lines, reporter.lines) }

        try daemon.start()
        #expect(display.frameCount == 1)
        #expect(atFirstFrame?.ping == ["ok"], "the ping is answered before the first frame")
        #expect(atFirstFrame?.report == [], "a request that changes the picture waits for the first frame")
        try #require(try pump(daemon.loop) { reporter.lines.count == 2 }, "no answer to the held requests")
        #expect(reporter.lines == ["ok", "ok"])
        #expect(daemon.statusJSON(at: 0).contains("\"target\":30"))
    }

    /// A ping that comes while the card opens is answered then, before `start()`, and what
    /// a client that had its answer may use next is there already: psplash's FIFO, open for
    /// reading (psplash-write's non-blocking open succeeds, and its command is carried out
    /// once the daemon serves), and SIGTERM blocked (it waits for the loop instead of ending
    /// the daemon by default).
    @Test func aPingWhileTheCardOpensIsAnsweredBeforeTheStartWithTheFIFOAndSignalsReady() throws {
        let directory = TemporaryDirectory()
        var (devices, options) = try oneCard(directory)
        options.psplashFIFO = directory.appending("psplash_fifo")
        var environment = devices.environment
        let open = environment.open
        var pinging: TestClient?
        environment.open = { node throws(DisplayError) in
            pinging = try? TestClient(path: options.socketPath)
            pinging?.send("ping\n")
            return try open(node)
        }
        let daemon = try Daemon(options: options, log: Log(sink: { _ in }), devices: environment)
        defer { daemon.shutdown() }
        let client = try #require(pinging, "no socket while the card opened")
        defer { client.close() }
        #expect(client.lines == ["ok"], "the ping waits for the start")
        let writer = Glibc.open(directory.appending("psplash_fifo"), O_WRONLY | O_NONBLOCK)
        #expect(writer >= 0, "psplash-write's open fails: errno \(Glibc.errno)")
        defer { if writer >= 0 { Glibc.close(writer) } }
        var mask = sigset_t()
        pthread_sigmask(SIG_BLOCK, nil, &mask)
        #expect(sigismember(&mask, SIGTERM) == 1, "a SIGTERM would end the daemon by default")
        #expect(Array("PROGRESS 40\n".utf8).withUnsafeBytes { Glibc.write(writer, $0.baseAddress, $0.count) } == 12)

        try daemon.start()
        try #require(try pump(daemon.loop) { daemon.statusJSON(at: 0).contains("\"target\":40") }, "the FIFO's command was lost")
    }

    @Test func startsWithNoDisplayTakesEfifbThenMovesToTheDRMCardThatReplacesIt() throws {
        let fixture = try HotplugFixture()
        let devices = fixture.devices
        #expect(try fixture.status().display == .none)
        #expect(fixture.lines.all.contains { $0.contains("no display (no device); waiting for one") })
        try fixture.request("theme animate=false transition_duration=0")
        try fixture.request("progress 40 Unpacking")

        // efifb appears: the daemon takes it and draws the current picture.
        devices.add(.fbdev, "/dev/fb0", driver: "EFI VGA", width: 800, height: 600, number: fb0)
        try fixture.pumpUntil("efifb shows a frame") { (devices.display("/dev/fb0")?.frameCount ?? 0) > 0 }
        let efifb = try #require(devices.display("/dev/fb0"))
        let onEfifb = try HotplugFixture.reference(width: 800, height: 600, progress: 40, message: "Unpacking")
        #expect(onEfifb.contains { $0 > 0x80 }, "the reference frame is not blank")
        #expect(efifb.firstFrame == onEfifb)
        #expect(try fixture.status().display.name == "fbdev /dev/fb0 EFI VGA")

        // bochs-drm takes the hardware over: efifb goes, the card and its own fbdev come, in one burst.
        let scans = devices.scans
        let efifbPixels = efifb.bytes()
        devices.remove("/dev/fb0")
        devices.add(.drm, "/dev/dri/card0", driver: "bochs-drm", width: 640, height: 480, number: card0)
        devices.add(.fbdev, "/dev/fb0", driver: "bochs-drmdrmfb", width: 640, height: 480, number: fb0)
        try fixture.pumpUntil("the card shows a frame") { (devices.display("/dev/dri/card0")?.frameCount ?? 0) > 0 }
        let card = try #require(devices.display("/dev/dri/card0"))
        #expect(card.firstFrame == (try HotplugFixture.reference(width: 640, height: 480, progress: 40, message: "Unpacking")))
        #expect(efifb.abandoned)
        #expect(efifb.drawsAfterClose == 0)
        #expect(efifb.bytes() == efifbPixels)
        #expect(devices.scans == scans + 1, "one look at the devices for the whole burst")
        #expect(devices.opened.count == 2, "the card's own fbdev is not opened")
        #expect(fixture.lines.all.contains { $0.contains("left fbdev /dev/fb0 EFI VGA: the device was removed") })
        let status = try fixture.status()
        #expect(status.display == Status.Display(name: "drm /dev/dri/card0 bochs-drm", width: 640, height: 480, format: "XRGB8888"))

        // Updates reach the card only.
        let frames = card.frameCount
        try fixture.request("progress 70")
        try fixture.pumpUntil("the card shows 70%") { card.frameCount > frames }
        #expect(efifb.drawsAfterClose == 0)

        // The card goes too: nothing is drawn, and status says so.
        devices.remove("/dev/fb0")
        devices.remove("/dev/dri/card0")
        try fixture.pumpUntil("the card is dropped") { card.abandoned }
        #expect(try fixture.status().display == .none)
        try fixture.request("progress 90")
        try pump(fixture.daemon.loop, for: 0.1)
        #expect(card.drawsAfterClose == 0)
    }

    @Test func aDeviceThatGoesAwayIsReplacedWithoutTheConsoleInBetween() throws {
        let (fixture, efifb) = try HotplugFixture.showing(.fbdev, "/dev/fb0", driver: "EFI VGA", number: fb0)
        let devices = fixture.devices
        // The DRM driver removes efifb as it starts, and registers its card a moment later.
        let logged = fixture.lines.all.count
        let removed = MonotonicClock.now()
        devices.remove("/dev/fb0")
        try pump(fixture.daemon.loop, for: 0.4)
        #expect(efifb.abandoned)
        devices.add(.drm, "/dev/dri/card0", driver: "bochs-drm", width: 640, height: 480, number: card0)
        try fixture.pumpUntil("the card shows a frame") { (devices.display("/dev/dri/card0")?.frameCount ?? 0) > 0 }
        // Taken on its own event, not when the wait for a replacement ends.
        #expect(MonotonicClock.now() - removed < DisplaySlot.replacementGrace)
        let since = fixture.lines.all[logged...]
        #expect(!since.contains { $0.contains("no display") }, "the console was given the screen: \(Array(since))")
    }

    @Test func theCardsOwnFbdevArrivingAfterItGetsThePictureShownAgainWhole() throws {
        let (fixture, card) = try HotplugFixture.showing(.drm, "/dev/dri/card0", driver: "bochs-drm", number: card0)
        let devices = fixture.devices
        try fixture.request("theme animate=false transition_duration=0")
        try fixture.request("progress 40 Unpacking")
        let expected = try HotplugFixture.reference(width: 320, height: 240, progress: 40, message: "Unpacking")
        try fixture.pumpUntil("the card shows 40%") { card.bytes() == expected }
        // The card's fbdev registers; the console moving onto it clears the buffer on screen.
        devices.add(.fbdev, "/dev/fb0", driver: "bochs-drmdrmfb", width: 320, height: 240, number: fb0)
        memset(card.memory.base, 0, card.memory.byteCount)
        try fixture.pumpUntil("the picture shown again") { card.shownAgain == 1 }
        try fixture.pumpUntil("the whole frame drawn again") { card.bytes() == expected }
        // Once more a moment later (the kernel may clear it after the event), then no more.
        memset(card.memory.base, 0, card.memory.byteCount)
        try fixture.pumpUntil("the picture shown again, once more", seconds: 5) { card.shownAgain == 2 }
        try fixture.pumpUntil("the whole frame drawn again, once more") { card.bytes() == expected }
        try pump(fixture.daemon.loop, for: DisplaySlot.showAgainDelay * 2)
        #expect(card.shownAgain == 2)
        #expect(devices.opened.count == 1, "the card's own fbdev is not opened")
    }

    @Test func anFbdevBesideAnFbdevInUseChangesNothing() throws {
        let (fixture, efifb) = try HotplugFixture.showing(.fbdev, "/dev/fb0", driver: "EFI VGA", number: fb0)
        fixture.devices.add(.fbdev, "/dev/fb1", driver: "simple", width: 320, height: 240, number: DeviceNumber(major: 29, minor: 1))
        try pump(fixture.daemon.loop, for: DisplaySlot.showAgainDelay * 2)
        #expect(efifb.shownAgain == 0)
    }

    @Test func withNoReplacementTheConsoleGetsTheScreenAfterTheGrace() throws {
        let (fixture, _) = try HotplugFixture.showing(.drm, "/dev/dri/card0", driver: "bochs-drm", number: card0)
        let removed = MonotonicClock.now()
        fixture.devices.remove("/dev/dri/card0")
        try fixture.pumpUntil("no display is declared") { fixture.lines.all.contains { $0.contains("no display (no device); waiting for one") } }
        #expect(MonotonicClock.now() - removed >= DisplaySlot.replacementGrace)
        #expect(try fixture.status().display == .none)
    }

    @Test func aBetterDeviceReplacesOneThatStaysAndTheOldOneIsClosedNotAbandoned() throws {
        let (fixture, framebuffer) = try HotplugFixture.showing(.fbdev, "/dev/fb0", driver: "bochs-drmdrmfb", number: fb0)
        let devices = fixture.devices
        devices.add(.drm, "/dev/dri/card0", driver: "bochs-drm", width: 640, height: 480, number: card0)
        try fixture.pumpUntil("the card shows a frame") { (devices.display("/dev/dri/card0")?.frameCount ?? 0) > 0 }
        #expect(framebuffer.closed && !framebuffer.abandoned)
        #expect(framebuffer.drawsAfterClose == 0)
        #expect(fixture.lines.all.contains { $0.contains("left fbdev /dev/fb0 bochs-drmdrmfb for a better display") })
        // The firmware's DRM device is no better than the card: not even opened.
        devices.add(.drm, "/dev/dri/card1", driver: "simpledrm", width: 640, height: 480, number: card1)
        try pump(fixture.daemon.loop, for: 0.15)
        #expect(devices.display("/dev/dri/card1") == nil)
    }

    /// Two cards of different sizes (two GPUs): each shows the whole splash laid out for
    /// its own size, from the one state; hide and show act on both.
    @Test func everyCardShowsTheSplashLaidOutForItsOwnSize() throws {
        let fixture = try HotplugFixture { devices in
            devices.add(.drm, "/dev/dri/card0", driver: "bochs-drm", width: 640, height: 480, number: card0)
            devices.add(.drm, "/dev/dri/card1", driver: "virtio_gpu", width: 320, height: 240, number: card1)
        }
        let devices = fixture.devices
        let first = try #require(devices.display("/dev/dri/card0"))
        let second = try #require(devices.display("/dev/dri/card1"))
        try fixture.request("theme animate=false transition_duration=0")
        try fixture.request("progress 40 Unpacking")
        let expected = (
            try HotplugFixture.reference(width: 640, height: 480, progress: 40, message: "Unpacking"),
            try HotplugFixture.reference(width: 320, height: 240, progress: 40, message: "Unpacking"))
        try fixture.pumpUntil("both cards show 40%") { first.bytes() == expected.0 && second.bytes() == expected.1 }
        #expect(fixture.lines.all.contains { $0.contains("display: drm /dev/dri/card0 bochs-drm 640x480") })
        #expect(fixture.lines.all.contains { $0.contains("display: drm /dev/dri/card1 virtio_gpu 320x240") })
        #expect(try fixture.status().display == Status.Display(name: "drm /dev/dri/card0 bochs-drm", width: 640, height: 480, format: "XRGB8888"))

        try fixture.request("hide")
        #expect(!first.active && !second.active, "hide lets go of both cards")
        try fixture.request("show")
        #expect(first.active && second.active, "show takes both back")
        fixture.daemon.shutdown()
        #expect(first.closed && second.closed, "the daemon's end closes both")
        #expect(!first.abandoned && !second.abandoned)
    }

    /// A card that appears while the splash shows on another (a second GPU's driver loads
    /// later) is taken beside it, and the first keeps its place; one that goes away is
    /// left, and the other goes on alone, the console never given the screen.
    @Test func aSecondCardIsTakenBesideTheFirstAndEitherMayGo() throws {
        let (fixture, first) = try HotplugFixture.showing(.drm, "/dev/dri/card0", driver: "bochs-drm", number: card0)
        let devices = fixture.devices
        try fixture.request("theme animate=false transition_duration=0")
        try fixture.request("progress 40 Unpacking")
        devices.add(.drm, "/dev/dri/card1", driver: "virtio_gpu", width: 640, height: 480, number: card1)
        try fixture.pumpUntil("the second card opens") { devices.display("/dev/dri/card1") != nil }
        let second = try #require(devices.display("/dev/dri/card1"))
        let big = try HotplugFixture.reference(width: 640, height: 480, progress: 40, message: "Unpacking")
        try fixture.pumpUntil("the second card shows 40%") { second.bytes() == big }
        #expect(!first.closed, "the first card stays")
        #expect(first.bytes() == (try HotplugFixture.reference(width: 320, height: 240, progress: 40, message: "Unpacking")))
        #expect(devices.opened.count == 2)

        // The first goes: the second shows on alone, and status names it.
        let logged = fixture.lines.all.count
        devices.remove("/dev/dri/card0")
        try fixture.pumpUntil("the first card is left") { first.abandoned }
        #expect(try fixture.status().display.name == "drm /dev/dri/card1 virtio_gpu")
        let frames = second.frameCount
        try fixture.request("progress 70")
        try fixture.pumpUntil("the second card shows 70%") {
            second.bytes() == (try? HotplugFixture.reference(width: 640, height: 480, progress: 70, message: "Unpacking"))
        }
        #expect(second.frameCount > frames)
        #expect(first.drawsAfterClose == 0)
        try pump(fixture.daemon.loop, for: 0.15)
        #expect(!fixture.lines.all[logged...].contains { $0.contains("no display") })
        #expect(fixture.lines.all.contains { $0.contains("left drm /dev/dri/card0 bochs-drm: the device was removed") })
    }

    /// A framebuffer no DRM card drives (an SPI panel's fbtft) shows the splash beside the
    /// cards, from the start or when a card comes later; a card's own fbdev emulation and
    /// the firmware's framebuffer do not.
    @Test func aFramebufferOfItsOwnShowsBesideTheCards() throws {
        let panel = DeviceNumber(major: 29, minor: 1)
        let (fixture, framebuffer) = try HotplugFixture.showing(.fbdev, "/dev/fb1", driver: "fb_ili9341", number: panel)
        let devices = fixture.devices
        try fixture.request("theme animate=false transition_duration=0")
        try fixture.request("progress 40 Unpacking")
        devices.add(.drm, "/dev/dri/card0", driver: "vc4", width: 640, height: 480, number: card0)
        devices.add(.fbdev, "/dev/fb0", driver: "vc4drmfb", width: 640, height: 480, number: fb0)
        try fixture.pumpUntil("the card shows 40%") {
            devices.display("/dev/dri/card0")?.bytes()
                == (try? HotplugFixture.reference(width: 640, height: 480, progress: 40, message: "Unpacking"))
        }
        #expect(!framebuffer.closed, "the panel's framebuffer stays beside the card")
        #expect(framebuffer.bytes() == (try HotplugFixture.reference(width: 320, height: 240, progress: 40, message: "Unpacking")))
        #expect(devices.display("/dev/fb0") == nil, "the card's own fbdev is not opened")
        #expect(try fixture.status().display.name == "drm /dev/dri/card0 vc4", "status names the card")
        // The firmware's framebuffer (another GPU's, before its driver loads) is not taken beside them.
        devices.add(.fbdev, "/dev/fb2", driver: "EFI VGA", width: 640, height: 480, number: DeviceNumber(major: 29, minor: 2))
        try pump(fixture.daemon.loop, for: 0.15)
        #expect(devices.display("/dev/fb2") == nil)
        #expect(devices.opened.count == 2)
    }

    /// A second card that cannot be opened is logged and passed over; the first shows on.
    @Test func aCardThatFailsToOpenLeavesTheOtherShowing() throws {
        let (fixture, first) = try HotplugFixture.showing(.drm, "/dev/dri/card0", driver: "bochs-drm", number: card0)
        let devices = fixture.devices
        devices.failing = ["/dev/dri/card1"]
        devices.add(.drm, "/dev/dri/card1", driver: "amdgpu", width: 640, height: 480, number: card1)
        try fixture.pumpUntil("the card is passed over") {
            fixture.lines.all.contains { $0.contains("kept drm /dev/dri/card0 bochs-drm (passed over: /dev/dri/card1: no connected connector)") }
        }
        let frames = first.frameCount
        try fixture.request("progress 60")
        try fixture.pumpUntil("the first card shows 60%") { first.frameCount > frames }
        #expect(!first.closed)
        // Tried again without a new event, and taken once it opens.
        devices.failing = []
        try fixture.pumpUntil("a retry opens it", seconds: 3) { (devices.display("/dev/dri/card1")?.frameCount ?? 0) > 0 }
        #expect(!first.closed)
    }

    @Test func aCardThatFailsToOpenIsTriedAgainWithoutANewEvent() throws {
        let fixture = try HotplugFixture()
        let devices = fixture.devices
        devices.failing = ["/dev/dri/card0"]
        devices.add(.drm, "/dev/dri/card0", driver: "bochs-drm", width: 640, height: 480, number: card0)
        try fixture.pumpUntil("the first look") { devices.scans >= 2 }
        #expect(devices.opened.isEmpty)
        devices.failing = []
        try fixture.pumpUntil("a retry opens it", seconds: 3) { (devices.display("/dev/dri/card0")?.frameCount ?? 0) > 0 }
    }

    @Test func aDeviceFailingWithENODEVIsDroppedAfterThatFrame() throws {
        let fixture = try HotplugFixture { devices in
            devices.add(.drm, "/dev/dri/card0", driver: "bochs-drm", width: 320, height: 240, number: DeviceNumber(major: 226, minor: 0))
        }
        let card = try #require(fixture.devices.display("/dev/dri/card0"))
        try fixture.pumpUntil("the first frame") { card.frameCount > 0 }
        card.failNextPresentAsGone = true
        try fixture.request("progress 50")
        try fixture.pumpUntil("the card is dropped") { card.abandoned }
        #expect(try fixture.status().display == .none)
        try fixture.request("progress 60")
        try pump(fixture.daemon.loop, for: 0.1)
        #expect(card.drawsAfterClose == 0)
        #expect(fixture.lines.all.contains { $0.contains("left drm /dev/dri/card0 bochs-drm: the device went away (ENODEV) or refused every mode") })
    }

    @Test func aNamedDeviceIsWaitedForAndNoOtherTaken() throws {
        let fixture = try HotplugFixture(display: .drm(path: "/dev/dri/card1"))
        let devices = fixture.devices
        #expect(fixture.lines.all.contains { $0.contains("/dev/dri/card1: cannot open") && $0.contains("waiting for one") })
        devices.add(.drm, "/dev/dri/card0", driver: "i915", width: 320, height: 240, number: card0)
        try pump(fixture.daemon.loop, for: 0.15)
        #expect(devices.opened.isEmpty)
        devices.add(.drm, "/dev/dri/card1", driver: "virtio_gpu", width: 320, height: 240, number: card1)
        try fixture.pumpUntil("card1 shows a frame") { (devices.display("/dev/dri/card1")?.frameCount ?? 0) > 0 }
        #expect(devices.opened.map(\.path) == ["/dev/dri/card1"])
    }

    @Test func whileHiddenANewDeviceWaitsForShow() throws {
        let fixture = try HotplugFixture()
        let devices = fixture.devices
        try fixture.request("hide")
        devices.add(.drm, "/dev/dri/card0", driver: "bochs-drm", width: 320, height: 240, number: card0)
        try pump(fixture.daemon.loop, for: 0.15)
        #expect(devices.opened.isEmpty, "a hidden daemon takes no screen")
        try fixture.request("show")
        try fixture.pumpUntil("the card shows a frame after show") { (devices.display("/dev/dri/card0")?.frameCount ?? 0) > 0 }
    }
}

@Suite("Kernel uevent source")
struct KernelUeventsTests {
    private func socketPair() throws -> (Int32, Int32) {
        var pair: [Int32] = [-1, -1]
        let made = pair.withUnsafeMutableBufferPointer {
            socketpair(AF_UNIX, sockDgram | sockNonBlock | Int32(SOCK_CLOEXEC.rawValue), 0, $0.baseAddress)
        }
        try #require(made == 0)
        return (pair[0], pair[1])
    }

    private func send(_ fd: Int32, card: Int) {
        let fields = ["add@/devices/x/drm/card\(card)", "ACTION=add", "SUBSYSTEM=drm", "DEVNAME=dri/card\(card)"]
        let bytes: [UInt8] = fields.flatMap { Array($0.utf8) + [0] }
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) }
    }

    @Test func readsWhatWaitsInBatchesOfTheLimit() throws {
        let (sender, receiver) = try socketPair()
        defer { Syscall.close(sender) }
        let source = KernelUevents(descriptor: receiver, kernelOnly: false)
        defer { source.close() }
        #expect(source.receive(limit: 8).events.isEmpty)
        for card in 0..<5 { send(sender, card: card) }
        let first = source.receive(limit: 2)
        #expect(first.events.map(\.devname) == ["dri/card0", "dri/card1"])
        #expect(!first.lost)
        #expect(source.receive(limit: 8).events.map(\.devname) == ["dri/card2", "dri/card3", "dri/card4"])
        #expect(source.receive(limit: 8).events.isEmpty)
    }

    /// The kernel's uevents and udev's monitor read as one: readable when either is, and
    /// everything waiting in both read in one go.
    @Test func combinedSourcesAreReadableWhenAnyIsAndReadTogether() throws {
        let (kernelSender, kernelReceiver) = try socketPair()
        let (udevSender, udevReceiver) = try socketPair()
        defer { Syscall.close(kernelSender); Syscall.close(udevSender) }
        let combined = try CombinedDeviceEvents([
            KernelUevents(descriptor: kernelReceiver, kernelOnly: false),
            KernelUevents(descriptor: udevReceiver, kernelOnly: false),
        ])
        defer { combined.close() }
        var ready = pollfd(fd: combined.descriptor, events: Int16(POLLIN), revents: 0)
        #expect(poll(&ready, 1, 0) == 0, "nothing waits")
        send(udevSender, card: 1)
        #expect(poll(&ready, 1, 1000) == 1, "readable when the second source is")
        send(kernelSender, card: 0)
        #expect(combined.receive(limit: 8).events.map(\.devname) == ["dri/card0", "dri/card1"])
        ready.revents = 0
        #expect(poll(&ready, 1, 0) == 0, "all read")
    }

    @Test func onlyTheKernelsDatagramsCountOnTheNetlinkSource() throws {
        let (sender, receiver) = try socketPair()
        defer { Syscall.close(sender) }
        let source = KernelUevents(descriptor: receiver, kernelOnly: true)
        defer { source.close() }
        send(sender, card: 0)
        // Read and dropped: a process is not the kernel.
        #expect(source.receive(limit: 8).events.isEmpty)
        #expect(source.receive(limit: 8).events.isEmpty)
    }
}
