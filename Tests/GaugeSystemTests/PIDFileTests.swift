import Foundation
import Glibc
import Testing

@testable import GaugeSystem

/// Plymouth's pid file as gauged --ask writes it: never through a link, stale ones known.
@Suite struct PIDFileTests {
    private let directory = makeTemporaryDirectory("pid")

    @Test func aCreatedFileHoldsThePidAndReplacesALinkNotItsTarget() throws {
        let target = directory + "/elsewhere"
        _ = FileManager.default.createFile(atPath: target, contents: Data("keep\n".utf8))
        let path = directory + "/plymouth/pid"
        try FileManager.default.createDirectory(atPath: directory + "/plymouth", withIntermediateDirectories: true)
        #expect(symlink(target, path) == 0)
        #expect(PIDFile.holder(of: path) == .stale("\(path) is a symbolic link, which is not followed here"))
        try PIDFile.create(path, pid: 4242)
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep\n", "the link's target is untouched")
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType == .typeRegular)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "4242\n")
    }

    @Test func whoHoldsItIsKnownFromThePidsProcess() throws {
        let path = directory + "/pid"
        #expect(PIDFile.holder(of: path) == .none)
        try PIDFile.create(path, pid: getpid())
        // This test process is neither gauged nor plymouthd: a reused pid.
        guard case .stale(let reason) = PIDFile.holder(of: path) else {
            Issue.record("the test process taken for a daemon")
            return
        }
        #expect(reason.contains("which is not a running gauged or plymouthd"))
        try "junk\n".write(toFile: path, atomically: false, encoding: .utf8)
        #expect(PIDFile.holder(of: path) == .stale("\(path) holds no pid"))
    }
}
