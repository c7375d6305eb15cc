import CGaugeLinux

/// The calls behind descriptor passing and snapshot files, the same way as `Syscall`
/// (and through its `SyscallFaults` seam): retried on `EINTR`, failures thrown as a
/// `SystemError` naming the operation.
extension Syscall {
    /// Reads like `read` and also takes the descriptors sent with those bytes
    /// (SCM_RIGHTS, close-on-exec), appending them to `descriptors`. The count read, 0 at
    /// end of file, nil if nothing is available yet.
    package static func receive(
        _ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, descriptors: inout [Int32]
    ) throws(SystemError) -> Int? {
        var passed = [Int32](repeating: -1, count: 8)
        var passedCount: Int32 = 0
        let count = try nonBlocking("recvmsg", "recvmsg") {
            passed.withUnsafeMutableBufferPointer {
                CGL_recv_with_descriptors(fd, buffer.baseAddress, buffer.count, $0.baseAddress, Int32($0.count), &passedCount)
            }
        }
        guard let count else { return nil }
        descriptors += passed.prefix(Int(passedCount))
        return count
    }

    /// Reads at most `buffer.count` bytes at `offset` of a file: the count read, 0 at its end.
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(SystemError) -> Int {
        try retrying("pread", "read") { CGaugeLinux.pread(fd, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    /// A kernel file's text (`/proc`, `/sys`: their size is not known before the read), one
    /// read of at most `maxBytes`, without a trailing newline; nil where it cannot be read.
    package static func kernelText(_ path: String, maxBytes: Int) -> String? {
        guard let fd = try? open(path, flags: O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: maxBytes)
        guard let count = bytes.withUnsafeMutableBytes({ buffer in (try? read(fd, into: buffer)) ?? nil }) else { return nil }
        var text = bytes[..<count]
        if text.last == UInt8(ascii: "\n") { text = text.dropLast() }
        return String(decoding: text, as: UTF8.self)
    }

    package static func truncate(_ fd: Int32, length: Int) throws(SystemError) {
        _ = try retrying("ftruncate", "ftruncate") { CGaugeLinux.ftruncate(fd, off_t(length)) }
    }

    /// Writes all of `bytes` at `offset` of a regular file (whose writes do not stop short
    /// for lack of room in a buffer, only for a full disk or a signal).
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int) throws(SystemError) {
        var done = 0
        while done < bytes.count {
            let count = try retrying("pwrite", "write") {
                CGaugeLinux.pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset + done))
            }
            if count == 0 { throw SystemError("write", errno: ENOSPC) }
            done += count
        }
    }

    /// The descriptor is on a FUSE file system, whose server (any user's program) may
    /// never answer a write.
    package static func isOnFUSE(_ fd: Int32) -> Bool { CGL_is_on_fuse(fd) != 0 }
}
