/// Why a display could not be created or used, in words fit for the log.
package struct DisplayError: Error, Equatable, Sendable, CustomStringConvertible {
    package var message: String

    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }
}
