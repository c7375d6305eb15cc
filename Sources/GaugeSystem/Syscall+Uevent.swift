import CGaugeLinux

extension Syscall {
    /// A non-blocking socket on the kernel's device events (`NETLINK_KOBJECT_UEVENT`).
    package static func ueventSocket() throws(SystemError) -> Int32 {
        try retrying("socket", "netlink uevent socket", { CGL_uevent_socket() })
    }

    /// Receives one datagram without blocking: its length (cut to the buffer) and whether
    /// the kernel sent it; nil when nothing is waiting. `ENOBUFS` (the kernel dropped
    /// events because the queue was full) is thrown like any other error.
    package static func receiveUevent(
        _ fd: Int32, into buffer: UnsafeMutableRawBufferPointer
    ) throws(SystemError) -> (count: Int, fromKernel: Bool)? {
        var fromKernel: Int32 = 0
        guard let count = try nonBlocking("recvfrom", "recvfrom uevent", {
            CGL_uevent_receive(fd, buffer.baseAddress, buffer.count, &fromKernel)
        }) else { return nil }
        return (count, fromKernel != 0)
    }
}
