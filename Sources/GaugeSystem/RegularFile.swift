import Glibc

/// The one way a file someone named (a theme file, a logo, a font) is read: opened
/// non-blocking, without becoming a controlling terminal, close-on-exec (and without
/// following a symbolic link when asked), checked with `fstat` to be a regular file of at
/// most `maxBytes`, then read whole into memory. A FIFO, a terminal or a device is refused
/// at once instead of blocking the reader; the decoders then work on the bytes.
package final class RegularFile {
    package struct Error: Swift.Error, Equatable, Sendable, CustomStringConvertible {
        package let description: String
        package init(_ description: String) { self.description = description }
    }

    /// What `fstat` says about the contents: the same identity means the same file,
    /// unchanged (a cache key that needs no read).
    package struct Identity: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int
        var modified: Int
        var modifiedNanoseconds: Int
    }

    package let path: String
    package let identity: Identity
    private let fd: Int32
    private let maxBytes: Int

    /// Opens `path` and checks what it is; nothing is read yet.
    package init(_ path: String, maxBytes: Int, followLinks: Bool = true) throws(Error) {
        var flags = O_RDONLY | O_NONBLOCK | O_NOCTTY
        if !followLinks { flags |= O_NOFOLLOW }
        let fd: Int32
        let status: stat
        do throws(SystemError) {
            fd = try Syscall.open(path, flags: flags)
        } catch {
            throw Error(error.errno == ELOOP && !followLinks
                ? "\(path) is a symbolic link, which is not followed here"
                : "cannot \(error)")
        }
        do throws(SystemError) {
            status = try Syscall.fstat(fd)
        } catch {
            Syscall.close(fd)
            throw Error("cannot stat \(path): \(error)")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            Syscall.close(fd)
            throw Error("\(path) is not a regular file")
        }
        guard Int(status.st_size) <= maxBytes else {
            Syscall.close(fd)
            throw Error("\(path) is \(status.st_size) bytes, more than the \(maxBytes) allowed")
        }
        self.path = path
        self.fd = fd
        self.maxBytes = maxBytes
        identity = Identity(
            device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int(status.st_size),
            modified: Int(status.st_mtim.tv_sec), modifiedNanoseconds: Int(status.st_mtim.tv_nsec))
    }

    deinit { Syscall.close(fd) }

    /// The whole file (a file that grew past `maxBytes` meanwhile is refused).
    package func bytes() throws(Error) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: identity.size + 1)
        var count = 0
        while true {
            if count == bytes.count {
                guard count <= maxBytes else { throw Error("\(path) grew past \(maxBytes) bytes while being read") }
                bytes += [UInt8](repeating: 0, count: min(max(4096, count), maxBytes + 1 - count))
            }
            let result = bytes.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemError) in
                    try Syscall.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[count...]), at: count)
                }
            }
            let n: Int
            do throws(SystemError) {
                n = try result.get()
            } catch {
                throw Error("cannot read \(path): \(error)")
            }
            if n == 0 { break }
            count += n
        }
        bytes.removeLast(bytes.count - count)
        return bytes
    }

    /// Opens and reads `path` in one step.
    package static func read(_ path: String, maxBytes: Int, followLinks: Bool = true) throws(Error) -> [UInt8] {
        try RegularFile(path, maxBytes: maxBytes, followLinks: followLinks).bytes()
    }
}
