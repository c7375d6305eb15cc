import GaugeSystem
#if canImport(Glibc)
    import Glibc
#endif

/// A failed system call in the compatibility inputs (FIFO, Plymouth socket), with what
/// was being done: "mkfifo /run/psplash_fifo: Permission denied".
package struct CompatSystemError: Error, Equatable, Sendable, CustomStringConvertible {
    package var operation: String
    package var errno: Int32

    package init(_ operation: String, errno code: Int32) {
        self.operation = operation
        self.errno = code
    }

    static func last(_ operation: String) -> CompatSystemError {
        CompatSystemError(operation, errno: Glibc.errno)
    }

    package var description: String {
        "\(operation): \(String(cString: strerror(errno)))"
    }
}
