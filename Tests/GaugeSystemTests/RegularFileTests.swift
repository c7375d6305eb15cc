import Foundation
import Glibc
import Testing

@testable import GaugeSystem

/// The one way a named file is read: checked before reading, never blocking, bounded.
@Suite struct RegularFileTests {
    private let directory = makeTemporaryDirectory("regular")

    private func file(_ name: String, _ text: String) -> String {
        let path = directory + "/" + name
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        return path
    }

    @Test func aFileIsReadWholeAndItsIdentityKeysItsContents() throws {
        let path = file("theme", "fill_color = #ff8800\n")
        #expect(try RegularFile.read(path, maxBytes: 100) == Array("fill_color = #ff8800\n".utf8))
        let first = try RegularFile(path, maxBytes: 100).identity
        #expect(try RegularFile(path, maxBytes: 100).identity == first, "unchanged: the same identity")
        usleep(10_000)
        _ = file("theme", "fill_color = #00ff00\n")
        #expect(try RegularFile(path, maxBytes: 100).identity != first, "rewritten: another")
    }

    @Test func whatIsNotASmallRegularFileIsRefusedAtOnceWithTheReason() throws {
        let big = file("big", String(repeating: "x", count: 101))
        #expect(throws: RegularFile.Error("\(big) is 101 bytes, more than the 100 allowed")) {
            try RegularFile.read(big, maxBytes: 100)
        }
        #expect(throws: RegularFile.Error("\(directory) is not a regular file")) { try RegularFile.read(directory, maxBytes: 100) }
        // A FIFO with no writer would block an open for reading: refused without waiting.
        let fifo = directory + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let started = Date()
        #expect(throws: RegularFile.Error("\(fifo) is not a regular file")) { try RegularFile.read(fifo, maxBytes: 100) }
        #expect(Date().timeIntervalSince(started) < 1)
        #expect(throws: RegularFile.Error.self) { try RegularFile.read(directory + "/none", maxBytes: 100) }
    }

    @Test func aSymbolicLinkIsFollowedOnlyWhenAllowed() throws {
        let target = file("target", "42\n")
        let link = directory + "/link"
        #expect(symlink(target, link) == 0)
        #expect(try RegularFile.read(link, maxBytes: 100) == Array("42\n".utf8))
        #expect(throws: RegularFile.Error("\(link) is a symbolic link, which is not followed here")) {
            try RegularFile.read(link, maxBytes: 100, followLinks: false)
        }
    }

    @Test func aFailedReadNamesTheFileAndTheCall() throws {
        let path = file("data", "abc")
        let plan = SyscallFaults(["pread": [EIO]])
        #expect(throws: RegularFile.Error.self) {
            try SyscallFaults.$current.withValue(plan) { try RegularFile.read(path, maxBytes: 100) }
        }
        #expect(plan.injected.map(\.name) == ["pread"])
        let interrupted = SyscallFaults(["open": [EINTR], "pread": [EINTR]])
        let bytes = try SyscallFaults.$current.withValue(interrupted) { try RegularFile.read(path, maxBytes: 100) }
        #expect(bytes == Array("abc".utf8) && interrupted.remainingCount == 0, "interrupted calls are made again")
    }
}
