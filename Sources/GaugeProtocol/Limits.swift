/// Limits of the wire format.
package enum Limits {
    /// The longest request line in bytes, not counting its `\n`.
    package static let maxLineBytes = 4096
    /// Clients served at once unless the daemon is told otherwise.
    package static let defaultMaxClients = 64
    /// The failure screen's detail lines the daemon keeps (`failure-line`): past either
    /// bound the oldest go, so no client grows the daemon's memory without bound.
    package static let maxFailureLines = 200
    /// The most bytes (UTF-8) the failure screen's detail lines keep together.
    package static let maxFailureBytes = 32 * 1024
    /// The longest text one `failure-line` request carries: a request line less the
    /// command word and its space. `gaugectl failure` cuts longer lines there.
    package static let maxFailureTextBytes = maxLineBytes - "failure-summary ".utf8.count
}
