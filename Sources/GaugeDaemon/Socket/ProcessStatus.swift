import Glibc
import GaugeSystem

/// Reading `/proc/<pid>/status`, for the supplementary groups of a peer process
/// (`SO_PEERCRED` gives only the primary group).
package enum ProcessStatus {
    /// The file is about 1.5 KB; a `Groups:` line with the kernel's maximum of 65536 groups
    /// is under 1 MiB.
    private static let maxBytes = 1 << 20

    package static func supplementaryGroups(pid: Int32) -> [UInt32]? {
        guard pid > 0, let text = readFile("/proc/\(pid)/status") else { return nil }
        return groups(inStatus: text)
    }

    /// The numbers of the `Groups:` line (tab- or space-separated decimals), nil if the
    /// text has no such line or it holds something else.
    package static func groups(inStatus text: [UInt8]) -> [UInt32]? {
        let key = Array("Groups:".utf8)
        var lineStart = 0
        while lineStart < text.count {
            let lineEnd = text[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? text.count
            if text[lineStart..<lineEnd].starts(with: key) {
                return numbers(text[(lineStart + key.count)..<lineEnd])
            }
            lineStart = lineEnd + 1
        }
        return nil
    }

    private static func numbers(_ bytes: ArraySlice<UInt8>) -> [UInt32]? {
        var result: [UInt32] = []
        var current: UInt64?
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let value = (current ?? 0) * 10 + UInt64(byte - UInt8(ascii: "0"))
                guard value <= UInt64(UInt32.max) else { return nil }
                current = value
            case UInt8(ascii: " "), UInt8(ascii: "\t"):
                if let value = current { result.append(UInt32(value)) }
                current = nil
            default:
                return nil
            }
        }
        if let value = current { result.append(UInt32(value)) }
        return result
    }

    /// The whole of a small file, nil if it cannot be read.
    static func readFile(_ path: String) -> [UInt8]? {
        guard let fd = try? Syscall.open(path, flags: O_RDONLY) else { return nil }
        defer { Syscall.close(fd) }
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while contents.count < maxBytes {
            let count = chunk.withUnsafeMutableBytes { try? Syscall.read(fd, into: $0) }
            guard let count else { return nil }  // an error (or EAGAIN, which /proc never gives)
            if count == 0 { return contents }
            contents += chunk[..<count]
        }
        return nil
    }
}
