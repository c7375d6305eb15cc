import Foundation
import Testing

private let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

/// tools/check/check-rules: the rules the build checks so the house stays in order (a function
/// over 60 lines, `public` where `package` is meant, a comment naming a path that is not
/// there). Each rule is shown failing on a small tree made for it; tools/test runs the
/// checker on the repository itself.
@Suite struct HouseRulesTests {
    private func checkRules(root: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [repositoryRoot.appendingPathComponent("tools/check/check-rules").path, "--root", root]
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
        // A function the allowlist lets be long, short now: the entry must go.
        let rules = try String(contentsOfFile: repositoryRoot.appendingPathComponent("tools/check/check-rules").path, encoding: .utf8)
        let allowed = rules.split(separator: "\n").filter { $0.hasPrefix("    \"") && $0.contains(".swift:") }
            .map { $0.split(separator: "\"")[1].split(separator: ":").map(String.init) }
        let (allowedFile, allowedFunction) = try (#require(allowed.first)[0], #require(allowed.first)[1])
        // Every entry of that file is stale in the made tree, which has only the one short function.
        let stale = allowed.filter { $0[0] == allowedFile }.map {
            "tools/check/check-rules: functions: \($0[0]):\($0[1]) is allowed to be long but no longer is; take it off ALLOWED_LONG"
        }
        let root = try tree([
            "Sources/Module/Long.swift": long + short,
            "Sources/Module/\(allowedFile)": allowedFunction == "init"
                ? "struct S {\n    init() {}\n}\n" : "func \(allowedFunction)() {}\n",
            "Sources/Module/Open.swift": "public struct Open {}\nlet text = \"public var inAString\"\n",
            "Sources/Module/Pointer.swift": "/// Built by \(gone) (see docs/none.md).\nlet x = 1 // \(real)\n",
            real: "#!/bin/sh\n",
            "docs/guide.md": "Run `\(real)`, then read docs/guide.md and docs/gone.md.\n",
        ])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let result = try checkRules(root: root)
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
