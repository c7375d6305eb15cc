/// Where the work the screen reports on stands; each state has its fill colour.
package enum RunState: String, Equatable, Sendable, CaseIterable {
    /// Nothing reported yet: the screen as it comes up, until the first progress.
    case begin
    case running
    case success
    case failure
}
