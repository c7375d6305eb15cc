import Foundation
import Glibc
import Testing

// No key outlives its answer anywhere in gauged (README "While root waits on the screen"):
// after each way a question can end, the whole of gauged's writable memory (every
// mapping: the heap, the stacks, the C library's data and bss, anonymous mappings) is
// read through /proc/PID/mem and searched for the passphrase that was typed.

/// Where `text` occurs in the writable memory of process `pid` (read through
/// /proc/PID/mem, as root can): one entry per copy, naming its mapping (the file, or
/// `[heap]`, `[stack]`, `anonymous`) and address.
func copiesInMemory(of text: String, pid: Int32) throws -> [String] {
    let needle = Array(text.utf8)
    let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
    let memory = open("/proc/\(pid)/mem", O_RDONLY)
    try #require(memory >= 0, "cannot open /proc/\(pid)/mem")
    defer { close(memory) }
    var found: [String] = []
    var scanned = 0
    for line in maps.split(separator: "\n") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 2, fields[1].hasPrefix("rw") else { continue }
        let range = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
        guard range.count == 2, range[1] > range[0], range[1] - range[0] <= 1 << 30 else { continue }
        let name = fields.count >= 6 ? String(fields[5]) : "anonymous"
        var bytes = [UInt8](repeating: 0, count: Int(range[1] - range[0]))
        let read = bytes.withUnsafeMutableBytes { pread(memory, $0.baseAddress, $0.count, off_t(Int64(bitPattern: range[0]))) }
        guard read > 0 else { continue }
        scanned += 1
        bytes.withUnsafeBytes { raw in
            var index = 0
            while index + needle.count <= read {
                if raw[index] == needle[0], memcmp(raw.baseAddress! + index, needle, needle.count) == 0 {
                    found.append("\(name) at 0x\(String(range[0] + UInt64(index), radix: 16))")
                }
                index += 1
            }
        }
    }
    try #require(scanned > 3, "the daemon's writable mappings were read (\(scanned))")
    return found
}

@Suite(.serialized) struct GaugedSecretMemoryTests {
    private func start() throws -> (GaugedProcess, String, TypingPTY) {
        let plymouth = try DebianPlymouth.require()
        try #require(geteuid() == 0, "a private network namespace and /proc/PID/mem need root")
        let pty = try TypingPTY()
        let daemon = try GaugedProcess(
            ["--fps", "60", "--plymouth-compat", "--ask", "--ask-tty", pty.slavePath, "--plymouth-pid-file", "none"],
            launcher: ["/usr/bin/unshare", "--net"])
        waitForRaw(pty)
        return (daemon, plymouth, pty)
    }

    /// Types `text` a key at a time, as a person does (each key its own read).
    private func typeSlowly(_ pty: TypingPTY, _ text: String) {
        for character in text {
            pty.type(String(character))
            usleep(3_000)
        }
    }

    private func expectNoCopy(_ secret: String, in daemon: GaugedProcess, after way: String,
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try daemon.request("ping") == "ok", sourceLocation: sourceLocation)
        let copies = try copiesInMemory(of: secret, pid: daemon.pid)
        #expect(copies.isEmpty, "\(way): the passphrase is still in gauged's memory: \(copies)", sourceLocation: sourceLocation)
    }

    /// Answered with Enter, cancelled with Escape, withdrawn by its asker's going, moved to
    /// the console by `hide` and answered there, refused by `deactivate`: after each, the
    /// passphrase typed (a key at a time, and at once) is nowhere in gauged's memory.
    @Test func noTypedPassphraseOutlivesItsQuestion() throws {
        let (daemon, plymouth, pty) = try start()
        var asked = 0
        func ask() throws -> ChildProgram {
            let run = try plymouthRun(plymouth, daemon: daemon, ["ask-for-password", "--prompt=Disk password"])
            asked += 1
            waitForLog(daemon, "waits for the keyboard", count: asked)
            return run
        }

        var run = try ask()
        typeSlowly(pty, "AAAAAAAAA")
        pty.type("\r")
        #expect(run.finish() == (0, "AAAAAAAAA"))
        try expectNoCopy("AAAAAAAAA", in: daemon, after: "answered, typed a key at a time")

        run = try ask()
        pty.type("Zq7xKp3wVb9t\r")
        #expect(run.finish() == (0, "Zq7xKp3wVb9t"))
        try expectNoCopy("Zq7xKp3wVb9t", in: daemon, after: "answered, typed at once")

        run = try ask()
        typeSlowly(pty, "BBBBBBBBB")
        pty.type("\u{1B}")
        #expect(run.finish().status != 0)
        try expectNoCopy("BBBBBBBBB", in: daemon, after: "cancelled with Escape")

        run = try ask()
        typeSlowly(pty, "CCCCCCCCC")
        usleep(200_000)
        kill(run.pid, SIGKILL)
        _ = run.finish()
        waitForLog(daemon, "its question is withdrawn")
        try expectNoCopy("CCCCCCCCC", in: daemon, after: "its asker gone")

        run = try ask()
        typeSlowly(pty, "DDDDDDDDD")
        // Read on the splash before the hide arrives (they come by different ways).
        usleep(200_000)
        #expect(try daemon.request("hide") == "ok")
        waitForLog(daemon, "asked on the console")
        try expectNoCopy("DDDDDDDDD", in: daemon, after: "hidden (what was typed on the splash)")
        typeSlowly(pty, "EEEEEEEEE")
        pty.type("\r")
        #expect(run.finish() == (0, "EEEEEEEEE"))
        try expectNoCopy("EEEEEEEEE", in: daemon, after: "answered on the console")
        #expect(try daemon.request("show") == "ok")
        waitForRaw(pty)

        run = try ask()
        typeSlowly(pty, "FFFFFFFFF")
        usleep(200_000)
        #expect(try daemon.request("deactivate") == "ok")
        #expect(run.finish().status != 0, "deactivated: the asker is told at once")
        try expectNoCopy("FFFFFFFFF", in: daemon, after: "deactivated")
        #expect(try daemon.request("reactivate") == "ok")
        waitForRaw(pty)

        // Typed with nothing asked: held a moment for a question, then dropped.
        typeSlowly(pty, "GGGGGGGGG")
        usleep(1_500_000)
        try expectNoCopy("GGGGGGGGG", in: daemon, after: "held keys expired")
    }
}
