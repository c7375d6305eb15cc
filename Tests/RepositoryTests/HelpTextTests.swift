import Foundation
import GaugeProtocol
import Testing
import GaugeTestSupport

/// `gauged --help`, `gaugectl --help` and every `gaugectl COMMAND --help` share one
/// layout and fit an 80-column terminal.
@Suite struct HelpTextTests {
    static func helpTexts() throws -> [(String, String)] {
        let daemon = try BuiltBinary.require(BuiltBinary.gauged, "gauged")
        let client = try BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl")
        var runs = [("gauged --help", try runProgram(daemon, ["--help"])), ("gaugectl --help", try runProgram(client, ["--help"]))]
        let overview = runs[1].1.stdout
        let section = overview.components(separatedBy: "Commands:\n")[1].components(separatedBy: "\n\n")[0]
        let commands = section.split(separator: "\n").filter { !$0.hasPrefix("   ") }.map { String($0.split(separator: " ")[0]) }
        #expect(commands.count >= 20, "\(commands)")
        for command in commands {
            runs.append(("gaugectl \(command) --help", try runProgram(client, [command, "--help"])))
        }
        for (name, run) in runs {
            #expect(run.status == 0 && run.stderr.isEmpty, "\(name): \(run.status) \(run.stderr)")
        }
        return runs.map { ($0.0, $0.1.stdout) }
    }

    @Test func everyHelpFitsEightyColumnsInOneLayout() throws {
        for (name, text) in try Self.helpTexts() {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.first?.hasPrefix("Usage: ") == true, "\(name) starts with its usage")
            var inTable = false
            for line in lines {
                #expect(line.count <= HelpText.width, "\(name): \(line.count) columns: \(line)")
                #expect(!line.hasSuffix(" "), "\(name): trailing space: \(line)")
                // Tables (after "Options:", "Commands:"): a label at column 2, its
                // description at column 22, wrapped lines of it at column 22 too.
                if line.isEmpty || !line.hasPrefix(" ") { inTable = line.hasSuffix(":") }
                guard inTable, line.hasPrefix("  ") else { continue }
                let indent = line.prefix { $0 == " " }.count
                #expect(indent == 2 || indent == HelpText.column, "\(name): indented \(indent): \(line)")
                if indent == 2, line.count > HelpText.column {
                    let chars = Array(line)
                    let startsAtColumn = chars[HelpText.column - 1] == " " && chars[HelpText.column] != " "
                    let labelOnly = !line.dropFirst(2).contains("  ")
                    #expect(startsAtColumn || labelOnly, "\(name): description not at column \(HelpText.column): \(line)")
                }
            }
        }
    }

    @Test func wrappingKeepsEveryWordAndBreaksOnlyAtSpaces() {
        let text = (1...60).map { "word\($0)" }.joined(separator: " ")
        let lines = HelpText.table([("--option VALUE", text), ("--a-label-longer-than-the-column", "short")])
        #expect(lines.allSatisfy { $0.count <= HelpText.width })
        #expect(lines[0].hasPrefix("  --option VALUE      word1 "))
        #expect(lines.joined(separator: " ").split(separator: " ").filter { $0.hasPrefix("word") }.count == 60)
        #expect(lines.suffix(2) == ["  --a-label-longer-than-the-column", String(repeating: " ", count: HelpText.column) + "short"])
    }
}
