import Foundation
import Testing
import GaugeTestSupport

/// The examples of the README and of every docs/*.md, run as a reader pastes them: every
/// fenced `bash` block carries a `<!-- readme-test: NAME -->` line (or `skip (why)`), and
/// each named one runs whole in `bash -e -o pipefail` from the top of the repository, with
/// `tools/dev-env` putting the build the tests run against on PATH. Each runs in namespaces
/// of its own (a private /tmp, network and PID namespace), so its fixed paths
/// (`/tmp/g.sock`) and anything it leaves running cannot meet another test's; a checkout
/// that is itself under /tmp is mounted back at its path inside the private /tmp.
@Suite struct ReadmeTests {
    typealias Block = ReadmeExamples.Block

    static func blocks(in file: String) throws -> [Block] { try ReadmeExamples.blocks(in: file) }

    static func blocks() throws -> [Block] { try ReadmeExamples.blocks() }

    /// What each named block must print, besides exiting 0.
    static let expectations: [String: [String]] = [
        "demo": ["\u{1B}[?1049h", "\u{1B}[?1049l", "gauged: quit requested"],
        "driving": [
            "progress:  42%\n", "title:     \"Installing\"\n", "visible:   yes\n",
            #"{"target":42,"shown":42,"message":"Unpacking packages","title":"Installing""#,
            "PNG 1920x1080",
        ],
        "dialog": ["gauged: quit requested"],
        "installer": [
            "Setting up gauge-hello (1.0)", "progress:  100%\n", "state:     success\n", "message:   \"Installed\"\n",
            "install.sh exited 1\n", "gaugectl: apt: dpkg failed (exit status 1)", "state:     failure\n",
            "message:   \"gauge-broken: dependency problems - leaving unconfigured\"\n", "PNG 800x600",
        ],
        "psplash": ["gauged: psplash FIFO at /tmp/psplash_fifo", "gauged: quit requested"],
        "plymouth": [
            // In the update mode a count's 40 % is 20 % of the update's bar (PlymouthUpdates).
            "progress:  20%", "title:     \"Installing updates\"\n", "message:   \"Checking disks Do not turn off the computer.\"\n",
            "gauged: quit (retain) requested",
        ],
    ]

    @Test func everyBashBlockIsRunOrSaysWhyNot() throws {
        let blocks = try Self.blocks()
        #expect(try Self.blocks(in: "README.md").count >= 5)
        for block in blocks {
            #expect(!block.name.isEmpty, "a bash block in \(block.file) without a readme-test line:\n\(block.code)")
            #expect(block.name.hasPrefix("skip (") || Self.expectations[block.name] != nil, "\(block.testDescription)")
        }
        let named = blocks.filter { !$0.name.hasPrefix("skip (") }
        let names = Set(named.map(\.name))
        #expect(names.count == named.count, "a block name used twice: \(named.map(\.testDescription))")
        for name in Self.expectations.keys { #expect(names.contains(name), "no block \(name) in README.md or docs/") }
    }

    /// Figures that go stale as the code moves, sizes and test counts, are not in the README:
    /// docs/performance.md keeps every measurement with its method. A size
    /// (`464 KB`, `1,326,088 bytes`) or a count of tests in the README fails here.
    @Test func readmeStatesNoSizeOrTestCount() throws {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let figures = staleFigures(in: text)
        #expect(figures.isEmpty, "README.md states \(figures); put it in docs/performance.md and link it")
        #expect(staleFigures(in: "464 KB, 1.3 MB installed; 1,326,088 bytes; 128 tests; 12 MiB") ==
            ["464 KB", "1.3 MB", "1,326,088 bytes", "128 tests", "12 MiB"])
    }

    /// Every number followed by a unit of size or by "tests" in `text`.
    func staleFigures(in text: String) -> [String] {
        let units: Set<String> = ["B", "KB", "kB", "KiB", "MB", "MiB", "GB", "GiB", "bytes", "tests"]
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map { String($0) }
        var found: [String] = []
        for (number, unit) in zip(words, words.dropFirst()) {
            let bare = unit.trimmingCharacters(in: CharacterSet(charactersIn: ".,;:)"))
            let digits = number.trimmingCharacters(in: CharacterSet(charactersIn: "("))
            guard units.contains(bare), let first = digits.first, first.isNumber,
                  digits.allSatisfy({ $0.isNumber || $0 == "," || $0 == "." }) else { continue }
            found.append("\(digits) \(bare)")
        }
        return found
    }

