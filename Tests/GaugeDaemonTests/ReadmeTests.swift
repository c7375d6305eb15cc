import Foundation
import Testing

/// The README's examples, run as a reader pastes them: every fenced `bash` block carries a
/// `<!-- readme-test: NAME -->` line (or `skip (why)`), and each named one runs whole in
/// `bash -e -o pipefail` from the top of the repository, with `tools/dev-env` putting the
/// build the tests run against on PATH. Each runs in namespaces of its own (a private
/// /tmp, network and PID namespace), so its fixed paths (`/tmp/g.sock`) and anything it
/// leaves running cannot meet another test's.
@Suite struct ReadmeTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    struct Block: Sendable, CustomTestStringConvertible {
        var name: String
        var code: String
        var testDescription: String { name }
    }

    static let readme = Self.repositoryRoot.appendingPathComponent("README.md")

    static func blocks() throws -> [Block] {
        let text = try String(contentsOf: readme, encoding: .utf8)
        var blocks: [Block] = []
        var marker: String?
        var code: [Substring]?
        var previous: Substring = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if var open = code {
                if line == "```" {
                    blocks.append(Block(name: marker ?? "", code: open.joined(separator: "\n") + "\n"))
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

    /// What each named block must print, besides exiting 0.
    static let expectations: [String: [String]] = [
        "demo": ["\u{1B}[?1049h", "\u{1B}[?1049l", "gauged: quit requested"],
        "driving": [
            "progress:  42%\n", "title:     \"Installing\"\n", "visible:   yes\n",
            #"{"target":42,"shown":42,"message":"Unpacking packages","title":"Installing""#,
            "PNG 1920x1080",
        ],
        "dialog": ["gauged: quit requested"],
        "psplash": ["gauged: psplash FIFO at /tmp/psplash_fifo", "gauged: quit requested"],
        "plymouth": [
            "progress:  40%", "title:     \"Installing updates\"\n", "message:   \"Checking disks\"\n",
            "gauged: quit (retain) requested",
        ],
    ]

    @Test func everyBashBlockIsRunOrSaysWhyNot() throws {
        let blocks = try Self.blocks()
        #expect(blocks.count >= 5)
        for block in blocks {
            #expect(!block.name.isEmpty, "a bash block without a readme-test line:\n\(block.code)")
            #expect(block.name.hasPrefix("skip (") || Self.expectations[block.name] != nil, "\(block.name)")
        }
        let names = Set(blocks.map(\.name))
        for name in Self.expectations.keys { #expect(names.contains(name), "no README block \(name)") }
    }

    /// The README's blocks call what `tools/dev-env` puts on PATH, the development build;
    /// when the suite tests another build (tools/check/check-embedded sets GAUGED), they would
    /// not be running the binary under test, and the normal run has covered them.
    static var testsTheDevelopmentBuild: Bool { getenv("GAUGED") == nil }

    @Test(.enabled(if: geteuid() == 0, "private /tmp and namespaces need root"),
          .enabled(if: testsTheDevelopmentBuild, "the README runs the development build, not the one under test"),
          .timeLimit(.minutes(2)),
          arguments: try blocks().filter { !$0.name.hasPrefix("skip (") })
    func runsAsWritten(block: Block) throws {
        let gauged = try BuiltBinary.require(BuiltBinary.gauged, "gauged")
        let buildDirectory = URL(fileURLWithPath: gauged).resolvingSymlinksInPath().deletingLastPathComponent().path
        let devBuild = Self.repositoryRoot.appendingPathComponent(".build/debug").resolvingSymlinksInPath().path
        try #require(buildDirectory == devBuild, "tools/dev-env puts \(devBuild) on PATH; the tests run \(buildDirectory)")
        // After the block: what it left in /tmp, for the checks (inside the private /tmp).
        let script = """
            mount -t tmpfs tmpfs /tmp || exit 90
            cd "$1"
            bash -e -o pipefail -c "$2" 2>&1
            status=$?
            for f in /tmp/*.png; do
              [ -e "$f" ] || continue
              printf '%s %s\\n' "$(head -c 4 "$f" | tail -c 3)" "$(od -An -tu1 -j16 -N8 "$f" | awk '{ print $3 * 256 + $4 "x" $7 * 256 + $8 }')"
            done
            exit $status
            """
        let run = try runProgram(
            "/usr/bin/unshare", ["--mount", "--net", "--pid", "--fork", "--", "/bin/bash", "-c", script, "readme", Self.repositoryRoot.path, block.code])
        #expect(run.status == 0, "README block \(block.name) exited \(run.status):\n\(block.code)\n\(run.stdout)\(run.stderr)")
        for expected in Self.expectations[block.name] ?? [] {
            #expect(run.stdout.contains(expected), "README block \(block.name) printed no \(expected.debugDescription):\n\(run.stdout)")
        }
    }
}
