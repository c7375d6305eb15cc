import CGaugeLinux
import GaugeSystem

/// `sd_notify(3)` without libsystemd: one datagram per state change to the socket named
/// by `$NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace). Never blocks: if
/// the socket is full the message is dropped and the error reported.
package struct SystemdNotify: Sendable {
    package let address: UnixSocketAddress

    /// nil when `socketPath` is missing or not a usable address.
    package init?(socketPath: String?) {
        guard let socketPath, let first = socketPath.utf8.first,
            first == UInt8(ascii: "/") || first == UInt8(ascii: "@"),
            let address = try? UnixSocketAddress(socketPath)
        else { return nil }
        self.address = address
    }

    /// From `$NOTIFY_SOCKET`; nil when the daemon does not run under systemd.
    package static func fromEnvironment() -> SystemdNotify? {
        SystemdNotify(socketPath: SocketActivation.environment("NOTIFY_SOCKET"))
    }

    /// Sends one notification, e.g. `READY=1` or several `KEY=value` lines.
    package func send(_ state: String) throws(SystemError) {
        let fd = try Syscall.socket(domain: CGL_AF_UNIX, type: CGL_SOCK_DGRAM | CGL_SOCK_NONBLOCK)
        defer { Syscall.close(fd) }
        let result = Array(state.utf8).withUnsafeBytes { bytes in
            Result { () throws(SystemError) in try Syscall.sendTo(fd, bytes, address: address) }
        }
        if try result.get() == nil { throw SystemError("sendto \(address.path)", errno: EAGAIN) }
    }

    package func ready() throws(SystemError) { try send("READY=1") }

    package func stopping() throws(SystemError) { try send("STOPPING=1") }

    /// A one-line status for `systemctl status`; line breaks become spaces.
    package func status(_ text: String) throws(SystemError) {
        try send("STATUS=" + String(text.map { $0.isNewline ? " " : $0 }))
    }
}
