import Foundation
import GaugeProtocol
import Testing

@testable import GaugeDaemon
import GaugeSystem
import GaugeTestSupport

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct PsplashCommandsTests {
    private func requests(_ chunks: [String]) -> ([Request], [String]) {
        var reader = PsplashCommands()
        var output = CompatOutput()
        for chunk in chunks { output.append(reader.consume(Array(chunk.utf8))) }
        return (output.requests, output.logs)
    }

    @Test func commandsEndWithNewlineOrNul() {
        let (requests, logs) = self.requests(["PROGRESS 10\0MSG Starting up\nPROGRESS 42.5\0QUIT\0"])
        #expect(requests == [.progress(10, message: nil), .message("Starting up"), .progress(42.5, message: nil), .quit(retain: false)])
        #expect(logs.isEmpty)
    }

    @Test func commandsMaySpanWritesAndWaitForTheirSeparator() {
        var reader = PsplashCommands()
        #expect(reader.consume(Array("PROG".utf8)).isEmpty)
        #expect(reader.consume(Array("RESS 5".utf8)).isEmpty)
        #expect(reader.pendingByteCount == 10)
        #expect(reader.consume(Array("0\0MSG a".utf8)).requests == [.progress(50, message: nil)])
        #expect(reader.consume(Array(" b\n".utf8)).requests == [.message("a b")])
        #expect(reader.pendingByteCount == 0)
    }

    @Test func byteByByteGivesTheSameRequests() {
        let stream = Array("MSG Grüße 日本語\0PROGRESS 7\nQUIT\n".utf8)
        var reader = PsplashCommands()
        var all: [Request] = []
        for byte in stream { all += reader.consume([byte]).requests }
        #expect(all == [.message("Grüße 日本語"), .progress(7, message: nil), .quit(retain: false)])
    }

    @Test func messageTextIsKeptVerbatimAndEmptyMessageClears() {
        let (requests, _) = self.requests(["MSG  two spaces \0MSG\0MSG \r\n"])
        #expect(requests == [.message(" two spaces "), .message(""), .message("")])
    }

    @Test func progressIsClampedLikePsplashAndAcceptsSpaces() {
        let (requests, logs) = self.requests(["PROGRESS 150\0PROGRESS -3\0PROGRESS  77 \0PROGRESS 0\0"])
        #expect(requests == [.progress(100, message: nil), .progress(0, message: nil), .progress(77, message: nil), .progress(0, message: nil)])
        #expect(logs.isEmpty)
    }

    @Test func badCommandsAreLoggedAndIgnored() {
        let (requests, logs) = self.requests(["PROGRESS\0PROGRESS 4x\0PROGRESS nan\0progress 5\0HELLO world\0 PROGRESS 1\0MSG ok\0"])
        #expect(requests == [.message("ok")])
        #expect(logs.count == 6)
        #expect(logs.allSatisfy { !$0.hasPrefix("psplash") }, "the daemon adds the source once")
        #expect(logs[1].contains("'4x'"))
    }

    @Test func emptyCommandsAreSkippedSilently() {
        let (requests, logs) = self.requests(["\0\0\n\n\r\n   \0QUIT\0"])
        #expect(requests == [.quit(retain: false)])
        #expect(logs.isEmpty)
    }

    @Test func controlCharactersInTextBecomeSpaces() {
        let (requests, _) = self.requests(["MSG a\u{1B}[31mb\tc\0"])
        #expect(requests == [.message("a [31mb\tc")])
    }

    @Test func invalidUTF8BecomesReplacementCharacters() {
        var reader = PsplashCommands()
        let output = reader.consume(Array("MSG a".utf8) + [0xFF, 0xFE] + Array("b\0".utf8))
        #expect(output.requests == [.message("a\u{FFFD}\u{FFFD}b")])
        if case .message(let text) = output.requests.first {
            #expect(Request.parse(Request.message(text).encoded) == .success(.message(text)))
        }
    }

    @Test func overlongCommandIsDroppedWithOneLogAndTheNextOneWorks() {
        var reader = PsplashCommands(maxCommandBytes: 64)
        var output = reader.consume(Array("MSG ".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 100))
        #expect(output.logs.count == 1)
        #expect(reader.pendingByteCount == 0)
        output = reader.consume([UInt8](repeating: UInt8(ascii: "y"), count: 1000))
        #expect(output.isEmpty)
        #expect(reader.pendingByteCount == 0)
        output = reader.consume(Array("yyy\0PROGRESS 3\0".utf8))
        #expect(output.requests == [.progress(3, message: nil)])
        #expect(output.logs.isEmpty)
    }

    @Test func longMessageWithinTheLimitBecomesAValidRequestLine() {
        let text = String(repeating: "é", count: 2040)  // 4080 bytes
        var reader = PsplashCommands()
        let output = reader.consume(Array("MSG \(text)\0".utf8))
        guard case .message(let kept) = output.requests.first else {
            Issue.record("no message")
            return
        }
        #expect(kept.utf8.count <= CompatText.maxTextBytes)
        #expect(text.hasPrefix(kept))
        #expect(Request.message(kept).encoded.utf8.count <= Limits.maxLineBytes)
    }
}

