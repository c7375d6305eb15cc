/// Why a display could not be created or used, in words fit for the log.
public struct DisplayError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
