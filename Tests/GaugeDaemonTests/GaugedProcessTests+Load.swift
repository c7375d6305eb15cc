import Foundation
import GaugeProtocol
import Glibc
import Testing
import GaugeTestSupport

// 64 clients × 1000 pipelined updates against the real gauged: every reply in order,
// the final state right, and no memory kept once they are gone.

/// Results of the client threads, collected under a lock.
private final class Outcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var problems: [String] = []
    private var finished = 0

    func record(_ problem: String?) {
        lock.withLock {
            if let problem { problems.append(problem) }
            finished += 1
        }
    }

    var snapshot: (finished: Int, problems: [String]) { lock.withLock { (finished, problems) } }
}

@Suite struct GaugedProcessLoadTests {
    static let clients = 64
    static let updates = 1000

    /// The lines client `client` sends: progress updates, every tenth one a bad value that
    /// names the client and the index (so its `err` reply shows the order), the last one
    /// the same for everybody so the final state does not depend on who finishes last.
    static func lines(client: Int) -> (requests: [UInt8], replies: [String]) {
        var requests = ""
        var replies: [String] = []
        for index in 0..<updates - 1 {
            if index % 10 == 9 {
                requests += "progress \(client)x\(index)\n"
                replies.append("err syntax progress value '\(client)x\(index)' is not a decimal number")
            } else {
                requests += "progress \(Double((client * 7 + index) % 1000) / 10) client \(client)\n"
                replies.append("ok")
            }
        }
        requests += "progress 77.5 all done\n"
        replies.append("ok")
        return (Array(requests.utf8), replies)
    }

    /// One round: every client connected first, then all of them sending at once from
    /// their own threads, each reading its replies while sending.
    static func round(_ daemon: GaugedProcess) throws {
        let connections = try (0..<clients).map { _ in try daemon.connect(timeout: 20) }
        let outcomes = Outcomes()
        for (client, connection) in connections.enumerated() {
            let (requests, replies) = lines(client: client)
            let fd = connection.fd
            let sender = Thread {
                var offset = 0
                while offset < requests.count {
                    let chunk = min(4096, requests.count - offset)
                    let sent = requests[offset..<offset + chunk].withUnsafeBytes {
                        Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                    }
                    if sent <= 0 { return }
                    offset += sent
                }
            }
            let receiver = Thread {
                var problem: String?
                for (index, expected) in replies.enumerated() {
                    let reply = try? connection.readLine()
                    if reply != expected {
                        problem = "client \(client) reply \(index): \(reply ?? "none") instead of \(expected)"
                        break
                    }
                }
                outcomes.record(problem)
            }
            sender.start()
            receiver.start()
        }
        let deadline = monotonicNow() + 30
        while outcomes.snapshot.finished < clients, monotonicNow() < deadline { usleep(5_000) }
        let (finished, problems) = outcomes.snapshot
        #expect(finished == clients)
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        withExtendedLifetime(connections) {}
    }

    @Test func sixtyFourClientsTimesAThousandUpdates() throws {
        let daemon = try GaugedProcess()
        // Warm-up round: allocator pools, reply buffers and the like reach their size.
        try Self.round(daemon)
        try daemon.waitForStatus { $0.clients == 1 }
        let before = try #require(daemon.procStatus("VmRSS"))

        try Self.round(daemon)
        let status = try daemon.waitForStatus { $0.clients == 1 }
        #expect(status.target == 77.5 && status.message == "all done")
        #expect(try daemon.request("ping") == "ok")
        let after = try #require(daemon.procStatus("VmRSS"))
        #expect(after - before < 4 * 1024, "VmRSS grew from \(before) kB to \(after) kB over a round of 64000 updates")
    }
}
