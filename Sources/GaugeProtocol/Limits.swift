/// Limits of the wire format.
package enum Limits {
    /// The longest request line in bytes, not counting its `\n`.
    package static let maxLineBytes = 4096
    /// Clients served at once unless the daemon is told otherwise.
    package static let defaultMaxClients = 64
}
