import CGaugeLinux

/// An `AF_UNIX` address: a filesystem path, or an abstract name written `@name`
/// (the notation of `$NOTIFY_SOCKET` and of `ss -x`).
package struct UnixSocketAddress: Sendable {
    /// The address as given, for messages.
    package let path: String
    private let storage: sockaddr_un
    private let length: socklen_t

    package var isAbstract: Bool { path.utf8.first == UInt8(ascii: "@") }

    /// Fails with `ENAMETOOLONG` if the path does not fit a `sockaddr_un`, `EINVAL` if empty.
    package init(_ path: String) throws(SystemError) {
        var bytes = Array(path.utf8)
        guard !bytes.isEmpty, !bytes.contains(0) else { throw SystemError("socket address \(path)", errno: EINVAL) }
        if bytes[0] == UInt8(ascii: "@") { bytes[0] = 0 }
        var address = sockaddr_un()
        let length = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { CGL_sockaddr_un_init(&address, $0.baseAddress, $0.count) }
        }
        guard length > 0 else { throw SystemError("socket address \(path)", errno: ENAMETOOLONG) }
        self.path = path
        self.storage = address
        self.length = length
    }

    package func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        withUnsafePointer(to: storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}
