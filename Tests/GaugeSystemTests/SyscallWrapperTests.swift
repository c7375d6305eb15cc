import Glibc
import Testing

@testable import GaugeSystem

/// The wrappers that took over calls modules used to make themselves: each answers what
/// the C call does, and goes through the fault seam.
@Suite struct SyscallWrapperTests {
    @Test func aTerminalIsToldFromAPipeAndAFile() throws {
        let pty = try Syscall.open("/dev/ptmx", flags: O_RDWR | O_NOCTTY)
        defer { Syscall.close(pty) }
        var pipeEnds: [Int32] = [-1, -1]
        try #require(pipe(&pipeEnds) == 0)
        defer { pipeEnds.forEach(Syscall.close) }
        let file = try Syscall.open("/dev/null", flags: O_RDONLY)
        defer { Syscall.close(file) }
        #expect(Syscall.isTerminal(pty))
        #expect(!Syscall.isTerminal(pipeEnds[0]) && !Syscall.isTerminal(file))
        #expect(!Syscall.isTerminal(-1))
        let plan = SyscallFaults(["tcgetattr": [EIO]])
        SyscallFaults.$current.withValue(plan) { #expect(!Syscall.isTerminal(pty)) }
        #expect(plan.remainingCount == 0)
    }

    @Test func aSocketsPeerIsThisProcess() throws {
        var ends: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { ends.forEach(Syscall.close) }
        let peer = try Syscall.peerCredentials(ends[0])
        #expect(peer.pid == getpid() && peer.uid == geteuid() && peer.gid == getegid())
        let plan = SyscallFaults(["getsockopt": [EBADF]])
        SyscallFaults.$current.withValue(plan) {
            #expect(throws: SystemError("getsockopt SO_PEERCRED", errno: EBADF)) { try Syscall.peerCredentials(ends[0]) }
        }
    }

    @Test func theCurrentDirectoryIsGetcwds() throws {
        let expected = try #require(getcwd(nil, 0))
        defer { free(expected) }
        #expect(try Syscall.currentDirectory() == String(cString: expected))
        let plan = SyscallFaults(["getcwd": [ENOENT]])
        SyscallFaults.$current.withValue(plan) {
            #expect(throws: SystemError("getcwd", errno: ENOENT)) { try Syscall.currentDirectory() }
        }
    }
}
