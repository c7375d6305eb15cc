import Foundation
@testable import GaugeDisplay
import Testing

private typealias Plan = DRMHeadPlan
private let fullHD = Plan.Mode(width: 1920, height: 1080, refresh: 60, preferred: true)
private let hd = Plan.Mode(width: 1280, height: 720, refresh: 60)
private let xga = Plan.Mode(width: 1024, height: 768, refresh: 60)

private func plan(_ connectors: [Plan.Connector], _ encoders: [Plan.Encoder], crtcs: [UInt32] = [31, 32]) throws -> Plan {
    try Plan.make(connectors: connectors, encoders: encoders, crtcs: crtcs).get()
}

@Test func singleConnectorAtItsPreferredMode() throws {
    let modes = [xga, fullHD, hd]   // preferred flag wins over list order
    let p = try plan([Plan.Connector(id: 1, modes: modes, encoders: [10])], [Plan.Encoder(id: 10, possibleCrtcs: 0b11)])
    #expect(p.heads == [Plan.Head(connector: 1, connectorName: "connector-1", crtc: 31, modeIndex: 1)])
}

@Test func withoutAPreferredFlagTheFirstModeIsTaken() throws {
    let p = try plan([Plan.Connector(id: 1, modes: [hd, xga], encoders: [10])], [Plan.Encoder(id: 10, possibleCrtcs: 1)])
    #expect(p.heads[0].modeIndex == 0)
}

@Test func disconnectedAndModelessConnectorsAreIgnored() throws {
    let p = try plan([
        Plan.Connector(id: 1, connected: false, modes: [fullHD], encoders: [10]),
        Plan.Connector(id: 2, modes: [], encoders: [10]),
        Plan.Connector(id: 3, modes: [xga], encoders: [10]),
    ], [Plan.Encoder(id: 10, possibleCrtcs: 0b11)])
    #expect(p.heads.map { $0.connector } == [3])
}

@Test func nothingConnectedIsAnError() {
    let result = Plan.make(connectors: [Plan.Connector(id: 1, connected: false, modes: [xga])], encoders: [], crtcs: [31])
    #expect(throws: DisplayError("no connected connector with a mode")) { try result.get() }
}

@Test func currentEncoderCrtcComesFirst() throws {
    let p = try plan(
        [Plan.Connector(id: 1, modes: [xga], currentEncoder: 11, encoders: [10, 11])],
        [Plan.Encoder(id: 10, possibleCrtcs: 0b01), Plan.Encoder(id: 11, crtc: 32, possibleCrtcs: 0b11)])
    #expect(p.heads[0].crtc == 32)
}

@Test func possibleCrtcsInOrderWhenNoCurrentEncoder() throws {
    let p = try plan(
        [Plan.Connector(id: 1, modes: [xga], encoders: [10])],
        [Plan.Encoder(id: 10, possibleCrtcs: 0b10)])
    #expect(p.heads[0].crtc == 32)
}

@Test func eachHeadGetsItsOwnModeAndCrtc() throws {
    let secondModes = [Plan.Mode(width: 1920, height: 1080, refresh: 75),
                       Plan.Mode(width: 2560, height: 1440, preferred: true)]
    let p = try plan([
        Plan.Connector(id: 1, name: "eDP-1", modes: [fullHD], currentEncoder: 10, encoders: [10]),
        // Its current encoder drives the CRTC the first head took: it falls back.
        Plan.Connector(id: 2, name: "HDMI-A-1", modes: secondModes, currentEncoder: 10, encoders: [10, 11]),
        Plan.Connector(id: 3, name: "DP-1", modes: [xga], encoders: [11]),
    ], [Plan.Encoder(id: 10, crtc: 31, possibleCrtcs: 0b001), Plan.Encoder(id: 11, possibleCrtcs: 0b111)],
       crtcs: [31, 32, 33])
    #expect(p.heads.map { $0.crtc } == [31, 32, 33])
    // Its own preferred 1440p, not the first head's 1080p; the third its only mode.
    #expect(p.heads.map { $0.modeIndex } == [0, 1, 0])
    #expect(p.skipped.isEmpty)
}

@Test func theModeVideoAskedForWinsOverThePreferredOne() throws {
    let modes = [Plan.Mode(width: 5120, height: 2160), fullHD, Plan.Mode(width: 1024, height: 768, userDefined: true)]
    let p = try plan([Plan.Connector(id: 1, modes: modes, encoders: [10])], [Plan.Encoder(id: 10, possibleCrtcs: 1)])
    #expect(p.heads[0].modeIndex == 2)
}

