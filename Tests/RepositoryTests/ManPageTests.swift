import Foundation
import GaugeDaemon
import GaugeRender
import Testing
import GaugeTestSupport

/// The manual pages in man/: formatted by man-db without a single warning, and naming
/// every option, command and theme key there is.
@Suite struct ManPageTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("man")
    static let pages = ["gauged.8", "gaugectl.1", "gauge.theme.5", "plymouth.1"]

    static func source(_ page: String) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(page), encoding: .utf8)
    }

    @Test(arguments: pages)
    func formatsWithoutWarnings(page: String) throws {
        let man = "/usr/bin/man"
        try #require(FileManager.default.isExecutableFile(atPath: man), "no man; tools/install-deps --test installs man-db")
        let path = Self.directory.appendingPathComponent(page).path
        let run = try runProgram(man, ["--warnings", "-l", path], environment: ["MANWIDTH": "80", "LC_ALL": "C.UTF-8", "MAN_KEEP_FORMATTING": ""])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.isEmpty, "man --warnings on \(page):\n\(run.stderr)")
        #expect(run.stdout.contains("NAME"), "\(run.stdout.prefix(200))")
        #expect(run.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(page) fits 80 columns")
    }

    /// `.BR key`, `.B key` or `.BR "key"` opening a line of the page: roff's hyphens escaped.
    static func mentions(_ name: String, in source: String) -> Bool {
        let roff = name.replacingOccurrences(of: "-", with: "\\-")
        return source.split(separator: "\n").contains { line in
            line.hasPrefix(".") && line.split(separator: " ").contains { $0 == roff || $0 == roff + "," || $0 == "\"" + roff }
        }
    }

    @Test func gaugedPageNamesEveryOption() throws {
        let source = try Self.source("gauged.8")
        for (label, _) in DaemonOptions.optionTable {
            for word in label.split(separator: " ") where word.hasPrefix("-") {
                let option = String(word.trimmingCharacters(in: CharacterSet(charactersIn: ",")))
                #expect(Self.mentions(option, in: source), "gauged.8 lacks \(option)")
            }
        }
    }

    @Test func gaugectlPageNamesEveryCommand() throws {
        let source = try Self.source("gaugectl.1")
        let client = try BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl")
        let help = try runProgram(client, ["--help"]).stdout
        let section = help.components(separatedBy: "Commands:\n")[1].components(separatedBy: "\n\n")[0]
        let commands = section.split(separator: "\n").filter { !$0.hasPrefix("   ") }.map { String($0.split(separator: " ")[0]) }
        #expect(commands.count >= 20)
        for command in commands {
            #expect(Self.mentions(command, in: source), "gaugectl.1 lacks the command \(command)")
        }
        for option in ["--socket", "--timeout", "--no-wait", "--version"] {
            #expect(Self.mentions(option, in: source), "gaugectl.1 lacks \(option)")
        }
    }

    @Test func themePageNamesEveryKey() throws {
        let source = try Self.source("gauge.theme.5")
        for key in Theme.keys {
            #expect(Self.mentions(key, in: source), "gauge.theme.5 lacks the key \(key)")
        }
    }
}
