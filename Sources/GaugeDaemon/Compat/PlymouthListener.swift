import GaugeSystem
#if canImport(Glibc)
    import Glibc
#endif

/// The listening socket Plymouth clients connect to: the abstract Unix socket
/// `/org/freedesktop/plymouthd` (the `plymouth` command, libply-boot-client, systemd).
///
/// The name is abstract (first byte of `sun_path` NUL) and *trimmed*: the address
/// length is `offsetof(sun_path) + 1 + strlen(name)`, with no trailing NULs, as
/// plymouthd binds it and as the client connects (a full-length `sockaddr_un` would be a
/// different name). Abstract names belong to the network namespace, not the file
/// system: no file to create or remove, and a second server in the same namespace gets
/// `EADDRINUSE`.
///
/// Watch `fd` for `EPOLLIN`, then call `accept()` until it returns nil; give each
/// connection a `PlymouthSession`, watch it for `EPOLLIN`, feed what it reads to the
/// session and write the session's reply bytes back; close it on EOF.
package final class PlymouthListener {
    package static let socketName = "/org/freedesktop/plymouthd"

    package let name: String
    /// The listening socket: non-blocking, close-on-exec.
    package let fd: Int32
    private var isOpen = true

    package init(name: String = PlymouthListener.socketName, backlog: Int32 = 16) throws(CompatSystemError) {
        self.name = name
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(name.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else {
            throw CompatSystemError("abstract socket name '\(name)'", errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw[0] = 0
            raw.baseAddress!.advanced(by: 1).copyMemory(from: bytes, byteCount: bytes.count)
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + 1 + bytes.count)
        let kind = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let fd = socket(AF_UNIX, kind, 0)
        guard fd >= 0 else { throw CompatSystemError.last("socket for @\(name)") }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else {
            let error = CompatSystemError.last("bind @\(name)")
            Glibc.close(fd)
            throw error
        }
        guard listen(fd, backlog) == 0 else {
            let error = CompatSystemError.last("listen @\(name)")
            Glibc.close(fd)
            throw error
        }
        self.fd = fd
    }

    deinit { close() }

    /// A waiting connection (non-blocking, close-on-exec), or nil when none waits.
    package func accept() throws(CompatSystemError) -> Int32? {
        while true {
            // accept4 is hidden behind _GNU_SOURCE; the flags are two fcntl calls.
            let client = Glibc.accept(fd, nil, nil)
            if client >= 0 {
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
                return client
            }
            switch errno {
            case EINTR: continue
            case EAGAIN, ECONNABORTED: return nil
            default: throw CompatSystemError.last("accept @\(name)")
            }
        }
    }

    package func close() {
        guard isOpen else { return }
        isOpen = false
        Glibc.close(fd)
    }
}
