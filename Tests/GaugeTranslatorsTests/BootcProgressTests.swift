import GaugeProtocol
import GaugeTranslators
import Testing

/// Lines as bootc writes them (serde, camelCase members, one object a line), for an
/// upgrade that fetches two layers of 100 and 200 MB and stages the image.
enum BootcTrace {
    static let v1 = "\"apiVersion\":\"org.containers.bootc.progress/v1\","

    static func pulling(bytes: Int, steps: Int, subtasks: [(Int, Int)], version: String = v1) -> String {
        let list = subtasks.enumerated().map { index, subtask in
            "{\"subtask\":\"ostree_chunk\",\"description\":\"ostree chunk\",\"id\":\"layer\(index)\",\"bytesCached\":0,"
                + "\"bytes\":\(subtask.0),\"bytesTotal\":\(subtask.1)}"
        }.joined(separator: ",")
        return "{\"type\":\"ProgressBytes\",\(version)\"task\":\"pulling\",\"description\":\"Pulling Image: sha256:5e1f\","
            + "\"id\":\"sha256:5e1f\",\"bytesCached\":0,\"bytes\":\(bytes),\"bytesTotal\":300000000,\"stepsCached\":4,"
            + "\"steps\":\(steps),\"stepsTotal\":2,\"subtasks\":[\(list)]}"
    }

    static func staging(steps: Int, version: String = v1) -> String {
        let names = [("merging", "Merging Image"), ("deploying", "Deploying Image"), ("bootloader", "Updating Bootloader")]
        let list = names.prefix(min(steps + 1, 3)).enumerated().map { index, name in
            "{\"subtask\":\"\(name.0)\",\"description\":\"\(name.1)\",\"id\":\"\(name.0)\",\"completed\":\(index < steps)}"
        }.joined(separator: ",")
        return "{\"type\":\"ProgressSteps\",\(version)\"task\":\"staging\",\"description\":\"Deploying Image\","
            + "\"id\":\"sha256:5e1f\",\"stepsCached\":0,\"steps\":\(steps),\"stepsTotal\":3,\"subtasks\":[\(list)]}"
    }

    static let upgrade = [
        pulling(bytes: 0, steps: 0, subtasks: [(50_000_000, 100_000_000)]),
        pulling(bytes: 100_000_000, steps: 1, subtasks: [(100_000_000, 100_000_000), (0, 200_000_000)]),
        pulling(bytes: 100_000_000, steps: 1, subtasks: [(100_000_000, 100_000_000), (150_000_000, 200_000_000)]),
        pulling(bytes: 300_000_000, steps: 2, subtasks: [(100_000_000, 100_000_000), (200_000_000, 200_000_000)]),
        staging(steps: 0), staging(steps: 1), staging(steps: 2), staging(steps: 3),
    ]
}

private let second: UInt64 = 1_000_000_000

@Suite struct BootcProgressTests {
    private func events(_ items: [BootcProgressReader.Item]) -> [BootcProgressEvent] {
        items.compactMap { if case .event(let event) = $0 { event } else { nil } }
    }

    private func problems(_ items: [BootcProgressReader.Item]) -> [String] {
        items.compactMap { if case .problem(let text) = $0 { text } else { nil } }
    }