@Test func nonDesktopOutputsAreLeftAlone() throws {
    let p = try plan([
        Plan.Connector(id: 1, name: "DP-1", modes: [fullHD], encoders: [10], nonDesktop: true),
        Plan.Connector(id: 2, name: "HDMI-A-1", modes: [xga], encoders: [10]),
    ], [Plan.Encoder(id: 10, possibleCrtcs: 0b11)])
    #expect(p.heads.map { $0.connector } == [2])
    #expect(p.skipped == ["DP-1: a non-desktop output"])
    let alone = Plan.make(
        connectors: [Plan.Connector(id: 1, name: "DP-1", modes: [fullHD], encoders: [10], nonDesktop: true)],
        encoders: [Plan.Encoder(id: 10, possibleCrtcs: 1)], crtcs: [31])
    #expect(throws: DisplayError("no head to light (DP-1: a non-desktop output)")) { try alone.get() }
}

@Test func headWithoutAFreeCrtcIsSkipped() throws {
    let p = try plan([
        Plan.Connector(id: 1, name: "A", modes: [xga], encoders: [10]),
        Plan.Connector(id: 2, name: "B", modes: [xga], encoders: [10]),
    ], [Plan.Encoder(id: 10, possibleCrtcs: 0b01)])
    #expect(p.heads.count == 1)
    #expect(p.skipped == ["B: no free CRTC"])
}

@Test func formatOrderFollowsThePreferredDepth() {
    #expect(DRMDisplay.formatOrder(preferredDepth: 24) == [.xrgb8888, .rgb565])
    #expect(DRMDisplay.formatOrder(preferredDepth: 0) == [.xrgb8888, .rgb565])
    #expect(DRMDisplay.formatOrder(preferredDepth: 16) == [.rgb565, .xrgb8888])
    #expect(DRMDisplay.fourcc(.xrgb8888) == 0x3432_5258)   // 'XR24'
    #expect(DRMDisplay.fourcc(.rgb565) == 0x3631_4752)     // 'RG16'
    #expect(DRMDisplay.fourcc(.bgr888) == nil)
}

@Test func displaySpecSplitsKindAndPath() {
    #expect(splitDisplaySpec("auto") == ("auto", nil))
    #expect(splitDisplaySpec("drm") == ("drm", nil))
    #expect(splitDisplaySpec("drm:/dev/dri/card1") == ("drm", "/dev/dri/card1"))
    #expect(splitDisplaySpec("fbdev:") == ("fbdev", nil))
}

@Test func missingDevicesFailWithTheirPath() {
    #expect(throws: DisplayError.self) { try DRMDisplay(path: "/nonexistent/card0") }
    #expect(throws: DisplayError.self) { try FBDevDisplay(path: "/nonexistent/fb0") }
    for node in [DeviceNode(kind: .drm, path: "/nonexistent/card9"), DeviceNode(kind: .fbdev, path: "/nonexistent/fb9")] {
        guard case .failure(let error) = probeDisplayDriver(node) else {
            Issue.record("probing \(node.path) did not fail")
            continue
        }
        #expect(error.message.contains(node.path))
        #expect(throws: DisplayError.self) { try openDeviceDisplay(node) }
    }
    #expect(drmCardPaths(directory: "/nonexistent").isEmpty)
    #expect(displayDeviceNodes(dri: "/nonexistent", dev: "/nonexistent").isEmpty)
}

/// Device nodes by their number, which is digits only: `card+1` or `fb-0` is no node.
@Test func deviceNodesAreListedByTheirDigits() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nodes-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    for name in ["card10", "card2", "card0", "card+1", "card-3", "card", "card 4", "cardX", "renderD128", "fb1", "fb+0", "fb-0", "tty1"] {
        #expect(FileManager.default.createFile(atPath: "\(directory)/\(name)", contents: nil))
    }
    #expect(drmCardPaths(directory: directory) == ["card0", "card2", "card10"].map { "\(directory)/\($0)" })
    #expect(displayDeviceNodes(dri: directory, dev: directory).map(\.path)
        == ["card0", "card2", "card10", "fb1"].map { "\(directory)/\($0)" })
}
