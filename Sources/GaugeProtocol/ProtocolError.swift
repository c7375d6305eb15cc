/// The error codes of an `err` reply (docs/protocol.md lists when each is sent).
package enum ErrorCode: String, Sendable, CaseIterable {
    case syntax, unknown, range, utf8, toolong, denied, state, io
}

/// A request the daemon refuses, with the line it sends back.
package struct ProtocolError: Error, Equatable, Sendable {
    package var code: ErrorCode
    package var message: String

    package init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }
}
