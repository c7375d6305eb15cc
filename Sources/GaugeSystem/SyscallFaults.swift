/// The seam through which tests make system calls fail: while a plan is bound
/// (`SyscallFaults.$current.withValue(plan) { … }`), each call made through `Syscall` whose
/// name is in the plan fails with the next `errno` listed for it, without being made; once
/// its list is used up the real call runs again. Names are the system calls' own
/// (`read`, `accept`, `open`, `epoll_wait`, …).
///
/// Bound per task, so tests running side by side do not see each other's plans. The
/// Embedded Swift build (tools/build-release), which has no task-local values and runs no
/// unit tests, has no seam: there `current` is always nil.
package final class SyscallFaults: @unchecked Sendable {
    #if hasFeature(Embedded)
        package static var current: SyscallFaults? { nil }
    #else
        @TaskLocal package static var current: SyscallFaults?
    #endif

    private var pending: [String: [Int32]]
    /// The failures injected so far, in order: name and errno.
    package private(set) var injected: [(name: String, errno: Int32)] = []

    package init(_ pending: [String: [Int32]]) {
        self.pending = pending
    }

    /// Failures still to inject.
    package var remainingCount: Int { pending.values.reduce(0) { $0 + $1.count } }

    func take(_ name: StaticString) -> Int32? {
        let key = name.description
        guard var list = pending[key], !list.isEmpty else { return nil }
        let error = list.removeFirst()
        pending[key] = list
        injected.append((key, error))
        return error
    }
}
