import GaugeDaemon
import Glibc
import Testing
import GaugeSystem
import GaugeTestSupport

@Suite struct SystemdTests {
    @Test func socketActivationNeedsOurPidAndACount() {
        let pid: Int32 = 4242
        #expect(SocketActivation.descriptors(listenPID: "4242", listenFDs: "1", ownPID: pid) == 3..<4)
        #expect(SocketActivation.descriptors(listenPID: "4242", listenFDs: "2", ownPID: pid) == 3..<5)
        #expect(SocketActivation.descriptors(listenPID: "4243", listenFDs: "1", ownPID: pid).isEmpty)
        #expect(SocketActivation.descriptors(listenPID: nil, listenFDs: "1", ownPID: pid).isEmpty)
        #expect(SocketActivation.descriptors(listenPID: "4242", listenFDs: nil, ownPID: pid).isEmpty)
        #expect(SocketActivation.descriptors(listenPID: "4242", listenFDs: "0", ownPID: pid).isEmpty)
        #expect(SocketActivation.descriptors(listenPID: "4242", listenFDs: "-1", ownPID: pid).isEmpty)
        #expect(SocketActivation.descriptors(listenPID: " 4242", listenFDs: "1", ownPID: pid).isEmpty)
        #expect(SocketActivation.descriptors(listenPID: "4242", listenFDs: "1x", ownPID: pid).isEmpty)
        #expect(SocketActivation.descriptors(listenPID: "", listenFDs: "", ownPID: pid).isEmpty)
    }

    @Test func readyReachesTheNotifySocket() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("notify")
        let receiver = try Syscall.socket(domain: AF_UNIX, type: sockDgram | sockNonBlock)
        defer { Syscall.close(receiver) }
        try Syscall.bind(receiver, to: UnixSocketAddress(path))

        let notify = try #require(SystemdNotify(socketPath: path))
        try notify.ready()
        #expect(try receive(receiver) == "READY=1")
        try notify.status("line one\nline two")
        #expect(try receive(receiver) == "STATUS=line one line two")
    }

    @Test func notifiesAnAbstractSocket() throws {
        let name = "@gauge-notify-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let receiver = try Syscall.socket(domain: AF_UNIX, type: sockDgram | sockNonBlock)
        defer { Syscall.close(receiver) }
        try Syscall.bind(receiver, to: UnixSocketAddress(name))
        try #require(SystemdNotify(socketPath: name)).stopping()
        #expect(try receive(receiver) == "STOPPING=1")
    }

    @Test func noUsableNotifySocketMeansNoNotifier() {
        #expect(SystemdNotify(socketPath: nil) == nil)
        #expect(SystemdNotify(socketPath: "") == nil)
        #expect(SystemdNotify(socketPath: "relative/path") == nil)
    }

    @Test func aNotifySocketNobodyListensOnIsAnError() throws {
        let directory = TemporaryDirectory()
        let notify = try #require(SystemdNotify(socketPath: directory.appending("absent")))
        #expect(throws: SystemError.self) { try notify.ready() }
    }

    private func receive(_ fd: Int32) throws -> String? {
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = try buffer.withUnsafeMutableBytes { bytes in
            try Result { () throws(SystemError) in try Syscall.read(fd, into: bytes) }.get()
        }
        return count.map { String(decoding: buffer[..<$0], as: UTF8.self) }
    }
}
