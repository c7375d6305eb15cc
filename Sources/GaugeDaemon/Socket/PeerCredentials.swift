import CGaugeLinux
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
        var credentials = PeerCredentials(pid: 0, uid: 0, gid: 0)
        guard CGL_peer_credentials(fd, &credentials.pid, &credentials.uid, &credentials.gid) == 0 else {
            throw .current("getsockopt SO_PEERCRED")
        }
        credentials.groups = try? Syscall.peerGroups(fd)
        return credentials
    }

    package var description: String { "pid \(pid) uid \(uid) gid \(gid)" }
}
