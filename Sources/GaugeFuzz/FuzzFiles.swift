import CGaugeLinux
import GaugeSystem

/// Reading and writing the inputs the fuzzers save and replay.
package enum FuzzFiles {
    /// The bytes of the file at `path` (at most 16 MiB).
    package static func read(_ path: String) throws -> [UInt8] {
        try RegularFile.read(path, maxBytes: 16 << 20)
    }

    /// Writes `bytes` to a new or truncated file at `path`.
    package static func write(_ bytes: [UInt8], to path: String) throws {
        let fd = try Syscall.open(path, flags: O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode: 0o644)
        defer { Syscall.close(fd) }
        var offset = 0
        while offset < bytes.count {
            guard let written = try bytes[offset...].withUnsafeBytes({ try Syscall.write(fd, $0) }), written > 0 else {
                throw SystemError("write \(path)", errno: EIO)
            }
            offset += written
        }
    }
}
