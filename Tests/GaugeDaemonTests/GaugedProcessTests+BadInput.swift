import Foundation
import GaugeProtocol
import Glibc
import Testing
import GaugeTestSupport

// Bad input never stops the daemon or disturbs other clients; each gets its
// `err` reply where one can still be sent. Against the real gauged.

@Suite struct GaugedProcessBadInputTests {
    /// The error code of a reply line, nil for `ok`.
    private func code(_ reply: String?) -> String? {
        guard let reply, case .err(let error)? = Reply.parse(reply) else { return nil }
        return error.code.rawValue
    }

    @Test func badLinesGetTheirErrorCodesAndTheDaemonGoesOn() throws {
        let daemon = try GaugedProcess()
        let c = try daemon.connect()
        let cases: [(line: [UInt8], code: String)] = [
            (Array(repeating: UInt8(ascii: "a"), count: 8 * 1024), "toolong"),
            (Array("progress 1".utf8) + Array(repeating: UInt8(ascii: "0"), count: 4096), "toolong"),
            ([0xFF, 0xFE, 0x41], "utf8"),
            (Array("message caf".utf8) + [0xC3], "utf8"),
            (Array("progress 5".utf8) + [0] + Array("0".utf8), "syntax"),
            ([0], "syntax"),
            (Array("progress NaN".utf8), "syntax"),
            (Array("progress nan".utf8), "syntax"),
            (Array("progress inf".utf8), "syntax"),
            (Array("progress 1e400".utf8), "syntax"),
            (Array("progress 4x".utf8), "syntax"),
            (Array("progress 0x10".utf8), "syntax"),
            (Array("progress".utf8), "syntax"),
            (Array("progress -1".utf8), "range"),
            (Array("progress 100.5".utf8), "range"),
            (Array("progress 1000000".utf8), "range"),
            (Array("frobnicate".utf8), "unknown"),
            (Array("PING".utf8), "unknown"),
            (Array("".utf8), "syntax"),
            (Array("   ".utf8), "syntax"),
            (Array("ping extra".utf8), "syntax"),
            (Array("message bell\u{07}".utf8), "syntax"),
        ]
        for (line, expected) in cases {
            try c.send(line + [UInt8(ascii: "\n")])
            let reply = try c.readLine()
            #expect(code(reply) == expected, "\(String(decoding: line.prefix(40), as: UTF8.self).debugDescription) → \(reply ?? "EOF")")
            #expect(try c.request("ping") == "ok")
        }
        let status = try c.status()
        #expect(status.target == 0 && status.message == "", "no bad line changed the state")
    }

    @Test func aMegabyteLineIsOneTooLongAndTheConnectionGoesOn() throws {
        let daemon = try GaugedProcess()
        let c = try daemon.connect()
        // Sent from a thread: the daemon reads while this one would block on a full socket.
        let line = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20) + Array("\nprogress 7\nping\n".utf8)
        let sender = Thread { [fd = c.fd] in
            var offset = 0
            while offset < line.count {
                let sent = line[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if sent <= 0 { return }
                offset += sent
            }
        }
        sender.start()
        #expect(code(try c.readLine()) == "toolong")
        #expect(try c.readLine() == "ok", "the line after the long one is read normally")
        #expect(try c.readLine() == "ok")
        #expect(try c.status().target == 7)
        #expect(try daemon.request("ping") == "ok")
    }

    @Test func aLastLineWithoutItsNewlineIsAnsweredAtEndOfStream() throws {
        let daemon = try GaugedProcess()
        do {
            let c = try daemon.connect()
            try c.send("progress 7\nprogress 9")
            shutdown(c.fd, Int32(SHUT_WR))
            #expect(try c.readLine() == "ok")
            #expect(try c.readLine() == "ok", "the last request, ended by EOF, is answered")
            #expect(try c.readLine() == nil)
        }
        do {
            let c = try daemon.connect()
            try c.send("messa")
            c.close()
        }
        do {
            let c = try daemon.connect()
            try c.send("title Half\nprogress 3")
            shutdown(c.fd, Int32(SHUT_WR))
            #expect(try c.readLine() == "ok")
            #expect(try c.readLine() == "ok")
            #expect(try c.readLine() == nil, "then the daemon closes")
        }
        let status = try daemon.waitForStatus { $0.clients == 1 }
        #expect(status.target == 3, "every request ran, the last ones without a newline too")
        #expect(status.title == "Half" && status.message == "")
    }

    @Test func twoHundredConnectionsAtOnce() throws {
        let daemon = try GaugedProcess()
        try daemon.waitForStatus { $0.clients == 1 }  // the start-up ping's connection is gone
        var connections: [LineConnection] = []
        for _ in 0..<200 { connections.append(try daemon.connect(timeout: 5)) }

        // The refused ones get one reply line and EOF without asking; the others nothing.
        var refused = Set<Int>()
        var refusals: [String] = []
        let deadline = monotonicNow() + 30
        while refused.count < 136, monotonicNow() < deadline {
            var entries = connections.enumerated().filter { !refused.contains($0.offset) }
                .map { pollfd(fd: $0.element.fd, events: Int16(POLLIN), revents: 0) }
            let indices = connections.indices.filter { !refused.contains($0) }
            guard poll(&entries, nfds_t(entries.count), 200) > 0 else { continue }
            for (slot, entry) in entries.enumerated() where entry.revents != 0 {
                let index = indices[slot]
                refusals.append(try connections[index].readLine() ?? "EOF")
                #expect(try connections[index].readLine() == nil, "a refused client is closed")
                refused.insert(index)
            }
        }
        #expect(refused.count == 136, "200 connections, 64 served")
        #expect(refusals.allSatisfy { $0 == "err io too many clients" }, "\(Set(refusals))")

        // Every served one works, in parallel with the others.
        let served = connections.indices.filter { !refused.contains($0) }
        #expect(served.count == 64)
        for index in served { try connections[index].send("ping\n") }
        for index in served { #expect(try connections[index].readLine() == "ok") }
        #expect(try connections[served[0]].status().clients == 64)

        connections.removeAll()
        let status = try daemon.waitForStatus { $0.clients == 1 }
        #expect(status.clients == 1)
        #expect(try daemon.request("ping") == "ok")
    }
}
