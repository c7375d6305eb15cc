import GaugeSystem

/// Who is on the other end of a Unix socket, as the kernel recorded it at `connect`
/// (`SO_PEERCRED`, `SO_PEERGROUPS`): nothing read from /proc, so no race with the peer
/// exiting and another process taking its pid.
package struct PeerCredentials: Equatable, Sendable, CustomStringConvertible {
    package var pid: Int32
    package var uid: UInt32
    package var gid: UInt32
    /// Supplementary groups (`SO_PEERGROUPS`); nil when the kernel could not say.
    package var groups: [UInt32]?

    package init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32]? = nil) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }

    package static func of(socket fd: Int32) throws(SystemError) -> PeerCredentials {
        let (pid, uid, gid) = try Syscall.peerCredentials(fd)
        return PeerCredentials(pid: pid, uid: uid, gid: gid, groups: try? Syscall.peerGroups(fd))
    }

    package var description: String { "pid \(pid) uid \(uid) gid \(gid)" }
}
