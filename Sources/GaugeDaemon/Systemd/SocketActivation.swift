import CGaugeLinux
import GaugeProtocol
import GaugeSystem

/// systemd socket activation (`sd_listen_fds(3)`): the sockets systemd passes start at
/// descriptor 3 and are announced by `LISTEN_PID` (must be this process) and `LISTEN_FDS`
/// (how many).
package enum SocketActivation {
    static let firstDescriptor: Int32 = 3

    /// The passed descriptors according to the two variables' values; empty when they are
    /// missing, malformed, or meant for another process (a parent that did not unset them).
    package static func descriptors(listenPID: String?, listenFDs: String?, ownPID: Int32) -> Range<Int32> {
        guard let pid = decimal(listenPID), pid == Int64(ownPID),
            let count = decimal(listenFDs), count > 0, count <= 1024
        else { return firstDescriptor..<firstDescriptor }
        return firstDescriptor..<(firstDescriptor + Int32(count))
    }

    /// Reads the passed descriptors from the environment and unsets `LISTEN_PID`,
    /// `LISTEN_FDS` and `LISTEN_FDNAMES`, so processes the daemon starts do not see them.
    static func takeFromEnvironment() -> Range<Int32> {
        let result = descriptors(
            listenPID: environment("LISTEN_PID"), listenFDs: environment("LISTEN_FDS"), ownPID: getpid()
        )
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
        return result
    }

    static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// A plain non-negative decimal: digits only, no sign, no spaces.
    private static func decimal(_ text: String?) -> Int64? {
        text.flatMap { DecimalDigits.value($0) }
    }
}
