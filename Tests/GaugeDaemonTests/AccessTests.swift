import GaugeDaemon
import GaugeProtocol
import Testing

/// The policy table of README "Access", rule by rule.
@Suite struct AccessTests {
    let root = Access(peer: PeerCredentials(pid: 1, uid: 0, gid: 0), daemonUID: 0)
    let member = Access(peer: PeerCredentials(pid: 2, uid: 1000, gid: 100), daemonUID: 0)
    let daemonUser = Access(peer: PeerCredentials(pid: 3, uid: 500, gid: 500), daemonUID: 500)

    private func theme(_ key: String, _ value: String = "/x") -> Request { .theme([ThemeSetting(key: key, value: value)]) }

    @Test func filesAreNamedByRootAndTheDaemonsUserOnly() {
        let naming: [Request] = [
            .snapshot(path: "/etc/x.png"), theme("logo"), theme("font"), theme("bold_font"), theme("fallback_fonts"),
            .theme([ThemeSetting(key: "fill_color", value: "#ff0000"), ThemeSetting(key: "logo", value: "")]),
        ]
        for request in naming {
            #expect(root.refusal(of: request) == nil)
            #expect(daemonUser.refusal(of: request) == nil)
            #expect(member.refusal(of: request)?.code == .denied, "\(request)")
            #expect(Access.compatInput.refusal(of: request)?.code == .denied)
        }
    }

    @Test func membersDriveTheScreen() {
        let driving: [Request] = [
            .progress(42, message: "m"), .message("x"), .title("t"), .mode(.indeterminate), .state(.success, message: nil),
            theme("fill_color", "#ff0000"), .reload, .show, .hide, .deactivate, .reactivate, .ping, .status, .wait,
            .snapshotToPassedFile, .quit(retain: false), .failure(title: "t"), .failureSummary("s"), .failureLine("l"),
            .failureClear,
        ]
        for request in driving { #expect(member.refusal(of: request) == nil, "\(request)") }
    }

    /// While root waits on the screen, nobody but root takes the screen from it, covers
    /// it, reads it off the screen or quits under it; the rest still drives the screen.
    @Test func whileRootWaitsTheScreenIsRoots() {
        let takingTheScreen: [Request] = [
            .hide, .deactivate, theme("fill_color", "#ff0000"), .reload, .snapshotToPassedFile, .quit(retain: false),
            .quit(retain: true),
        ]
        for request in takingTheScreen {
            #expect(root.refusal(of: request, rootWaits: true) == nil, "\(request)")
            #expect(Access.daemon.refusal(of: request, rootWaits: true) == nil)
            #expect(member.refusal(of: request, rootWaits: true)?.code == .denied, "\(request)")
            #expect(daemonUser.refusal(of: request, rootWaits: true)?.code == .denied, "\(request)")
            #expect(Access.compatInput.refusal(of: request, rootWaits: true)?.code == .denied, "\(request)")
            #expect(member.refusal(of: request) == nil, "\(request) once nothing waits")
        }
        let leavingIt: [Request] = [
            .progress(42, message: "m"), .message("x"), .title("t"), .mode(.indeterminate), .step("s"), .show,
            .reactivate, .ping, .status, .wait,
            // The failure screen's box is laid out apart from the question (the layout matrix).
            .failure(title: "t"), .failureSummary("s"), .failureLine("l"), .failureClear,
        ]
        for request in leavingIt { #expect(member.refusal(of: request, rootWaits: true) == nil, "\(request)") }
    }

    @Test func onlyRootAndTheDaemonsUserReportTheBootsJobs() {
        #expect(root.refusal(of: .jobs(50)) == nil)
        #expect(daemonUser.refusal(of: .jobs(50)) == nil)
        #expect(member.refusal(of: .jobs(50))?.code == .denied)
        #expect(Access.compatInput.refusal(of: .jobs(50))?.code == .denied)
    }

    @Test func onlyRootAndTheDaemonsUserDescribeUnits() {
        let describe = Request.describe(unit: "a.service", text: "A")
        #expect(root.refusal(of: describe) == nil && daemonUser.refusal(of: describe) == nil)
        #expect(member.refusal(of: describe)?.code == .denied)
        #expect(Access.compatInput.refusal(of: describe)?.code == .denied)
    }

    @Test func onlyRootMovesTheDaemonIntoANewRoot() {
        #expect(root.refusal(of: .newRoot(path: "/root")) == nil)
        #expect(Access.daemon.refusal(of: .newRoot(path: "/root")) == nil)
        #expect(daemonUser.refusal(of: .newRoot(path: "/root"))?.code == .denied)
        #expect(member.refusal(of: .newRoot(path: "/root"))?.code == .denied)
        #expect(Access.compatInput.refusal(of: .newRoot(path: "/root"))?.code == .denied)
    }
}
