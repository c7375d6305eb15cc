import Foundation
import Testing

private let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

/// tools/check/check-rules: the rules the build checks so the house stays in order (a function
/// over 60 lines, `public` where `package` is meant, a comment naming a path that is not
/// there). Each rule is shown failing on a small tree made for it; tools/test runs the
/// checker on the repository itself.
@Suite struct HouseRulesTests {
    /// Runs the checker on `root`; with `allowing`, a copy of it whose ALLOWED_LONG holds
    /// that one entry ("File.swift:function") besides its own.
    private func checkRules(root: String, allowing entry: String? = nil) throws -> (status: Int32, output: String) {
        var script = repositoryRoot.appendingPathComponent("tools/check/check-rules").path
        if let entry {
            let text = try String(contentsOfFile: script, encoding: .utf8)
            let marker = "ALLOWED_LONG = {\n"
            #expect(text.contains(marker))
            script = root + "/check-rules-allowing"
            try text.replacingOccurrences(of: marker, with: marker + "    \"\(entry)\": \"made for the test\",\n")
                .write(toFile: script, atomically: false, encoding: .utf8)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script, "--root", root]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    private func tree(_ files: [String: String]) throws -> String {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("rules-\(UUID().uuidString)").path
        for (path, text) in files {
            let full = root + "/" + path
            try FileManager.default.createDirectory(
                atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: full, atomically: false, encoding: .utf8)
        }
        return root
    }

    @Test func eachRuleCatchesItsBreach() throws {
        let long = "func tooLong() {\n" + String(repeating: "    step()\n", count: 60) + "}\n"
        let short = "func fine() {\n" + String(repeating: "    step()\n", count: 58) + "}\n"
        // Paths of the made tree, spelt in pieces so no line here names a tool of this
        // repository that is not there.
        let gone = ["tools", "build-embedded"].joined(separator: "/")
        let real = ["tools", "real"].joined(separator: "/")
        // A function the allowlist lets be long, short now: the entry must go. The
        // repository's own list may be empty, so the checker is run with one entry added.
        let stale = [
            "tools/check/check-rules: functions: Allowed.swift:wasLong is allowed to be long but no longer is; take it off ALLOWED_LONG"
        ]
        let root = try tree([
            "Sources/Module/Long.swift": long + short,
            "Sources/Module/Allowed.swift": "func wasLong() {}\n",
            "Sources/Module/Open.swift": "public struct Open {}\nlet text = \"public var inAString\"\n",
            "Sources/Module/Pointer.swift": "/// Built by \(gone) (see docs/none.md).\nlet x = 1 // \(real)\n",
            real: "#!/bin/sh\n",
            "docs/guide.md": "Run `\(real)`, then read docs/guide.md and docs/gone.md.\n",
        ])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let result = try checkRules(root: root, allowing: "Allowed.swift:wasLong")
        #expect(result.status == 1)
        let lines = result.output.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("check-rules:") }
        #expect(Set(lines) == Set(stale).union([
            "Sources/Module/Long.swift:1: functions: tooLong is 62 lines, more than 60",
            "Sources/Module/Open.swift:1: public: `public` where `package` is meant (no module is imported from outside)",
            "Sources/Module/Pointer.swift:1: paths: \(gone) does not exist",
            "Sources/Module/Pointer.swift:1: paths: docs/none.md does not exist",
            "docs/guide.md:1: paths: docs/gone.md does not exist",
        ]), "\(result.output)")
    }
}
