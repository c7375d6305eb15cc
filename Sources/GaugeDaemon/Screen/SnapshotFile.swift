import CGaugeLinux
import GaugeProtocol
import GaugeSystem

/// Where a snapshot's PNG bytes go: into a file a client opened and passed (any allowed
/// peer), or into a path root named. The file is checked first, then the PNG encoded, then
/// the file's contents replaced; a failure never removes a file: the worst left behind is a partly written one after a
/// write error (a full disk).
enum SnapshotFile {
    /// Writes `png` over the contents of the regular file `fd` (which the caller closes).
    /// A pipe, socket, device or a file on a FUSE mount is refused: writing to them could
    /// block the daemon or reach something other than a file.
    static func write(
        _ png: () throws(ProtocolError) -> [UInt8], toPassed fd: Int32, name: String = "the file descriptor passed"
    ) throws(ProtocolError) {
        let mode: Int32
        let status: stat
        do throws(SystemError) {
            mode = try Syscall.fcntl(fd, F_GETFL) & O_ACCMODE
            status = try Syscall.fstat(fd)
        } catch {
            throw ProtocolError(.io, "\(name) cannot be used: \(error)")
        }
        guard status.isType(S_IFREG) else {
            throw ProtocolError(.io, "\(name) is not a regular file")
        }
        guard mode == O_WRONLY || mode == O_RDWR else {
            throw ProtocolError(.io, "\(name) is not open for writing")
        }
        guard !Syscall.isOnFUSE(fd) else {
            throw ProtocolError(.io, "\(name) is on a FUSE file system, which is not written to")
        }
        let png = try png()
        do throws(SystemError) {
            try Syscall.truncate(fd, length: 0)
            let written = png.withUnsafeBytes { bytes in Result { () throws(SystemError) in try Syscall.writeAll(fd, bytes, at: 0) } }
            try written.get()
        } catch {
            throw ProtocolError(.io, "cannot write the snapshot: \(error)")
        }
    }

    /// Creates or replaces the contents of the file at `path` (root's requests only). The
    /// last component is not followed if it is a symbolic link, and a FIFO or device there
    /// is refused without blocking.
    static func write(_ png: () throws(ProtocolError) -> [UInt8], toPath path: String) throws(ProtocolError) {
        let fd: Int32
        do throws(SystemError) {
            fd = try Syscall.open(path, flags: O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW, mode: 0o644)
        } catch {
            throw ProtocolError(.io, "cannot write the snapshot: \(error)")
        }
        defer { Syscall.close(fd) }
        try write(png, toPassed: fd, name: path)
    }

    /// `snapshot -`: into the file descriptor `client` passed with the line, closed after.
    static func write(_ png: () throws(ProtocolError) -> [UInt8], passedBy client: ClientConnection?) throws(ProtocolError) {
        guard let fd = client?.takePassedDescriptor() else {
            throw ProtocolError(.syntax, "snapshot - needs a file descriptor sent with the line (gaugectl snapshot FILE sends one)")
        }
        defer { Syscall.close(fd) }
        try write(png, toPassed: fd)
    }
}
