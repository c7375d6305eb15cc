import GaugeDaemon
import GaugeProtocol
import Glibc
import Testing
import GaugeSystem

@Suite struct SocketServerTests {
    @Test func severalClientsGetTheirRepliesInOrder() throws {
        let fixture = try ServerFixture()
        let clients = try (0..<3).map { _ in try fixture.client() }
        for round in 0..<20 {
            for (index, client) in clients.enumerated() { client.send("c\(index) r\(round)\n") }
        }
        try pump(fixture.loop) { clients.allSatisfy { $0.lines.count == 20 } }
        for (index, client) in clients.enumerated() {
            #expect(client.lines == (0..<20).map { "ok c\(index) r\($0)" })
        }
        #expect(fixture.server.clientCount == 3)
    }

    @Test(arguments: [8 * 1024, 1024 * 1024])
    func anOverlongLineGetsOneErrorAndTheConnectionGoesOn(length: Int) throws {
        let fixture = try ServerFixture()
        let client = try fixture.client()
        try client.sendAll([UInt8](repeating: UInt8(ascii: "x"), count: length) + Array("\nping\n".utf8), loop: fixture.loop)
        try pump(fixture.loop) { client.lines.count == 2 }
        #expect(client.lines.count == 2)
        #expect(client.lines.first?.hasPrefix("err toolong ") == true)
        #expect(client.lines.last == "ok ping")
    }

    @Test func aLineOfExactlyTheLimitIsAccepted() throws {
        let fixture = try ServerFixture()
        let client = try fixture.client()
        let line = String(repeating: "y", count: Limits.maxLineBytes)
        try client.sendAll(Array((line + "\n").utf8), loop: fixture.loop)
        try pump(fixture.loop) { client.lines.count == 1 }
        #expect(client.lines == ["ok " + line])
    }

    @Test func invalidUTF8GetsAnError() throws {
        let fixture = try ServerFixture()
        let client = try fixture.client()
        client.send([0x6D, 0xC3, 0x28, 0x0A] + Array("ping\n".utf8))
        try pump(fixture.loop) { client.lines.count == 2 }
        #expect(client.lines.first?.hasPrefix("err utf8 ") == true)
        #expect(client.lines.last == "ok ping")
    }

    @Test func aClientLeavingMidLineDoesNotDisturbOthers() throws {
        let fixture = try ServerFixture()
        let leaving = try fixture.client()
        let staying = try fixture.client()
        leaving.send("ping\nhalf a li")
        staying.send("one\n")
        try pump(fixture.loop) { leaving.lines.count == 1 && staying.lines.count == 1 }
        leaving.close()
        staying.send("two\n")
        try pump(fixture.loop) { staying.lines.count == 2 && fixture.server.clientCount == 1 }
        #expect(staying.lines == ["ok one", "ok two"])
        #expect(fixture.server.clientCount == 1)
    }

    @Test func linesSentBeforeAHalfCloseAreAnswered() throws {
        let fixture = try ServerFixture()
        let client = try fixture.client()
        client.send("a\nb\nunfinished")
        client.shutdownWriting()
        try pump(fixture.loop) { client.lines.count == 3 && client.closedByPeer }
        #expect(client.lines == ["ok a", "ok b", "ok unfinished"], "the last line, ended by EOF, is answered too")
        #expect(client.closedByPeer)
    }

    @Test func beyondMaxClientsNewClientsAreRefusedWithAReply() throws {
        let fixture = try ServerFixture()
        let clients = try (0..<200).map { _ in try fixture.client() }
        for client in clients { client.send("ping\n") }
        try pump(fixture.loop) { clients.allSatisfy { !$0.lines.isEmpty } }
        let served = clients.filter { $0.lines == ["ok ping"] }
        let refused = clients.filter { $0.lines == ["err io too many clients"] }
        #expect(served.count == Limits.defaultMaxClients)
        #expect(refused.count == 200 - Limits.defaultMaxClients)
        #expect(fixture.server.clientCount == Limits.defaultMaxClients)
        try pump(fixture.loop) { refused.allSatisfy(\.closedByPeer) }
        #expect(refused.allSatisfy { $0.closedByPeer })
    }

    @Test func aBusyClientDoesNotDelayAnother() throws {
        let fixture = try ServerFixture()
        let busy = try fixture.client()
        let line = Array("progress 50\n".utf8)
        let sent = busy.send(Array([[UInt8]](repeating: line, count: 10_000).joined()))
        try #require(sent >= 64 * 1024)
        let quiet = try fixture.client()
        quiet.send("ping\n")
        try pump(fixture.loop) { quiet.lines.count == 1 }
        #expect(quiet.lines == ["ok ping"])
        // The busy client's backlog was not worked off first.
        #expect(busy.lines.count < sent / line.count)
        try pump(fixture.loop) { busy.lines.count == sent / line.count }
        #expect(busy.lines.count == sent / line.count)
    }