    @Test func readsBothGenerationsOfTheStream() {
        var reader = BootcProgressReader()
        let text = "{\"type\":\"Start\",\"version\":\"0.1.0\"}\n"
            + BootcTrace.pulling(bytes: 100_000_000, steps: 1, subtasks: [(100_000_000, 100_000_000), (7, 200_000_000)], version: "") + "\n"
            + BootcTrace.staging(steps: 1) + "\r\n"
        let items = reader.consume(Array(text.utf8))
        #expect(problems(items) == [])
        #expect(events(items) == [
            .start(version: "0.1.0"),
            .bytes(BootcBytes(
                task: "pulling", description: "Pulling Image: sha256:5e1f", id: "sha256:5e1f", bytes: 100_000_000,
                bytesTotal: 300_000_000, steps: 1, stepsTotal: 2, subtaskBytesInFlight: 7)),
            .steps(BootcSteps(
                task: "staging", description: "Deploying Image", id: "sha256:5e1f", steps: 1, stepsTotal: 3,
                activeSubtask: "Deploying Image")),
        ])
    }

    @Test func badLinesAreReportedAndSkippedPiecesWait() {
        var reader = BootcProgressReader()
        let line = BootcTrace.staging(steps: 0)
        let bytes = Array(("not json\n[1]\n{\"a\":1}\n{\"type\":\"ProgressSteps\",\"steps\":1}\n"
            + "{\"type\":\"Finished\",\"x\":1}\n\n" + line).utf8)
        var items: [BootcProgressReader.Item] = []
        for chunk in stride(from: 0, to: bytes.count, by: 7) {
            items += reader.consume(bytes[chunk..<min(bytes.count, chunk + 7)])
        }
        #expect(problems(items).count == 4)
        #expect(events(items) == [])
        #expect(events(reader.finish()) == [.steps(BootcSteps(
            task: "staging", description: "Deploying Image", id: "sha256:5e1f", steps: 0, stepsTotal: 3,
            activeSubtask: "Merging Image"))])
        #expect(reader.finish() == [])
    }

    @Test func anotherApiVersionIsReadWithOneWarning() {
        var reader = BootcProgressReader()
        let other = "\"apiVersion\":\"org.containers.bootc.progress/v2\","
        let text = BootcTrace.staging(steps: 0, version: other) + "\n" + BootcTrace.staging(steps: 1, version: other) + "\n"
        let items = reader.consume(Array(text.utf8))
        #expect(problems(items).count == 1)
        #expect(events(items).count == 2)
    }

    @Test func aLineTooLongIsDroppedWithinItsBound() {
        var reader = BootcProgressReader()
        let huge = [UInt8](repeating: UInt8(ascii: " "), count: BootcProgressReader.maxLineBytes + 10)
        var items = reader.consume(huge)
        #expect(reader.pendingByteCount <= BootcProgressReader.maxLineBytes)
        items += reader.consume(Array(("\n" + BootcTrace.staging(steps: 2) + "\n").utf8))
        #expect(problems(items).count == 1 && events(items).count == 1)
    }

    @Test func anUpgradeIsOneBarThatNeverGoesBack() {
        var reader = BootcProgressReader()
        var translator = BootcProgressTranslator(settings: .init(stallSeconds: nil, creepHalfSeconds: nil))
        var lines: [String] = []
        for line in BootcTrace.upgrade {
            for case .event(let event) in reader.consume(Array((line + "\n").utf8)) {
                lines += translator.requests(for: event, at: 0).map(\.encoded)
            }
        }
        lines += translator.finish(.auto, successMessage: "Update ready", failureMessage: "Stopped").map(\.encoded)
        #expect(lines == [
            "progress 0", "state running",
            "progress 13.3 Pulling Image: sha256:5e1f\u{2028}50.0 of 300.0 MB",
            "progress 26.6 Pulling Image: sha256:5e1f\u{2028}100.0 of 300.0 MB",
            "progress 66.6 Pulling Image: sha256:5e1f\u{2028}250.0 of 300.0 MB",
            "progress 80 Pulling Image: sha256:5e1f\u{2028}300.0 of 300.0 MB",
            "message Merging Image",
            "progress 86.6 Deploying Image",
            "progress 93.3 Updating Bootloader",
            // Every step done with the stream still open: not full until it ends.
            "progress 99.9 Deploying Image",
            "state success Update ready",
        ])
    }

    @Test func theEndOfTheStreamDecides() {
        func ended(_ trace: [String], _ ending: BootcProgressTranslator.Ending) -> [Request] {
            var reader = BootcProgressReader()
            var translator = BootcProgressTranslator(settings: .init(stallSeconds: nil, creepHalfSeconds: nil))
            for line in trace {
                for case .event(let event) in reader.consume(Array((line + "\n").utf8)) {
                    _ = translator.requests(for: event, at: 0)
                }
            }
            return translator.finish(ending, successMessage: "Ready", failureMessage: "Stopped")
        }
        let cut = Array(BootcTrace.upgrade.prefix(6))
        #expect(ended(cut, .auto) == [.state(.failure, message: "Stopped")])
        #expect(ended(cut, .success) == [.state(.success, message: "Ready")])
        #expect(ended(cut, .keep) == [])
        #expect(ended([], .auto) == [])
        #expect(ended(BootcTrace.upgrade, .failure) == [.state(.failure, message: "Stopped")])
    }

    @Test func aStartBeginsANewOperationAndAStalledPullTurnsIndeterminate() {
        var translator = BootcProgressTranslator(settings: .init(stallSeconds: 5, creepHalfSeconds: nil))
        #expect(translator.requests(for: .start(version: "0.1.0"), at: 0)
            == [.progress(0, message: nil), .state(.running, message: "Starting")])
        let pull = BootcBytes(task: "pulling", description: "Pulling", bytes: 0, bytesTotal: 0, steps: 0, stepsTotal: 0)
        // No totals at all: the message tells, the value stays.
        #expect(translator.requests(for: .bytes(pull), at: 1 * second) == [.message("Pulling")])
        #expect(translator.tick(at: 6 * second) == [.mode(.indeterminate)])
        var layers = pull
        layers.steps = 1
        layers.stepsTotal = 4
        #expect(translator.requests(for: .bytes(layers), at: 7 * second)
            == [.mode(.determinate), .progress(20, message: "Pulling\u{2028}1 of 4")])
    }
}
