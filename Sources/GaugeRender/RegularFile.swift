import Glibc

/// The one way a file someone named (a theme file, a logo, a font) is read: opened
/// non-blocking, without becoming a controlling terminal, close-on-exec (and without
/// following a symbolic link when asked), checked with `fstat` to be a regular file of at
/// most `maxBytes`, then read whole into memory. A FIFO, a terminal or a device is refused
/// at once instead of blocking the reader; the decoders then work on the bytes.
public final class RegularFile {
    public struct Error: Swift.Error, Equatable, Sendable, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// What `fstat` says about the contents: the same identity means the same file,
    /// unchanged (a cache key that needs no read).
    public struct Identity: Hashable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int
        var modified: Int
        var modifiedNanoseconds: Int
    }

    public let path: String
    public let identity: Identity
    private let fd: Int32
    private let maxBytes: Int

    /// Opens `path` and checks what it is; nothing is read yet.
    public init(_ path: String, maxBytes: Int, followLinks: Bool = true) throws(Error) {
        var flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC
        if !followLinks { flags |= O_NOFOLLOW }
        var fd: Int32
        repeat { fd = open(path, flags) } while fd < 0 && errno == EINTR
        guard fd >= 0 else {
            let code = errno
            throw Error(code == ELOOP && !followLinks
                ? "\(path) is a symbolic link, which is not followed here"
                : "cannot open \(path): \(String(cString: strerror(code)))")
        }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            let code = errno
            close(fd)
            throw Error("cannot stat \(path): \(String(cString: strerror(code)))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw Error("\(path) is not a regular file")
        }
        guard Int(status.st_size) <= maxBytes else {
            close(fd)
            throw Error("\(path) is \(status.st_size) bytes, more than the \(maxBytes) allowed")
        }
        self.path = path
        self.fd = fd
        self.maxBytes = maxBytes
        identity = Identity(
            device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int(status.st_size),
            modified: Int(status.st_mtim.tv_sec), modifiedNanoseconds: Int(status.st_mtim.tv_nsec))
    }

    deinit { close(fd) }

    /// The whole file (a file that grew past `maxBytes` meanwhile is refused).
    public func bytes() throws(Error) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: identity.size + 1)
        var count = 0
        while true {
            if count == bytes.count {
                guard count <= maxBytes else { throw Error("\(path) grew past \(maxBytes) bytes while being read") }
                bytes += [UInt8](repeating: 0, count: min(max(4096, count), maxBytes + 1 - count))
            }
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + count, $0.count - count, off_t(count)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Error("cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            count += n
        }
        bytes.removeLast(bytes.count - count)
        return bytes
    }

    /// Opens and reads `path` in one step.
    public static func read(_ path: String, maxBytes: Int, followLinks: Bool = true) throws(Error) -> [UInt8] {
        try RegularFile(path, maxBytes: maxBytes, followLinks: followLinks).bytes()
    }
}
