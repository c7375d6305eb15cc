import GaugeDaemon
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

    @Test func parsesTheGroupsLineOfProcStatus() {
        let status = """
            Name:\tgaugectl
            Umask:\t0022
            State:\tS (sleeping)
            Tgid:\t4242
            Uid:\t1000\t1000\t1000\t1000
            Gid:\t1000\t1000\t1000\t1000
            FDSize:\t64
            Groups:\t4 24 27 30 46 100 118 1000 
            NStgid:\t4242

            """
        #expect(ProcessStatus.groups(inStatus: Array(status.utf8)) == [4, 24, 27, 30, 46, 100, 118, 1000])
        #expect(ProcessStatus.groups(inStatus: Array("Name:\tx\nGroups:\t\nPid:\t1\n".utf8)) == [])
        #expect(ProcessStatus.groups(inStatus: Array("Name:\tx\n".utf8)) == nil)
        #expect(ProcessStatus.groups(inStatus: Array("Groups:\t1 x2\n".utf8)) == nil)
        #expect(ProcessStatus.groups(inStatus: Array("Groups:\t99999999999\n".utf8)) == nil)
    }

    @Test func readsTheGroupsOfARunningProcess() throws {
        let groups = try #require(ProcessStatus.supplementaryGroups(pid: getpid()))
        var expected = [gid_t](repeating: 0, count: 256)
        let count = getgroups(Int32(expected.count), &expected)
        #expect(Set(groups) == Set(expected.prefix(Int(count))))
        #expect(ProcessStatus.supplementaryGroups(pid: -1) == nil)
    }
}