    /// The README's blocks call what `tools/dev-env` puts on PATH, the development build;
    /// when the suite tests another build (tools/check/check-embedded sets GAUGED), they would
    /// not be running the binary under test, and the normal run has covered them.
    static var testsTheDevelopmentBuild: Bool { getenv("GAUGED") == nil }

    /// Runs `code` as a reader would, from the top of the repository, in a private /tmp (the
    /// repository, if it is under /tmp, bind-mounted back at its own path), network and
    /// PID namespace (with a /proc of its own, as its processes' /proc/self and /proc/PID
    /// must be: SYSLINUX's installer hands mtools /proc/PID/fd/N); then prints the format and
    /// size of every PNG it left in /tmp.
    static func runInPrivateTmp(_ code: String) throws -> (status: Int32, stdout: String, stderr: String) {
        // The repository is entered before the tmpfs hides it; `mount -c` binds "." (the
        // directory entered, not what its path names now) without resolving it to a path.
        let script = """
            cd -- "$1" || exit 91
            mount -t tmpfs tmpfs /tmp || exit 90
            case "$1" in
              /tmp/*) mkdir -p -- "$1" && mount -c --bind . "$1" && cd -- "$1" || exit 92 ;;
            esac
            bash -e -o pipefail -c "$2" 2>&1
            status=$?
            for f in /tmp/*.png; do
              [ -e "$f" ] || continue
              printf '%s %s\\n' "$(head -c 4 "$f" | tail -c 3)" "$(od -An -tu1 -j16 -N8 "$f" | awk '{ print $3 * 256 + $4 "x" $7 * 256 + $8 }')"
            done
            exit $status
            """
        let run = try runProgram(
            "/usr/bin/unshare", ["--mount", "--net", "--pid", "--fork", "--mount-proc", "--", "/bin/bash", "-c", script, "readme", repositoryRoot.path, code])
        return (run.status, run.stdout, run.stderr)
    }

    @Test(.enabled(if: geteuid() == 0, "private /tmp and namespaces need root"),
          .enabled(if: testsTheDevelopmentBuild, "the README runs the development build, not the one under test"),
          .timeLimit(.minutes(2)),
          arguments: try blocks().filter { !$0.name.hasPrefix("skip (") })
    func runsAsWritten(block: Block) throws {
        let gauged = try BuiltBinary.require(BuiltBinary.gauged, "gauged")
        let buildDirectory = URL(fileURLWithPath: gauged).resolvingSymlinksInPath().deletingLastPathComponent().path
        let devBuild = repositoryRoot.appendingPathComponent(".build/debug").resolvingSymlinksInPath().path
        try #require(buildDirectory == devBuild, "tools/dev-env puts \(devBuild) on PATH; the tests run \(buildDirectory)")
        let run = try Self.runInPrivateTmp(block.code)
        #expect(run.status == 0, "\(block.testDescription) exited \(run.status):\n\(block.code)\n\(run.stdout)\(run.stderr)")
        for expected in Self.expectations[block.name] ?? [] {
            #expect(run.stdout.contains(expected), "\(block.testDescription) printed no \(expected.debugDescription):\n\(run.stdout)")
        }
    }

    /// The private /tmp still shows the repository where it is: from a checkout under /tmp
    /// (tools/check/check-any-path runs the suite from one) the blocks find `tools/dev-env`
    /// and the build, and what they write to /tmp stays in the private one.
    @Test(.enabled(if: geteuid() == 0, "private /tmp and namespaces need root"))
    func privateTmpKeepsTheRepository() throws {
        let run = try Self.runInPrivateTmp(#"pwd; test -x tools/dev-env && echo dev-env; ls -A /tmp | grep -cv '^$' || true"#)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == repositoryRoot.path)
        #expect(lines.dropFirst().first == "dev-env")
        let underTmp = repositoryRoot.path.hasPrefix("/tmp/")
        #expect(lines.dropFirst(2).first == (underTmp ? "1" : "0"), "/tmp inside: \(run.stdout)")
    }
}

extension ReadmeExamples.Block: CustomTestStringConvertible {}
