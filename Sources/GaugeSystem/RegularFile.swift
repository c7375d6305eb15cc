import CGaugeLinux

/// The one way a file someone named (a theme file, a logo, a font) is read: opened
/// non-blocking, without becoming a controlling terminal, close-on-exec (and without
/// following a symbolic link when asked), checked with `fstat` to be a regular file of at
/// most `maxBytes`, then read whole into memory (no more than its size at the check). A FIFO, a terminal or a device is refused
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
        package var size: Int
        var modified: Int64
        var modifiedNanoseconds: Int
    }

    package let path: String
    package let identity: Identity
    private let fd: Int32

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
        guard status.isType(S_IFREG) else {
            Syscall.close(fd)
            throw Error("\(path) is not a regular file")
        }
        // Compared as off_t: a file past 2 GiB does not fit a 32-bit Int.
        guard status.st_size <= maxBytes else {
            Syscall.close(fd)
            throw Error("\(path) is \(status.st_size) bytes, more than the \(maxBytes) allowed")
        }
        self.path = path
        self.fd = fd
        identity = Identity(
            device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int(status.st_size),
            modified: Int64(status.st_mtim.tv_sec), modifiedNanoseconds: Int(status.st_mtim.tv_nsec))
    }

    deinit { Syscall.close(fd) }

    /// The whole file, into memory `buffer` at least `identity.size` bytes long: the count
    /// read. A file that grew past the buffer meanwhile is refused.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(Error) -> Int {
        var count = 0
        while true {
            // With the buffer full, one more byte is asked for: the file must end there.
            var probe: UInt8 = 0
            let n: Int
            do throws(SystemError) {
                if count < buffer.count {
                    n = try Syscall.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[count...]), at: count)
                } else {
                    n = try withUnsafeMutableBytes(of: &probe) { raw throws(SystemError) in try Syscall.read(fd, into: raw, at: count) }
                }
            } catch {
                throw Error("cannot read \(path): \(error)")
            }
            if n == 0 { return count }
            guard count < buffer.count else { throw Error("\(path) grew while being read") }
            count += n
        }
    }

    /// Up to `buffer.count` bytes from `offset` on (one `pread`): the count read, 0 at
    /// the end. For readers that take what they need when they need it (FreeType).
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(Error) -> Int {
        do throws(SystemError) {
            return try Syscall.read(fd, into: buffer, at: offset)
        } catch {
            throw Error("cannot read \(path): \(error)")
        }
    }

    /// The whole file as an array.
    package func bytes() throws(Error) -> [UInt8] {
        var count = 0
        var failure: Error?
        let bytes = [UInt8](unsafeUninitializedCapacity: identity.size) { buffer, initialized in
            do throws(Error) {
                count = try read(into: UnsafeMutableRawBufferPointer(buffer))
            } catch {
                failure = error
            }
            initialized = count
        }
        if let failure { throw failure }
        return bytes
    }

    /// Opens and reads `path` in one step.
    package static func read(_ path: String, maxBytes: Int, followLinks: Bool = true) throws(Error) -> [UInt8] {
        try RegularFile(path, maxBytes: maxBytes, followLinks: followLinks).bytes()
    }
}
