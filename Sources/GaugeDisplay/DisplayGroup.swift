import GaugeRender
import GaugeSystem

/// Several kernel display devices shown as one: two DRM cards (a desktop with two GPUs, a
/// laptop's panel on one card and its external screen on another), a card and a panel's
/// own framebuffer (`DeviceRank.showsBeside`). Its views are every member's heads, so the
/// daemon lays out and draws each for its own size from the one state; what the daemon
/// does with a device (release, acquire, show again, close) it does with each member.
///
/// The members' own events and their going away are followed one by one by whoever holds
/// them (`DisplaySlot`): the group has no descriptor of its own, and `isGone` only once
/// every member is.
package final class DisplayGroup: DeviceDisplay {
    /// The devices, the first the one whose size and name `status` reports; at least two.
    package let members: [any DeviceDisplay]

    package init(_ members: [any DeviceDisplay]) {
        precondition(members.count > 1, "a group of one is that device")
        self.members = members
    }

    package var name: String { members.map { $0.name }.joined(separator: " and ") }
    package var summary: String { members.map { $0.summary }.joined(separator: "; ") }
    package var kind: DeviceKind { members[0].kind }
    package var path: String { members[0].path }
    package var driver: String { members[0].driver }
    package var deviceNumber: DeviceNumber? { nil }
    package var width: Int { members[0].width }
    package var height: Int { members[0].height }
    package var format: PixelFormat { members[0].format }
    package var physicalSize: (width: Int, height: Int)? { members[0].physicalSize }
    package var panelOrientation: Rotation { members[0].panelOrientation }
    package var views: [any Display] { members.flatMap { $0.views } }
    package var isGone: Bool { members.allSatisfy { $0.isGone } }
    package var eventDescriptor: Int32? { nil }

    /// The first member's frame: the daemon draws the views, each through its own device.
    package func beginFrame() -> FrameTarget? { members[0].beginFrame() }
    package func present(damage: Rect) throws(DisplayError) { try members[0].present(damage: damage) }

    package func isPresent() -> Bool { members.contains { $0.isPresent() } }
    package func abandon() { for member in members { member.abandon() } }

    /// True when some member can take a frame now.
    @discardableResult
    package func handleEvents() -> Bool {
        var ready = false
        for member in members where member.handleEvents() { ready = true }
        return ready
    }

    package func release(keepingFrame: Bool) {
        for member in members { member.release(keepingFrame: keepingFrame) }
    }

    /// Every member taken back; the first failure is thrown once all were tried.
    package func acquire() throws(DisplayError) {
        try forEachMember { member throws(DisplayError) in try member.acquire() }
    }

    package func showAgain() throws(DisplayError) {
        try forEachMember { member throws(DisplayError) in try member.showAgain() }
    }

    package func close(retain: Bool) {
        for member in members { member.close(retain: retain) }
    }

    package func takeProblems() -> [String] { members.flatMap { $0.takeProblems() } }

    private func forEachMember(_ body: (any DeviceDisplay) throws(DisplayError) -> Void) throws(DisplayError) {
        var first: DisplayError?
        for member in members {
            do throws(DisplayError) {
                try body(member)
            } catch {
                if first == nil { first = error }
            }
        }
        if let first { throw first }
    }
}
