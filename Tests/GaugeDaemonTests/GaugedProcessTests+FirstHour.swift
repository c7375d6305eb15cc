import Foundation
import GaugeProtocol
import GaugeRender
import Glibc
import Testing
import GaugeTestSupport

// What a new user meets in the first hour, tried as they would try it.

extension GaugedProcessTests {
    /// `gaugectl reload` of a theme with bad lines answers err with the first problem's
    /// file and line and keeps the theme in use; `gaugectl theme` alone prints it.
    @Test func reloadNamesTheFirstProblemAndThemeAlonePrintsTheThemeInUse() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("look.theme")
        try "[bar]\nfill_color = #112233\nlogo = logo.png\n".write(toFile: path, atomically: false, encoding: .utf8)
        let logo = try #require(FileManager.default.contents(atPath: repositoryRoot.path + "/data/gauge-logo.png"))
        #expect(FileManager.default.createFile(atPath: directory.appending("logo.png"), contents: logo))
        let daemon = try GaugedProcess(["--theme", path])
        #expect(!daemon.log.contains("theme:"), "the file, its logo beside it, loads: \(daemon.log)")
        let shown = try gaugectl(["--socket", daemon.socketPath, "theme"])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("fill_color = #112233\n"), "\(shown.stdout)")
        #expect(shown.stdout.contains("logo = \(directory.appending("logo.png"))\n"), "\(shown.stdout)")
        #expect(shown.stdout.hasPrefix("# theme file \(path)"), "\(shown.stdout)")

        try "fill_color = #445566\nfont = /nonexistent/Sans.ttf\nbogus_key = 1\nbar_height = 9999\n"
            .write(toFile: path, atomically: false, encoding: .utf8)
        let reload = try gaugectl(["--socket", daemon.socketPath, "reload"])
        #expect(reload.status == 1)
        #expect(reload.stderr.contains("\(path):2: font: cannot open /nonexistent/Sans.ttf"), "\(reload.stderr)")
        #expect(reload.stderr.contains("the theme in use stays"), "\(reload.stderr)")
        #expect(try gaugectl(["--socket", daemon.socketPath, "theme"]).stdout.contains("fill_color = #112233"), "the old theme stays")
    }

    /// A relative path given to `gaugectl theme` is the caller's, not the daemon's.
    @Test func gaugectlMakesThemePathsAbsoluteFromTheCallersDirectory() throws {
        let daemon = try GaugedProcess()
        let gaugectlPath = try BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl")
        let run = try runProgram(
            "/bin/sh", ["-c", "cd \(repositoryRoot.path) && exec \(gaugectlPath) --socket \(daemon.socketPath) theme logo=data/gauge-logo.png"])
        #expect(run.status == 0, "\(run.stderr)")
        let shown = try gaugectl(["--socket", daemon.socketPath, "theme"])
        #expect(shown.stdout.contains("logo = \(repositoryRoot.path)/data/gauge-logo.png"), "\(shown.stdout)")
    }

    /// A font named by family at run time: the daemon finds its file (the caller's
    /// directory plays no part), and a family no file has is refused with why.
    @Test func gaugectlThemeTakesAFontFamily() throws {
        let daemon = try GaugedProcess()
        let run = try gaugectl(["--socket", daemon.socketPath, "theme", "font=DejaVu Serif", "bold_font=DejaVu Serif:Bold"])
        #expect(run.status == 0, "\(run.stderr)")
        let shown = try gaugectl(["--socket", daemon.socketPath, "theme"]).stdout
        #expect(shown.contains("font = /usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf\n"), "\(shown)")
        #expect(shown.contains("bold_font = /usr/share/fonts/truetype/dejavu/DejaVuSerif-Bold.ttf\n"), "\(shown)")
        let unknown = try gaugectl(["--socket", daemon.socketPath, "theme", "font=Nope Sans"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("font: no font of family 'Nope Sans' in style 'Regular'"), "\(unknown.stderr)")
    }

    /// The sample theme works from the checkout: its base is in data/themes, the logo beside them.
    @Test func theSampleThemeWorksFromTheCheckout() throws {
        let gauged = try BuiltBinary.require(BuiltBinary.gauged, "gauged")
        let directory = TemporaryDirectory()
        let socket = directory.appending("g.sock")
        let run = try runProgram(
            "/bin/sh",
            ["-c", "cd \(repositoryRoot.path) && { GAUGE_THEMES=data/themes \(gauged) --theme data/gauge.theme --display memory:320x240 --socket \(socket) & sleep 1; kill $!; wait; }"])
        #expect(run.stderr.contains("listening on"), "\(run.stderr)")
        // The sample's logo is the firmware's; where there is none (this machine may have
        // one), the log says so and the fallback is found.
        let lines = run.stderr.split(separator: "\n")
        #expect(lines.filter { $0.contains("firmware logo: ") }.allSatisfy { $0.hasSuffix(" data/themes/../gauge-logo.png instead") },
                "the fallback is shown: \(run.stderr)")
        #expect(!lines.contains { $0.contains("instead; logo: ") || $0.hasPrefix("gauged: logo: ") }, "the logo is found: \(run.stderr)")
        #expect(!run.stderr.contains("theme:"), "\(run.stderr)")
    }

    /// Every KEY=VALUE in `gaugectl theme --help` is a key the theme has.
    @Test func theThemeHelpShowsOnlyRealKeys() throws {
        let help = try gaugectl(["theme", "--help"]).stdout
        let keys = help.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "'" })
            .filter { $0.contains("=") && !$0.hasPrefix("KEY") && !$0.hasPrefix("[KEY") && !$0.hasPrefix("-") }
            .map { String($0.split(separator: "=")[0]) }
        #expect(!keys.isEmpty, "\(help)")
        for key in keys { #expect(Theme.keys.contains(key), "theme --help shows '\(key)', no theme key") }
    }

    /// Natural mistakes get a clear word at once: a wait for a daemon says what it waits
    /// for within a moment, a path that is no socket fails at once saying so, and an
    /// err reply does not repeat its code.
    @Test func naturalMistakesAreToldAtOnce() throws {
        let directory = TemporaryDirectory()
        let gaugectlPath = try BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl")
        // The notice before the wait ends: stderr read with a deadline of 1 s.
        let waiting = try runProgram(
            "/bin/sh", ["-c", "\(gaugectlPath) --timeout 3 --socket \(directory.appending("none.sock")) status 2>&1 & sleep 1; kill $!"])
        #expect(waiting.stdout.contains("no daemon on \(directory.appending("none.sock")) yet; waiting up to 3 s"), "\(waiting.stdout)")

        let folder = directory.appending("dir")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let plain = directory.appending("plain")
        #expect(FileManager.default.createFile(atPath: plain, contents: Data()))
        for (path, kind) in [(folder, "a directory"), (plain, "a file")] {
            let started = monotonicNow()
            let run = try gaugectl(["--socket", path, "status"])
            #expect(monotonicNow() - started < 2, "no wait for what can never be a daemon")
            #expect(run.status == 3 && run.stderr.contains("\(path) is not a socket (\(kind))"), "\(run.stderr)")
        }

        let daemon = try GaugedProcess()
        let unknown = try gaugectl(["--socket", daemon.socketPath, "theme", "bogus=1"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr == "gaugectl: unknown theme key 'bogus'\n", "\(unknown.stderr)")
    }

    /// An unknown command or key suggests the nearest one.
    @Test func anUnknownCommandOrKeySuggestsTheNearest() throws {
        let daemon = try GaugedProcess()
        let command = try gaugectl(["--socket", daemon.socketPath, "progres", "3"])
        #expect(command.status == 2 && command.stderr.contains("unknown command 'progres' (did you mean 'progress'?)"), "\(command.stderr)")
        let key = try gaugectl(["--socket", daemon.socketPath, "theme", "fill_colour=#ff0000"])
        #expect(key.status == 1 && key.stderr.contains("unknown theme key 'fill_colour' (did you mean 'fill_color'?)"), "\(key.stderr)")
        #expect(try daemon.request("progess 4").contains("(did you mean 'progress'?)"))
        let far = try gaugectl(["--socket", daemon.socketPath, "theme", "zzz=1"])
        #expect(!far.stderr.contains("did you mean"), "no hint for what is nothing like a key: \(far.stderr)")
    }

    /// `\n` breaks the message line in --message as it does in `gaugectl gauge`'s
    /// stream: one rule for both; `\\n` keeps a backslash and an n.
    @Test func aWrittenNewlineBreaksEveryMessageAlike() throws {
        let daemon = try GaugedProcess()
        let socket = ["--socket", daemon.socketPath]
        #expect(try gaugectl(socket + ["progress", "40", "--message", #"Copying\nfile 3 of 9"#]).status == 0)
        let viaOption = try daemon.status().message
        #expect(viaOption == "Copying\u{2028}file 3 of 9", "\(viaOption.debugDescription)")
        let gaugePath = try BuiltBinary.require(BuiltBinary.gaugectl, "gaugectl")
        let run = try runProgram(
            "/bin/sh", ["-c", #"printf 'XXX\n50\nCopying\\nfile 3 of 9\nXXX\n' | "# + "\(gaugePath) --socket \(daemon.socketPath) gauge --on-eof keep"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try daemon.status().message == viaOption, "the same text, the same lines")
        #expect(try gaugectl(socket + ["message", #"C:\\new"#]).status == 0)
        #expect(try daemon.status().message == #"C:\new"#)
        #expect(try gaugectl(socket + ["success", #"Done\nReboot now"#]).status == 0)
        #expect(try daemon.status().message == "Done\u{2028}Reboot now")
    }

    /// `--socket` means gauged's socket everywhere; SWUpdate's is `--progress-socket`.
    @Test func swupdatesSocketIsTheProgressSocketOption() throws {
        let misplaced = try gaugectl(["swupdate", "--socket", "/tmp/swupdateprog"])
        #expect(misplaced.status == 2)
        #expect(misplaced.stderr.contains("--socket must come before the command (SWUpdate's progress socket is --progress-socket)"), "\(misplaced.stderr)")
        let help = try gaugectl(["swupdate", "--help"]).stdout
        #expect(help.contains("--progress-socket PATH"), "\(help)")
    }

    /// The terminal demo as the README runs it, stdout and stderr one terminal: no log
    /// line is written while the picture is up (between the alternate screen's start and
    /// its end); they all come after it, each once, one of them for the size and scale.
    @Test func logLinesNeverDrawOverTheTerminalDisplay() throws {
        let gauged = try BuiltBinary.require(BuiltBinary.gauged, "gauged")
        let pty = try TypingPTY()
        let directory = TemporaryDirectory()
        let socket = directory.appending("g.sock")
        let pid = try spawn(
            "/bin/sh", ["-c", "exec \(gauged) --display terminal --socket \(socket) < \(pty.slavePath) > \(pty.slavePath) 2>&1"],
            environment: childEnvironment(["TERM": "xterm-256color"]), outputPath: directory.appending("sh.log"))
        var output: [UInt8] = []
        func drain(for seconds: Double) {
            let end = monotonicNow() + seconds
            while monotonicNow() < end {
                var entry = pollfd(fd: pty.master, events: Int16(POLLIN), revents: 0)
                guard poll(&entry, 1, 50) > 0 else { continue }
                var chunk = [UInt8](repeating: 0, count: 65536)
                let count = read(pty.master, &chunk, chunk.count)
                if count > 0 { output += chunk[..<count] } else { return }
            }
        }
        drain(for: 1.5)
        _ = try? gaugectl(["--socket", socket, "progress", "40"])
        drain(for: 0.5)
        _ = try? gaugectl(["--socket", socket, "quit"])
        drain(for: 1.5)
        if reap(pid, within: 5) == nil { kill(pid, SIGKILL); _ = reap(pid, within: 5) }
        let text = String(decoding: output, as: UTF8.self)
        let enter = try #require(text.range(of: "\u{1B}[?1049h"), "the picture never started: \(text.prefix(200).debugDescription)")
        let leave = try #require(text.range(of: "\u{1B}[?1049l"), "the picture never ended")
        let during = text[enter.upperBound..<leave.lowerBound]
        #expect(!during.contains("gauged:"), "a log line over the picture: \(during.components(separatedBy: "gauged:").dropFirst().first?.prefix(60) ?? "")")
        #expect(text[leave.upperBound...].contains("gauged: listening on \(socket)"), "the log comes after the picture")
        // One line about the picture's size and scale, and no line twice.
        let lines = text[leave.upperBound...].split(whereSeparator: \.isNewline).filter { $0.hasPrefix("gauged:") }
        #expect(lines.filter { $0.contains("scale") }.count == 1, "\(lines)")
        #expect(Set(lines).count == lines.count, "\(lines)")
    }
}
