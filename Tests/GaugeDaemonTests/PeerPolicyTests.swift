import GaugeDaemon
import GaugeSystem
import Glibc
import Testing

@Suite struct PeerPolicyTests {
    let policy = PeerPolicy(daemonUID: 500, groupID: 42)

    private func noGroups(_ pid: Int32) -> [UInt32]? {
        Issue.record("supplementary groups looked up needlessly")
        return nil
    }

    @Test func rootAndTheDaemonsUserAreAllowed() {
        #expect(policy.allows(PeerCredentials(pid: 1, uid: 0, gid: 0), supplementaryGroups: noGroups))
        #expect(policy.allows(PeerCredentials(pid: 2, uid: 500, gid: 500), supplementaryGroups: noGroups))
    }

    @Test func membersOfTheGroupAreAllowed() {
        #expect(policy.allows(PeerCredentials(pid: 3, uid: 1000, gid: 42), supplementaryGroups: noGroups))
        #expect(policy.allows(PeerCredentials(pid: 4, uid: 1000, gid: 1000)) { pid in pid == 4 ? [24, 42, 100] : nil })
    }

    @Test func othersAreRefused() {
        #expect(!policy.allows(PeerCredentials(pid: 5, uid: 1000, gid: 1000)) { _ in [24, 100] })
        #expect(!policy.allows(PeerCredentials(pid: 6, uid: 1000, gid: 1000)) { _ in nil })
        let noGroup = PeerPolicy(daemonUID: 500, groupID: nil)
        #expect(!noGroup.allows(PeerCredentials(pid: 7, uid: 1000, gid: 42), supplementaryGroups: noGroups))
    }

    @Test func peerGroupsComeFromTheKernelNotFromProc() throws {
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[0]); close(pair[1]) }
        var expected = [gid_t](repeating: 0, count: 256)
        let count = getgroups(Int32(expected.count), &expected)
        let peer = try PeerCredentials.of(socket: pair[0])
        #expect(peer.pid == getpid())
        #expect(Set(try #require(peer.groups)) == Set(expected.prefix(Int(count))))
        #expect(peer.groups == (try Syscall.peerGroups(pair[0])))
    }

    @Test func thePeersRecordedGroupsDecide() {
        #expect(policy.allows(PeerCredentials(pid: 4, uid: 1000, gid: 1000, groups: [24, 42])))
        #expect(!policy.allows(PeerCredentials(pid: 4, uid: 1000, gid: 1000, groups: [24])))
        #expect(!policy.allows(PeerCredentials(pid: 4, uid: 1000, gid: 1000, groups: nil)))
    }

    @Test func onlyRootAndTheDaemonsUserArePrivileged() {
        #expect(policy.isPrivileged(PeerCredentials(pid: 1, uid: 0, gid: 0)))
        #expect(policy.isPrivileged(PeerCredentials(pid: 1, uid: 500, gid: 500)))
        #expect(!policy.isPrivileged(PeerCredentials(pid: 1, uid: 1000, gid: 42)))
    }
}
