import CGaugeLinux
import GaugeProtocol
import GaugeSystem

/// `gaugectl theme --list`, `--set NAME` and `--rebuild-initramfs`: the installed theme,
/// chosen as Plymouth's `plymouth-set-default-theme` chooses one, with no daemon involved.
///
/// The shipped themes are `NAME.theme` in `/usr/share/gauge/themes` (`GAUGE_THEMES`);
/// the theme the boot reads, `/etc/gauge/gauge.theme` (`GAUGE_THEME`), names one with its
/// `base` line, which `--set` rewrites, keeping every other line (the administrator's own
/// keys) as it was (`ThemeBase.choosing`). The package ships that file as a conffile
/// holding little more than `base = default`, so an upgrade keeps the choice and asks
/// nothing unless the package's own copy of that line changes.
enum ThemeChoice {
    struct Request {
        var list = false
        var set: String?
        var rebuildInitramfs = false
    }

    static func run(_ request: Request) -> Never {
        let themes = environment("GAUGE_THEMES") ?? ThemeBase.directory
        let chosenFile = environment("GAUGE_THEME") ?? ThemeBase.chosenFile
        let names: [String]
        do throws(SystemError) {
            names = ThemeBase.names(in: try Syscall.directoryEntries(themes))
        } catch {
            fail("no themes to choose from: \(error)")
        }
        if request.list { list(names, chosen: chosen(in: chosenFile)) }
        if let name = request.set { set(name, among: names, themes: themes, in: chosenFile) }
        if request.rebuildInitramfs { rebuildInitramfs() }
        finish(.ok)
    }

    /// One name a line, the one the theme file names marked `*` (as `git branch` marks).
    private static func list(_ names: [String], chosen: String?) {
        for name in names { print((name == chosen ? "* " : "  ") + name) }
        if let chosen, !names.contains(chosen) { printError("gaugectl: the theme file names '\(chosen)', which is not there") }
    }

    /// The base the theme file at `path` names, if it can be read and names one.
    private static func chosen(in path: String) -> String? {
        guard let bytes = try? RegularFile.read(path, maxBytes: 1 << 20) else { return nil }
        return ThemeBase.named(in: String(decoding: bytes, as: UTF8.self))?.name
    }

    /// Writes `base = name` into the theme file at `path`: a new file beside it, made to
    /// last (`fsync`), then renamed over it, so a crash leaves the old file or the new one.
    private static func set(_ name: String, among names: [String], themes: String, in path: String) {
        guard names.contains(name) else {
            fail("no theme '\(name)' in \(themes); the themes: \(names.joined(separator: ", "))")
        }
        var old: String?
        if case .success(let status) = Result(catching: { () throws(SystemError) in try Syscall.fileStatus(path) }), status != nil {
            do {
                old = String(decoding: try RegularFile.read(path, maxBytes: 1 << 20), as: UTF8.self)
            } catch {
                fail("\(error)")
            }
        }
        let text = ThemeBase.choosing(name, in: old)
        if text != old {
            do throws(SystemError) {
                try replace(path, with: text)
            } catch {
                let hint = error.errno == EACCES || error.errno == EPERM || error.errno == EROFS ? " (as root: sudo gaugectl theme --set \(name))" : ""
                fail("cannot write \(path): \(error)\(hint)")
            }
        }
        print("theme \(name) set in \(path): the boot shows it once the initramfs is rebuilt (--rebuild-initramfs), a running daemon after gaugectl reload")
    }

    private static func replace(_ path: String, with text: String) throws(SystemError) {
        let temporary = path + ".gaugectl-new"
        try? Syscall.unlink(temporary)
        let fd = try Syscall.open(temporary, flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o644)
        do throws(SystemError) {
            let written = Array(text.utf8).withUnsafeBytes { bytes in
                Result { () throws(SystemError) in try Syscall.writeAll(fd, bytes, at: 0) }
            }
            try written.get()
            try Syscall.chmod(temporary, mode: 0o644)
            try Syscall.fsync(fd)
            Syscall.close(fd)
            try Syscall.rename(temporary, to: path)
        } catch {
            Syscall.close(fd)
            try? Syscall.unlink(temporary)
            throw error
        }
    }

    /// `update-initramfs -u`, or `dracut -f` where dracut builds the initramfs (no
    /// update-initramfs on PATH); its output goes where gaugectl's goes.
    private static func rebuildInitramfs() {
        for command in [["update-initramfs", "-u"], ["dracut", "-f"]] {
            let pid: pid_t
            do throws(SystemError) {
                pid = try Syscall.spawn(command)
            } catch {
                if error.errno == ENOENT { continue }
                fail("cannot run \(command.joined(separator: " ")): \(error)")
            }
            let shown = command.joined(separator: " ")
            let end = (try? Syscall.waitForChild(pid)).map(Syscall.ChildEnd.init(status:)) ?? .exited(127)
            if let failure = Producer.failure(shown, end) { fail("the initramfs is not rebuilt: \(failure)") }
            print("\(shown): the initramfs is rebuilt (exit status 0)")
            return
        }
        fail("the initramfs is not rebuilt: neither update-initramfs nor dracut is on PATH")
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }

    private static func fail(_ message: String) -> Never {
        printError("gaugectl: \(message)")
        finish(.daemonError)
    }
}
