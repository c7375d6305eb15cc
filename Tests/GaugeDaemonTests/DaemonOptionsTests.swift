@testable import GaugeDaemon
import GaugeDisplay
import Testing

@Suite("gauged options and scale")
struct DaemonOptionsTests {
    @Test("options parse, bad ones are refused with a reason")
    func parse() {
        guard case .run(let o) = DaemonOptions.parse(["--display", "memory:640x480:RGB565", "--fps=30", "--rotate", "90", "--scale", "2"]) else {
            Issue.record("not parsed")
            return
        }
        #expect(o.display == .memory(spec: "640x480:RGB565") && o.fps == 30 && o.rotate == 90 && o.scale == 2)
        #expect(DaemonOptions.parse(["--rotate", "45"]) == .error("--rotate takes 0, 90, 180 or 270"))
        #expect(DaemonOptions.parse(["--fps", "0"]) == .error("--fps takes a whole number from 1 to 240"))
        #expect(DaemonOptions.parse(["--display", "vga"]) == .error("unknown display 'vga'"))
        #expect(DaemonOptions.parse(["--help"]) == .help)
        #expect(DaemonOptions.parse(["--display", "memory:64x64", "--version"]) == .version)
        #expect(DaemonOptions.parse(["--version=1"]) == .error("--version takes no value"))
        #expect(DaemonOptions.parse(["--boot=no"]) == .error("--boot takes no value"), "a flag's value is not ignored")
        #expect(DaemonOptions.parse(["--socket"]) == .error("--socket needs a path"), "a value left out")
        #expect(DaemonOptions.parse(["--bogus"]) == .error("unknown option '--bogus'"))
        guard case .run(let env) = DaemonOptions.parse([], environment: ["GAUGE_SOCKET": "/tmp/x.sock"]) else { return }
        #expect(env.socketPath == "/tmp/x.sock")
        guard case .run(let drm) = DaemonOptions.parse(["--display", "drm:/dev/dri/card1"]) else { return }
        #expect(drm.display == .drm(path: "/dev/dri/card1"))
    }

    @Test("whole numbers are plain digits: a sign is refused with the option's reason")
    func wholeNumbersAreDigits() {
        #expect(DaemonOptions.parse(["--fps", "+5"]) == .error("--fps takes a whole number from 1 to 240"))
        #expect(DaemonOptions.parse(["--rotate", "+90"]) == .error("--rotate takes 0, 90, 180 or 270"))
        #expect(DaemonOptions.parse(["--rotate", "-0"]) == .error("--rotate takes 0, 90, 180 or 270"))
        #expect(DaemonOptions.parse(["--max-clients", "+64"]) == .error("--max-clients takes a number from 1 to 4096"))
        #expect(DaemonOptions.parse(["--fps", " 5"]) == .error("--fps takes a whole number from 1 to 240"))
        guard case .run(let o) = DaemonOptions.parse(["--fps", "060", "--rotate", "0", "--max-clients", "4096"]) else {
            Issue.record("not parsed")
            return
        }
        #expect(o.fps == 60 && o.rotate == 0 && o.maxClients == 4096)
    }

    @Test("boot flow options: shutdown screen, first title, password directory")
    func bootFlowOptions() {
        guard case .run(let o) = DaemonOptions.parse(["--shutdown", "--title", "Powering off", "--ask-password-dir=/tmp/asks"]) else {
            Issue.record("not parsed")
            return
        }
        #expect(o.shutdown && o.title == "Powering off" && o.askPasswordDirectory == "/tmp/asks")
        guard case .run(let defaults) = DaemonOptions.parse([]), case .run(let off) = DaemonOptions.parse(["--ask-password-dir", "none"]) else {
            Issue.record("not parsed")
            return
        }
        #expect(!defaults.shutdown && defaults.title == nil && defaults.askPasswordDirectory == "/run/systemd/ask-password")
        #expect(off.askPasswordDirectory == nil)
        #expect(DaemonOptions.parse(["--ask-password-dir", "relative"]) == .error("--ask-password-dir takes an absolute directory or none"))
        #expect(DaemonOptions.parse(["--title", "a\nb"]) == .error("--title: control character U+000A in line"))
        #expect(DaemonOptions.parse(["--title"]) == .error("--title needs a text"))
    }

    @Test("ancestors of the password directory, from the root down")
    func askPasswordAncestors() {
        #expect(AskPasswordWatch.ancestors(of: "/run/systemd/ask-password") == ["/", "/run", "/run/systemd"])
        #expect(AskPasswordWatch.ancestors(of: "/asks") == ["/"])
    }

    @Test("who has the screen: deactivate wins, then hide or a password, else Gauge")
    func screenHandoverOwner() {
        var handover = ScreenHandover()
        #expect(handover.owner == .gauge)
        handover.passwordPending = true
        #expect(handover.owner == .console)
        handover.deactivated = true
        #expect(handover.owner == .displayManager)
        handover.passwordPending = false
        handover.hiddenByRequest = true
        #expect(handover.owner == .displayManager)
        handover.deactivated = false
        #expect(handover.owner == .console)
        handover.hiddenByRequest = false
        #expect(handover.owner == .gauge)
    }
}
