import Foundation
import GaugeTestSupport
import Testing


/// tools/check/check-rules: the rules the build checks so the house stays in order (a function
/// over 60 lines, a Swift file of Sources/ over 600, `public` where `package` is meant, a comment naming a path that is not
/// there). Each rule is shown failing on a small tree made for it; tools/test runs the
/// checker on the repository itself.
@Suite struct HouseRulesTests {
    /// Runs the checker on `root`; with `allowing` (or `allowingFiles`), a copy of it whose
    /// ALLOWED_LONG ("repository/path:function") or ALLOWED_LONG_FILES ("repository/path")
    /// holds those entries instead of its own.
    private func checkRules(
        root: String, allowing entries: [String] = [], allowingFiles files: [String] = []
    ) throws -> (status: Int32, output: String) {
        var script = repositoryRoot.appendingPathComponent("tools/check/check-rules").path
        if !entries.isEmpty || !files.isEmpty {
            var text = try String(contentsOfFile: script, encoding: .utf8)
            text = try replacingList("ALLOWED_LONG", with: entries, in: text)
            text = try replacingList("ALLOWED_LONG_FILES", with: files, in: text)
            script = root + "/check-rules-allowing"
            try text.write(toFile: script, atomically: false, encoding: .utf8)
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

    /// `text` with the dictionary `name` holding `entries` (left as it is when there are none).
    private func replacingList(_ name: String, with entries: [String], in text: String) throws -> String {
        guard !entries.isEmpty else { return text }
        let start = try #require(text.range(of: "\n\(name) = {\n"))
        // The list's closing brace, on the line after the opening one when the list is empty.
        let end = try #require(text.range(of: "\n}\n", range: text.index(before: start.upperBound)..<text.endIndex))
        let list = entries.map { "    \"\($0)\": \"made for the test\",\n" }.joined()
        return String(text[..<start.upperBound] + list + text[end.lowerBound...].dropFirst())
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
        // A closure in a table is measured as a function is; the short one beside it is not.
        let longTable = "enum Handlers {\n    static let handlers: [String: () -> Void] = [\n        \"short\": { step() },\n"
            + "        \"long\": {\n" + String(repeating: "            step()\n", count: 60) + "        },\n    ]\n}\n"
        // Python under tools/: from `def` to its last line, a nested function on its own
        // (and in its enclosing one's lines); 60 lines is still short.
        let pythonBody = String(repeating: "    step()\n", count: 60)
        let longPython = "import os\n\n\ndef too_long():\n" + pythonBody + "\n\ndef fine():\n"
            + String(repeating: "    step()\n", count: 59) + "\n\ndef outer():\n    def nested():\n"
            + pythonBody.replacingOccurrences(of: "    step()", with: "        step()") + "    nested()\n"
        // A bash function in a tools/ script, from `name() {` to the `}` at its indentation.
        let longBash = "#!/usr/bin/env bash\ntoo_long() {\n" + String(repeating: "  step\n", count: 60) + "}\n"
            + "short() { step; }\nfine() {\n" + String(repeating: "  step\n", count: 58) + "}\n"
        // Paths of the made tree, spelt in pieces so no line here names a tool of this
        // repository that is not there.
        let gone = ["tools", "build-embedded"].joined(separator: "/")
        let real = ["tools", "real"].joined(separator: "/")
        let longPy = ["tools", "long.py"].joined(separator: "/")
        let longShell = ["tools", "long-shell"].joined(separator: "/")
        let gonePy = ["tools", "gone.py"].joined(separator: "/")
        // Functions the allowlist lets be long, one short now and one gone: both entries
        // must go. The checker is run with those two as its whole list.
        let allowed = ["Sources/Module/Allowed.swift:wasLong", "\(gonePy):main"]
        // A Swift file of Sources/ over 600 lines of short functions is a breach of its own;
        // one of 600 is not, nor a long one under Tests/; an allowed long file that is short now goes.
        let manyShort = String(repeating: "func one() {}\n", count: 601)
        let allowedFiles = ["Sources/Module/WasLongFile.swift"]
        let stale = allowed.map {
            "tools/check/check-rules: functions: \($0) is allowed to be long but no longer is; take it off ALLOWED_LONG"
        } + allowedFiles.map {
            "tools/check/check-rules: files: \($0) is allowed to be long but no longer is; take it off ALLOWED_LONG_FILES"
        }
        let root = try tree([
            "Sources/Module/Long.swift": long + short,
            "Sources/Module/Allowed.swift": "func wasLong() {}\n",
            "Sources/Module/Open.swift": "public struct Open {}\nlet text = \"public var inAString\"\n",
            "Sources/Module/Pointer.swift": "/// Built by \(gone) (see docs/none.md).\nlet x = 1 // \(real)\n",
            real: "#!/bin/sh\n",
            "docs/guide.md": "Run `\(real)`, then read docs/guide.md and docs/gone.md.\n",
            "Sources/Module/Table.swift": longTable,
            longPy: longPython,
            longShell: longBash,
            "Sources/Module/LongFile.swift": manyShort,
            "Sources/Module/FullFile.swift": String(manyShort.dropFirst("func one() {}\n".count)),
            "Sources/Module/WasLongFile.swift": "func one() {}\n",
            "Tests/ModuleTests/LongTests.swift": manyShort,
        ])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let result = try checkRules(root: root, allowing: allowed, allowingFiles: allowedFiles)
        #expect(result.status == 1)
        let lines = result.output.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("check-rules:") }
        #expect(Set(lines) == Set(stale).union([
            "Sources/Module/Long.swift:1: functions: tooLong is 62 lines, more than 60",
            "Sources/Module/Open.swift:1: public: `public` where `package` is meant (no module is imported from outside)",
            "Sources/Module/Pointer.swift:1: paths: \(gone) does not exist",
            "Sources/Module/Pointer.swift:1: paths: docs/none.md does not exist",
            "docs/guide.md:1: paths: docs/gone.md does not exist",
            "Sources/Module/Table.swift:4: functions: handlers (a closure in the table) is 62 lines, more than 60",
            "\(longPy):4: functions: too_long is 61 lines, more than 60",
            "\(longPy):130: functions: nested is 61 lines, more than 60",
            "\(longPy):129: functions: outer is 63 lines, more than 60",
            "\(longShell):2: functions: too_long is 62 lines, more than 60",
            "Sources/Module/LongFile.swift:1: files: 601 lines, more than 600; split it by what its parts do",
        ]), "\(result.output)")
    }
}
