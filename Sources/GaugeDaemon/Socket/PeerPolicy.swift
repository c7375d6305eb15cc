import CGaugeLinux

/// Who may talk to the daemon (README "Access"): root, the daemon's own user, and members of the
/// configured group — by primary group or as a supplementary group of the peer process.
package struct PeerPolicy: Sendable {
    package var daemonUID: UInt32
    package var groupID: UInt32?

    package init(daemonUID: UInt32 = geteuid(), groupID: UInt32? = nil) {
        self.daemonUID = daemonUID
        self.groupID = groupID
    }

    /// `supplementaryGroups` is asked only when the peer's uid and primary gid do not
    /// already decide; nil (process gone, /proc unreadable) counts as no groups.
    package func allows(_ peer: PeerCredentials, supplementaryGroups: (Int32) -> [UInt32]?) -> Bool {
        if peer.uid == 0 || peer.uid == daemonUID { return true }
        guard let groupID else { return false }
        if peer.gid == groupID { return true }
        return supplementaryGroups(peer.pid)?.contains(groupID) ?? false
    }

    /// Uses the supplementary groups the kernel recorded for the peer's socket
    /// (`PeerCredentials.groups`, from `SO_PEERGROUPS`).
    package func allows(_ peer: PeerCredentials) -> Bool {
        allows(peer, supplementaryGroups: { _ in peer.groups })
    }

    /// Root and the daemon's own user: they may take the connection slots kept in reserve.
    package func isPrivileged(_ peer: PeerCredentials) -> Bool {
        peer.uid == 0 || peer.uid == daemonUID
    }
}

extension PeerPolicy {
    /// The id of `--group` (`name`), whose members may drive the daemon.
    static func groupID(named name: String?) throws(DaemonError) -> UInt32? {
        try name.map { name throws(DaemonError) in
            guard let entry = getgrnam(name) else { throw DaemonError("unknown group '\(name)'") }
            return UInt32(entry.pointee.gr_gid)
        }
    }
}
