/// Where the work the screen reports on stands (SPEC §1, the alert-style states).
package enum RunState: String, Equatable, Sendable, CaseIterable {
    case running
    case success
    case failure
}