@Suite struct PsplashFIFOTests {
    /// What `psplash-write` does: open for writing without blocking, write the command
    /// and its NUL, close.
    private func psplashWrite(_ path: String, _ command: String) -> Bool {
        let fd = open(path, O_WRONLY | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let bytes = Array(command.utf8) + [0]
        return bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count
    }

    private func readable(_ fd: Int32, timeout: Int32 = 0) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, timeout) == 1 && entry.revents & Int16(POLLIN) != 0
    }

    @Test func fifoIsCreatedWithItsModeAndStaysReadableAcrossWriters() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("psplash_fifo")
        let fifo = try PsplashFIFO(path: path, mode: 0o620)
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & S_IFMT == S_IFIFO)
        #expect(info.st_mode & 0o777 == 0o620)

        #expect(!readable(fifo.fd))
        var reader = PsplashCommands()
        #expect(psplashWrite(path, "PROGRESS 10"))
        #expect(readable(fifo.fd, timeout: 1000))
        #expect(reader.consume(try fifo.readAvailable()).requests == [.progress(10, message: nil)])
        // The writer has gone: no EOF, no hang-up, nothing to read.
        #expect(!readable(fifo.fd))
        #expect(try fifo.readAvailable() == [])
        // A later writer still gets through.
        #expect(psplashWrite(path, "MSG second"))
        #expect(psplashWrite(path, "QUIT"))
        #expect(reader.consume(try fifo.readAvailable()).requests == [.message("second"), .quit(retain: false)])

        fifo.close()
        #expect(access(path, F_OK) != 0, "the FIFO it made is removed on close")
    }

    @Test func existingFifoIsReusedAndKept() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("fifo")
        #expect(mkfifo(path, 0o600) == 0)
        let fifo = try PsplashFIFO(path: path)
        #expect(psplashWrite(path, "PROGRESS 1"))
        #expect(try fifo.readAvailable() == Array("PROGRESS 1\0".utf8))
        fifo.close()
        #expect(access(path, F_OK) == 0)
    }

    @Test func somethingElseAtThePathIsAnError() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("regular")
        #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
        #expect(throws: SystemError.self) { try PsplashFIFO(path: path) }
        #expect(throws: SystemError.self) { try PsplashFIFO(path: directory.appending("missing/dir/fifo")) }
    }

    @Test func aLargeBurstIsReadWhole() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("fifo")
        let fifo = try PsplashFIFO(path: path)
        let fd = open(path, O_WRONLY | O_NONBLOCK)
        defer { close(fd) }
        var stream: [UInt8] = []
        for value in 0...100 { stream += Array("PROGRESS \(value)\0MSG step \(value)\n".utf8) }
        #expect(stream.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == stream.count)
        var reader = PsplashCommands()
        let requests = reader.consume(try fifo.readAvailable()).requests
        #expect(requests.count == 202)
        #expect(requests.last == .message("step 100"))
    }
}
