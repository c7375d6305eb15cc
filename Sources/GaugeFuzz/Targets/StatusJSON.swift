import GaugeProtocol

/// What `gaugectl` reads back: reply lines and the `status` JSON.
extension FuzzTarget {
    static let statusJSON = FuzzTarget(
        name: "status-json",
        summary: "reply lines and JSON as gaugectl reads them: any JSON value written back on one line "
            + "reads as itself, a status read from a reply writes and reads back equal, nesting bounded",
        maxLength: 6000, dictionary: ["ok ", "err ", "{", "}", "[", "]", "\"", ":", ",", "\\u", "\\ud83d\\ude00", "\\\"", "null", "true", "false", "-0", "1e308", "1e-400", "\"target\":", "\"display\":"],
        seeds: {
            let status = Status(target: 42.5, shown: 40, message: "Copying \"files\"\t日本", title: "T", display: .init(name: "memory 640x480", width: 640, height: 480, format: "XRGB8888"), frames: 7)
            var failed = status
            failed.failure = Status.Failure(title: "Update \"failed\"", summary: "disk full\t", lines: 3, dropped: 1)
            return [Array(("ok " + status.json()).utf8), Array(("ok " + failed.json()).utf8), Array("[1,-2.5e3,{\"a\":[true,false,null]},\"\\u00e9\\n\"]".utf8), Array("err syntax x".utf8)]
        }
    ) { input, probe throws(FuzzFailure) in
        let text = String(decoding: input, as: UTF8.self)
        if let reply = Reply.parse(text) {
            probe.hit("reply", reply == .ok ? "ok" : "other")
            if case .ok(let payload?) = reply, let status = Status.parse(json: payload) {
                probe.hit("status")
                let json = status.json()
                try check(Status.parse(json: json) == status, "status \(json) does not read back as itself")
                _ = status.humanReadable
            }
        }
        for candidate in [text, String(text.drop { $0 != "{" && $0 != "[" })] {
            guard let value = JSONValue.parse(candidate) else { continue }
            probe.hit("json", StatusSamples.shape(of: value))
            let written = value.encoded
            try check(!written.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{2028}" || $0 == "\u{2029}" },
                      "JSON written with a raw control character: \(written.debugDescription.prefix(200))")
            let back = JSONValue.parse(written)
            try check(back == value, "JSON \(written.prefix(200)) reads back otherwise")
        }
    }
}

enum StatusSamples {
    /// The kind of a value and, for a container, how many it holds and of which kinds.
    static func shape(of value: JSONValue, depth: Int = 0) -> String {
        switch value {
        case .null: "null"
        case .bool: "bool"
        case .number(let number): number == number.rounded() ? "integer" : "number"
        case .string(let text): "string \(bucket(text.utf8.count))"
        case .array(let items):
            depth > 1 ? "array" : "[\(bucket(items.count)): " + Set(items.map { shape(of: $0, depth: depth + 1) }).sorted().joined(separator: ",") + "]"
        case .object(let members):
            depth > 1 ? "object" : "{\(bucket(members.count)): " + Set(members.map { shape(of: $0.value, depth: depth + 1) }).sorted().joined(separator: ",") + "}"
        }
    }
}
