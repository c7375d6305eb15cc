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

extension CommandSpec {
    static let theme = CommandSpec(
        name: "theme", argumentsSynopsis: "[KEY=VALUE...] | --list | [--set NAME] [--rebuild-initramfs]",
        summary: "Change theme keys at run time; alone, print the theme in use; choose the installed theme",
        details: """
            Without KEY=VALUE, prints the theme in use: its file and every setting over the
            defaults (the file's, then run-time changes), as theme-file lines. A relative
            path (logo, logo_fallback, font, bold_font, fallback_fonts) is taken from this
            directory; logo=firmware is the firmware's logo where it drew it (ACPI BGRT);
            font and bold_font may name a family instead: 'font=DejaVu Sans:Bold'.
            Example: gaugectl theme fill_color=#ff8800 font=/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf
            The installed theme, with no daemon involved (as plymouth-set-default-theme):
            --list lists the themes in /usr/share/gauge/themes (env GAUGE_THEMES), the one
            chosen marked '*'; --set NAME makes /etc/gauge/gauge.theme (env GAUGE_THEME)
            name it on its base line, keeping its other lines, whose keys apply over it;
            --rebuild-initramfs then runs update-initramfs -u (or dracut -f where dracut
            builds it), so the next boot shows it, and exits 1 if that fails.
            Example: sudo gaugectl theme --set box --rebuild-initramfs
            """,
        options: [
            OptionSpec(name: "--list", alias: "-l", valueName: nil, help: "List the installed themes, the chosen one marked '*'"),
            OptionSpec(name: "--set", valueName: "NAME", help: "Choose the theme NAME in /etc/gauge/gauge.theme"),
            OptionSpec(
                name: "--rebuild-initramfs", alias: "-R", valueName: nil,
                help: "Rebuild the initramfs (update-initramfs -u, or dracut -f) so the boot shows the theme"),
        ],
        positionals: 0...Int.max,
        makeAction: { arguments throws(UsageError) in
            let choice = ThemeChoice.Request(
                list: arguments.flags.contains("--list"), set: arguments.values["--set"],
                rebuildInitramfs: arguments.flags.contains("--rebuild-initramfs"))
            guard choice.list || choice.set != nil || choice.rebuildInitramfs else { return .send(try themeRequest(arguments)) }
            guard arguments.positionals.isEmpty else {
                throw UsageError("KEY=VALUE changes the daemon's theme, --list, --set and --rebuild-initramfs the installed one: not both")
            }
            if choice.list, choice.set != nil || choice.rebuildInitramfs { throw UsageError("--list goes alone") }
            if let name = choice.set, !ThemeBase.isName(name) {
                throw UsageError("--set needs a theme's name (letters, digits, _ and -), not '\(name)'")
            }
            return .run { _ in ThemeChoice.run(choice) }
        },
        makeRequest: themeRequest)
}

/// `theme` with KEY=VALUE settings, or alone (the theme in use): the daemon's request.
@Sendable private func themeRequest(_ arguments: CommandArguments) throws(UsageError) -> OutgoingRequest {
    if arguments.positionals.isEmpty { return OutgoingRequest(line: "theme", output: .theme) }
    var settings: [ThemeSetting] = []
    for argument in arguments.positionals {
        guard let equals = argument.firstIndex(of: "=") else {
            throw UsageError("theme expects KEY=VALUE, not '\(argument)'")
        }
        let key = String(argument[..<equals])
        guard ThemeSetting.isValidKey(key) else {
            throw UsageError("bad theme key '\(key)' (letters, digits, _ - . only)")
        }
        var value = String(argument[argument.index(after: equals)...])
        let named = (key == "logo" && value == ThemeSetting.firmwareLogo)
            || ((key == "font" || key == "bold_font") && ThemeSetting.isFontFamily(value))
        if ThemeSetting.fileKeys.contains(key), !named { value = try absolutePaths(value, list: key == "fallback_fonts") }
        settings.append(ThemeSetting(key: key, value: value))
    }
    return try validated(.theme(settings))
}
