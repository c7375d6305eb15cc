import Glibc
import Testing

@testable import GaugeSystem

/// The seam every module's fault tests go through (`SyscallFaults`): a planned failure
/// replaces the call, `EINTR` is retried, `EAGAIN` is "not now", anything else names the call.
@Suite struct SyscallFaultTests {
    private func pipeWith(_ text: String) throws -> [Int32] {
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        try Syscall.makeNonBlockingAndCloseOnExec(fds[0])
        _ = Array(text.utf8).withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
        return fds
    }

    /// One `Syscall.read` of up to 16 bytes: the count (nil: nothing yet) and the bytes.
    private func readOnce(_ fd: Int32) throws(SystemError) -> (Int?, [UInt8]) {
        var buffer = [UInt8](repeating: 0, count: 16)
        let result = buffer.withUnsafeMutableBytes { raw in
            Result { () throws(SystemError) in try Syscall.read(fd, into: raw) }
        }
        let count = try result.get()
        return (count, Array(buffer.prefix(count ?? 0)))
    }

    @Test func interruptedCallsAreRetried() throws {
        let fds = try pipeWith("data")
        defer { fds.forEach(Syscall.close) }
        let plan = SyscallFaults(["read": [EINTR, EINTR]])
        let (count, bytes) = try SyscallFaults.$current.withValue(plan) { try readOnce(fds[0]) }
        #expect(count == 4 && bytes == Array("data".utf8))
        #expect(plan.injected.map(\.errno) == [EINTR, EINTR])
        #expect(plan.remainingCount == 0)
    }

    @Test func wouldBlockIsNotAnErrorAndOtherErrorsNameTheCall() throws {
        let fds = try pipeWith("x")
        defer { fds.forEach(Syscall.close) }
        let plan = SyscallFaults(["read": [EAGAIN, EIO]])
        try SyscallFaults.$current.withValue(plan) { () throws in
            #expect(try readOnce(fds[0]).0 == nil)
            #expect(throws: SystemError("read", errno: EIO)) { try readOnce(fds[0]) }
            #expect(try readOnce(fds[0]).0 == 1, "the plan used up, the real call runs")
        }
        #expect(try readOnce(fds[0]).0 == nil, "outside the plan: a real EAGAIN")
    }

    @Test func aPlanIsSeenOnlyWhereItIsBound() async throws {
        let plan = SyscallFaults(["open": [EACCES]])
        let outside = Task { () -> Bool in
            guard let fd = try? Syscall.open("/dev/null", flags: O_RDONLY) else { return false }
            Syscall.close(fd)
            return true
        }
        SyscallFaults.$current.withValue(plan) {
            #expect(throws: SystemError.self) { try Syscall.open("/dev/null", flags: O_RDONLY) }
        }
        #expect(await outside.value, "a task with no plan bound opens as usual")
        #expect(plan.injected.map(\.name) == ["open"])
    }
}
