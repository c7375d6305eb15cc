import GaugeProtocol
import GaugeTranslators

/// bootc's `--progress-fd` JSON Lines, as `gaugectl bootc` reads them.
extension FuzzTarget {
    static let bootc = FuzzTarget(
        name: "bootc",
        summary: "bootc progress JSON Lines (whole and in pieces): the same items, held-back bytes bounded, "
            + "problems short, the translator's requests valid and its bar never going back",
        maxLength: 20_000,
        dictionary: [
            "{\"type\":\"ProgressBytes\",", "{\"type\":\"ProgressSteps\",", "{\"type\":\"Start\",\"version\":\"0.1.0\"}",
            "\"bytes\":", "\"bytesTotal\":", "\"steps\":", "\"stepsTotal\":", "\"subtasks\":[", "\"completed\":false",
            "\"description\":\"", "\"apiVersion\":\"org.containers.bootc.progress/v1\",", "\n", "}", "]", "1e30", "-1",
        ],
        seeds: {
            [Array(("{\"type\":\"ProgressBytes\",\"task\":\"pulling\",\"description\":\"Pulling\",\"id\":\"x\",\"bytesCached\":0,"
                + "\"bytes\":10,\"bytesTotal\":100,\"stepsCached\":0,\"steps\":0,\"stepsTotal\":2,\"subtasks\":[{\"subtask\":\"c\","
                + "\"description\":\"c\",\"id\":\"c\",\"bytesCached\":0,\"bytes\":5,\"bytesTotal\":50}]}\n"
                + "{\"type\":\"ProgressSteps\",\"task\":\"staging\",\"description\":\"Deploying\",\"id\":\"x\",\"stepsCached\":0,"
                + "\"steps\":1,\"stepsTotal\":3,\"subtasks\":[{\"subtask\":\"m\",\"description\":\"Merging\",\"id\":\"m\",\"completed\":false}]}\n").utf8),
             Array("{\"type\":\"Start\",\"version\":\"0.1.0\"}\nnot json\n{}\n".utf8)]
        }
    ) { input, probe throws(FuzzFailure) in
        var whole = BootcProgressReader()
        let all = whole.consume(input) + whole.finish()
        var pieces = BootcProgressReader()
        var items: [BootcProgressReader.Item] = []
        for chunk in FuzzBytes.chunks(input) {
            items += pieces.consume(chunk)
            try check(pieces.pendingByteCount <= BootcProgressReader.maxLineBytes, "the reader holds \(pieces.pendingByteCount) bytes")
        }
        items += pieces.finish()
        try check(items == all, "fed in pieces, the reader made other items than fed at once")

        var translator = BootcProgressTranslator(settings: .init(stallSeconds: 1, creepHalfSeconds: 1))
        var shown = 0.0
        var now: UInt64 = 0
        func follow(_ requests: [Request]) throws(FuzzFailure) {
            for request in requests {
                probe.hit("request", NativeSamples.kind(of: request))
                try FuzzBytes.checkValid(request, from: "bootc")
                if case .progress(let value, _) = request {
                    try check(value > shown || value == 0, "the bar went from \(shown) to \(value)")
                    shown = value
                }
            }
        }
        for item in all {
            switch item {
            case .problem(let text):
                probe.hit("problem", String(text.prefix(20)))
                try FuzzBytes.checkLogLine(text, from: "bootc")
            case .event(let event):
                switch event {
                case .start: probe.hit("start"); shown = 0
                case .bytes: probe.hit("bytes")
                case .steps: probe.hit("steps")
                }
                try follow(translator.requests(for: event, at: now))
                now += 300_000_000
                try follow(translator.tick(at: now))
            }
        }
        try follow(translator.finish(.auto, successMessage: "ok", failureMessage: "failed"))
    }
}