    @Test func aDeferredReplyHoldsBackLaterRepliesOfThatClientOnly() throws {
        var waiting: [ClientConnection] = []
        let fixture = try ServerFixture { connection, item in
            if item == .line("wait") {
                waiting.append(connection)
                return .deferred
            }
            return ServerFixture.echo(connection, item)
        }
        let patient = try fixture.client()
        let other = try fixture.client()
        patient.send("first\nwait\nafter 1\nwait\nafter 2\n")
        other.send("hello\n")
        try pump(fixture.loop) { other.lines.count == 1 && waiting.count == 1 }
        try pump(fixture.loop, for: 0.05)
        #expect(patient.lines == ["ok first"])
        #expect(waiting.first?.isAwaitingReply == true)
        #expect(waiting.first?.hasQueuedMessages == true)

        // Others keep being served meanwhile.
        other.send("again\n")
        try pump(fixture.loop) { other.lines.count == 2 }
        #expect(other.lines == ["ok hello", "ok again"])
        #expect(patient.lines == ["ok first"])

        waiting[0].complete(reply: "ok settled 1")
        try pump(fixture.loop) { waiting.count == 2 && patient.lines.count == 3 }
        try pump(fixture.loop, for: 0.02)
        #expect(patient.lines == ["ok first", "ok settled 1", "ok after 1"])

        waiting[1].complete(reply: "ok settled 2")
        try pump(fixture.loop) { patient.lines.count == 5 }
        #expect(patient.lines == ["ok first", "ok settled 1", "ok after 1", "ok settled 2", "ok after 2"])
    }

    @Test func completingForAClientThatLeftIsHarmless() throws {
        var waiting: [ClientConnection] = []
        var disconnected: [UInt64] = []
        let fixture = try ServerFixture { connection, _ in
            waiting.append(connection)
            return .deferred
        }
        fixture.server.onDisconnect = { disconnected.append($0.id) }
        do {
            let client = try fixture.client()
            client.send("wait\n")
            try pump(fixture.loop) { waiting.count == 1 }
        }
        try pump(fixture.loop) { fixture.server.clientCount == 0 }
        #expect(disconnected == [waiting[0].id])
        #expect(!waiting[0].isOpen)
        waiting[0].complete(reply: "ok")
        try fixture.loop.runOnce(timeoutMilliseconds: 0)
    }

    @Test func aClientThatDoesNotReadItsRepliesIsDisconnected() throws {
        var configuration = SocketServerConfiguration()
        configuration.client.maxPendingOutput = 4096
        let bigReply = String(repeating: "z", count: 32 * 1024)
        let fixture = try ServerFixture(configuration: configuration) { _, _ in .reply(bigReply) }
        var disconnected = 0
        fixture.server.onDisconnect = { _ in disconnected += 1 }
        let greedy = try fixture.client()
        // Never read: the kernel's buffers fill, then the daemon's allowance.
        for _ in 0..<64 { greedy.send("status\n") }
        try pump(fixture.loop) { disconnected == 1 }
        #expect(disconnected == 1)
        #expect(fixture.server.clientCount == 0)

        let next = try fixture.client()
        next.send("ping\n")
        try pump(fixture.loop) { next.lines.count == 1 }
        #expect(next.lines == [bigReply])
        #expect(fixture.server.clientCount == 1)
    }

    @Test func aLineBreakInsideAReplyCannotSplitIt() throws {
        let fixture = try ServerFixture { _, _ in .reply("ok two\nlines\n") }
        let client = try fixture.client()
        client.send("x\ny\n")
        try pump(fixture.loop) { client.lines.count == 2 }
        #expect(client.lines == ["ok two lines", "ok two lines"])
    }

    @Test func theTestProcessIsAnAllowedPeer() throws {
        var peers: [PeerCredentials] = []
        let fixture = try ServerFixture { connection, item in
            peers.append(connection.peer!)
            return ServerFixture.echo(connection, item)
        }
        let client = try fixture.client()
        client.send("ping\n")
        try pump(fixture.loop) { client.lines.count == 1 }
        #expect(client.lines == ["ok ping"])
        #expect(peers.map { [$0.pid, Int32(bitPattern: $0.uid), Int32(bitPattern: $0.gid)] } == [[getpid(), Int32(bitPattern: geteuid()), Int32(bitPattern: getegid())]])
        #expect(peers.first?.groups != nil, "SO_PEERGROUPS answered")
        #expect(PeerPolicy().allows(peers[0]))
    }

    @Test func closingTheServerClosesClientsAndRemovesTheSocketFile() throws {
        let fixture = try ServerFixture()
        let client = try fixture.client()
        client.send("ping\n")
        try pump(fixture.loop) { client.lines.count == 1 }
        fixture.server.close()
        #expect(try Syscall.lstat(fixture.path) == nil)
        try pump(fixture.loop) { client.closedByPeer }
        #expect(client.closedByPeer)
        #expect(fixture.loop.registeredCount == 0)
    }
}
