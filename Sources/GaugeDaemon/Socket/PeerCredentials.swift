import CGaugeLinux
import Glibc
import GaugeSystem

/// Who is on the other end of a Unix socket, as the kernel recorded it at `connect`
/// (`SO_PEERCRED`).
package struct PeerCredentials: Equatable, Sendable, CustomStringConvertible {
    package var pid: Int32
    package var uid: UInt32
    package var gid: UInt32

    package init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    package static func of(socket fd: Int32) throws(SystemError) -> PeerCredentials {
        var credentials = PeerCredentials(pid: 0, uid: 0, gid: 0)
        guard CGL_peer_credentials(fd, &credentials.pid, &credentials.uid, &credentials.gid) == 0 else {
            throw .current("getsockopt SO_PEERCRED")
        }
        return credentials
    }

    package var description: String { "pid \(pid) uid \(uid) gid \(gid)" }
}
