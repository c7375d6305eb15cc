import Foundation

/// The top of the repository (this file is in Tests/GaugeTestSupport).
package let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

/// The fenced `bash` blocks of the README and of every docs/*.md, each with the name its
/// `<!-- readme-test: NAME -->` line gives it (RepositoryTests runs them; the process tests
/// take the recipes they share with the README from here).
package enum ReadmeExamples {
    package struct Block: Sendable {
        /// The file it is in, relative to the top of the repository.
        package var file: String
        package var name: String
        package var code: String
        package var testDescription: String { "\(file): \(name)" }
    }

    /// README.md and every docs/*.md, in that order.
    package static func documents() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: repositoryRoot.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
        return ["README.md"] + docs
    }

    package static func blocks(in file: String) throws -> [Block] {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent(file), encoding: .utf8)
        var blocks: [Block] = []
        var marker: String?
        var code: [Substring]?
        var previous: Substring = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if var open = code {
                if line == "```" {
                    blocks.append(Block(file: file, name: marker ?? "", code: open.joined(separator: "\n") + "\n"))
                    code = nil
                } else {
                    open.append(line)
                    code = open
                }
            } else if line.hasPrefix("```bash") {
                let prefix = "<!-- readme-test: "
                marker = previous.hasPrefix(prefix) && previous.hasSuffix(" -->")
                    ? String(previous.dropFirst(prefix.count).dropLast(4)) : nil
                code = []
            }
            if !line.isEmpty { previous = line }
        }
        return blocks
    }

    package static func blocks() throws -> [Block] {
        try documents().flatMap { try blocks(in: $0) }
    }
}
