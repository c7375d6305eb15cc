import CGaugeLinux

/// A failed system call: the `errno` it left and the operation that failed, so a log line
/// says what was attempted ("bind /run/gauge/gauged.sock: Address already in use").
package struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    package var errno: Int32
    package var operation: String

    package init(_ operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    /// The error the last failed call left in `errno`.
    package static func current(_ operation: String) -> SystemError {
        SystemError(operation, errno: CGL_errno())
    }

    package var description: String {
        "\(operation): \(errnoText(errno))"
    }

    /// The peer went away: nothing to report beyond closing the connection.
    package var isDisconnect: Bool {
        errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN || errno == ECONNABORTED
    }
}

/// The C library's text for error number `code` ("No such file or directory"): the one
/// way every message names an errno.
package func errnoText(_ code: Int32 = CGL_errno()) -> String {
    String(cString: CGL_strerror(code))
}
