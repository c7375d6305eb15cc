import GaugeProtocol
import GaugeSystem

/// `gauged`'s command line.
package struct DaemonOptions: Equatable, Sendable {
    package enum DisplayChoice: Equatable, Sendable {
        case auto
        case drm(path: String?)
        case fbdev(path: String?)
        /// `WxH[:FORMAT[:STRIDE]]`
        case memory(spec: String)
        case terminal
        case none
    }

    package var display = DisplayChoice.auto
    package var socketPath = "/run/gauge/gauged.sock"
    package var group: String?
    package var themePath: String?
    /// Where a theme file's `base = NAME` is looked up (env `GAUGE_THEMES`).
    package var themesDirectory = ThemeBase.directory
    package var fps = 60
    /// Forced scale; nil picks it from the display's physical size.
    package var scale: Double?
    /// Forced rotation in degrees (overrides the theme's).
    package var rotate: Int?
    package var verbose = false
    /// `none` leaves the VT alone; `at-exit` (`vtAtExit`, shutdown screens) leaves it alone
    /// under a DRM card until an exit that keeps the frame; nil uses the active one.
    package var vt: String?
    /// `--vt at-exit`: for a screen started while a getty may still hold the VT. As DRM
    /// master the daemon's frame stays on the CRTCs whatever the VT does, so the getty's
    /// end (text mode, already the VT's, then a hangup) changes nothing visible; the VT
    /// is put in graphics mode only as the daemon exits keeping its frame, so the
    /// console does not draw over it. On fbdev, where the console draws on the very
    /// framebuffer, the active VT is taken from the start, and opened and taken again
    /// after its hangup, the frame redrawn whole.
    package static let vtAtExit = "at-exit"
    package var maxClients = 64
    /// Seconds a connection may hold a slot without sending anything; nil: no limit.
    package var idleTimeout: Double? = 300
    package var demo = false
    /// psplash's FIFO to read (`--psplash-fifo [PATH]`), nil for none.
    package var psplashFIFO: String?
    /// Serve Plymouth's boot protocol on its abstract socket.
    package var plymouth = false
    /// Ask Plymouth's password requests, questions and keystroke watches on the screen
    /// (with `plymouth`), rather than refusing them so the console asks.
    package var ask = false
    /// The tty keys are read from for `ask`; nil: the console VT the screen is on.
    package var askTTY: String?
    /// Keys for `ask` come from the input devices (`--ask-tty input`), as with no VT.
    package var askFromInputDevices = false
    /// The console keymap input devices are read with; nil: the one the initramfs hooks
    /// carry, if any, else the US layout.
    package var keymapPath: String?
    /// The keyboards whose Escape shows and hides the boot's messages on every boot,
    /// read without taking them from anyone (`EscapeWatch`); nil: none. `--boot` watches
    /// `/dev/input` unless `--escape-input none` says otherwise.
    package var escapeInput: String?
    private var escapeInputGiven = false
    /// Created with `ask` so systemd's Plymouth password agent forwards its questions;
    /// nil creates none.
    package var plymouthPIDFile: String? = "/run/plymouth/pid"
    /// The title shown from the first frame.
    package var title: String?
    /// A shutdown screen: the bar runs indeterminate, and SIGTERM (systemd's last
    /// killing spree) leaves the last frame on the display.
    package var shutdown = false
    /// A daemon still on the socket is asked to go leaving its frame, the DRM cards held
    /// open meanwhile so nothing else shows before this one's first frame
    /// (`DaemonReplacement`).
    package var replace = false
    /// A boot screen: with no client reporting progress, the bar follows an estimate from
    /// the previous boot's history, and `quit` records this boot's for the next one.
    package var boot = false
    /// The boot history file (`--boot`).
    var bootHistoryPath = "/var/lib/gauge/boot-duration"
    /// Where systemd's password requests appear; nil watches nothing.
    package var askPasswordDirectory: String? = "/run/systemd/ask-password"
    /// The tty watched for other programs asking on it (`ConsoleReaders`): `.vt` the console
    /// VT under a DRM or fbdev display, `.none` none.
    var questionTTY = QuestionTTY.vt

    enum QuestionTTY: Equatable, Sendable {
        case vt
        case path(String)
        case none
    }

    package init() {}

    /// gauged's options and what they do (`--help`, and the man page's OPTIONS).
    package static let optionTable: [(label: String, text: String)] = [
        ("--display KIND",
         "auto (default): the best DRM or fbdev device, followed as devices come and go; with none the daemon serves without a display until one appears. "
            + "drm[:/dev/dri/cardN], fbdev[:/dev/fbN]: that device, waited for. "
            + "memory:WxH[:FORMAT[:STRIDE]]: in memory (tests, snapshots). terminal: drawn in this terminal. none: no display"),
        ("--socket PATH", "listening socket (default /run/gauge/gauged.sock, env GAUGE_SOCKET)"),
        ("--group NAME", "members of this group may talk to the daemon too"),
        ("--theme FILE", "theme file (key = value lines; base = NAME builds it on a theme in /usr/share/gauge/themes, env GAUGE_THEMES); SIGHUP or `reload` re-reads it"),
        ("--fps N", "frame rate while something moves (default 60)"),
        ("--scale N", "1 or 2 (default: the theme's scale, auto: from each head's size and density)"),
        ("--rotate DEGREES", "0, 90, 180 or 270: turn the picture for a panel on its side"),
        ("--vt TTY|none|at-exit", "the console to put in graphics mode (default: the active VT); at-exit: the active VT, under a DRM card only as the daemon exits keeping its frame (shutdown screens started while a getty may still hold it)"),
        ("--max-clients N", "clients served at once (default 64; the last few are kept for root)"),
        ("--idle-timeout S", "close connections silent for S seconds (default 300; 0: never)"),
        ("--psplash-fifo [PATH]", "also read psplash commands (PROGRESS n, MSG text, QUIT) from a FIFO (default /run/psplash_fifo)"),
        ("--plymouth-compat", "also serve Plymouth's boot protocol, so `plymouth` drives gauged"),
        ("--ask",
         "with --plymouth-compat: ask Plymouth's password requests and questions on the screen and answer its keystroke watches, "
            + "with keys from the console VT; creates /run/plymouth/pid so systemd forwards its password requests "
            + "(default: refused, so the console asks)"),
        ("--ask-tty TTY|input",
         "read the keys for --ask from this tty instead, or from the keyboards under /dev/input (as with no VT)"),
        ("--escape-input DIR|none",
         "watch the keyboards under DIR for Escape, which shows the boot's messages and hides them again, without taking "
            + "the keys from anyone (default with --boot: /dev/input; none otherwise)"),
        ("--keymap FILE",
         "the layout of keys read from /dev/input: a binary console keymap, as `loadkeys -b` writes it "
            + "(default /etc/gauge/keymap.bmap where the initramfs carries one, else US)"),
        ("--plymouth-pid-file PATH|none", "the pid file --ask creates (default /run/plymouth/pid)"),
        ("--title TEXT", "the title from the first frame on"),
        ("--shutdown", "a shutdown or reboot screen: the bar runs indeterminate and SIGTERM leaves the last frame on the display"),
        ("--replace",
         "a daemon still answering on the socket (a boot screen) is asked to quit leaving its frame, which stays until this one's first (the DRM cards are held open meanwhile)"),
        ("--boot",
         "a boot screen: until a client sends progress, the bar follows an estimate from the previous boot's steps and duration, and quit records this boot's; "
            + "with --plymouth-compat, gauge.ask=1 on the kernel command line turns on --ask"),
        ("--boot-history FILE", "where --boot keeps them (default /var/lib/gauge/boot-duration)"),
        ("--question-tty TTY|none",
         "give the console the screen while another program waits to read this tty: a passphrase prompt, a shell "
            + "(default: the console VT under a DRM or fbdev display)"),
        ("--ask-password-dir DIR|none",
         "give the console back while a password request waits here (default /run/systemd/ask-password)"),
        ("--demo", "play a scripted demo sequence, then quit"),
        ("--verbose", "log more"),
        ("-h, --help", "this text"),
        ("--version", "print the version and exit"),
    ]

    package static var usage: String {
        var lines = ["Usage: gauged [OPTIONS]", ""]
        lines += HelpText.paragraph("Shows a progress screen on the display and takes updates on a Unix socket.")
        lines += ["", "Options:"]
        lines += HelpText.table(optionTable)
        return lines.joined(separator: "\n")
    }

    package enum ParseResult: Equatable {
        case run(DaemonOptions)
        case help
        case version
        case error(String)
    }

    /// Parses `arguments`; `kernelCommandLine` (/proc/cmdline) is read for `--boot` only:
    /// `gauge.ask=1` there turns on `--ask` for a boot screen that serves Plymouth's socket,
    /// whichever way it was started (initramfs script, dracut's systemd initrd, the unit).
    package static func parse(
        _ arguments: [String], environment: [String: String] = [:], kernelCommandLine: String = ""
    ) -> ParseResult {
        var options = DaemonOptions()
        if let socket = environment["GAUGE_SOCKET"], !socket.isEmpty { options.socketPath = socket }
        if let themes = environment["GAUGE_THEMES"], !themes.isEmpty { options.themesDirectory = themes }
        var i = 0
        while i < arguments.count {
            var name = arguments[i]
            var inline: String?
            if name.hasPrefix("--"), let eq = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            switch name {
            case "-h", "--help": return .help
            case "--version": return inline == nil ? .version : .error("--version takes no value")
            case "--psplash-fifo":
                // Its path may be left out: the next argument is it unless it is an option.
                if let inline {
                    guard !inline.isEmpty else { return .error("--psplash-fifo needs a path") }
                    options.psplashFIFO = inline
                } else if i + 1 < arguments.count, !arguments[i + 1].hasPrefix("-") {
                    i += 1
                    options.psplashFIFO = arguments[i]
                } else {
                    options.psplashFIFO = "/run/psplash_fifo"
                }
            default:
                if let set = flags[name] {
                    guard inline == nil else { return .error("\(name) takes no value") }
                    set(&options)
                } else if let set = valued[name] {
                    var value = inline
                    if value == nil, i + 1 < arguments.count {
                        i += 1
                        value = arguments[i]
                    }
                    if let problem = set(&options, value) { return .error(problem) }
                } else {
                    return .error("unknown option '\(arguments[i])'")
                }
            }
            i += 1
        }
        if options.boot, !options.escapeInputGiven { options.escapeInput = "/dev/input" }
        if options.ask, !options.plymouth { return .error("--ask needs --plymouth-compat: the questions come over Plymouth's socket") }
        if options.boot, options.plymouth, kernelCommandLine.split(whereSeparator: { $0 == " " || $0 == "\n" }).contains("gauge.ask=1") {
            options.ask = true
        }
        return .run(options)
    }

    /// The options that take no value.
    private static let flags: [String: @Sendable (inout DaemonOptions) -> Void] = [
        "--verbose": { $0.verbose = true }, "-v": { $0.verbose = true },
        "--demo": { $0.demo = true },
        "--plymouth-compat": { $0.plymouth = true },
        "--ask": { $0.ask = true },
        "--shutdown": { $0.shutdown = true },
        "--replace": { $0.replace = true },
        "--boot": { $0.boot = true },
    ]

    /// The options that take a value (`--name VALUE` or `--name=VALUE`): each sets it, or
    /// says what is wrong with it (nil: the value is missing).
    private static let valued: [String: @Sendable (inout DaemonOptions, String?) -> String?] = [
        "--display": { options, value in
            guard let value else { return "--display needs a value" }
            guard let choice = parseDisplay(value) else { return "unknown display '\(value)'" }
            options.display = choice
            return nil
        },
        "--socket": { options, value in
            guard let value, !value.isEmpty else { return "--socket needs a path" }
            options.socketPath = value
            return nil
        },
        "--group": { options, value in
            guard let value, !value.isEmpty else { return "--group needs a group name" }
            options.group = value
            return nil
        },
        "--theme": { options, value in
            guard let value, !value.isEmpty else { return "--theme needs a file" }
            options.themePath = value
            return nil
        },
        "--fps": { options, value in
            guard let value, let n = DecimalDigits.value(value), (1...240).contains(n) else { return "--fps takes a whole number from 1 to 240" }
            options.fps = Int(n)
            return nil
        },
        "--scale": { options, value in
            guard let value, let n = PlainDecimal.parse(value), n == 1 || n == 2 else { return "--scale takes 1 or 2" }
            options.scale = n
            return nil
        },
        "--rotate": { options, value in
            guard let value, let n = DecimalDigits.value(value), [0, 90, 180, 270].contains(n) else { return "--rotate takes 0, 90, 180 or 270" }
            options.rotate = Int(n)
            return nil
        },
        "--vt": { options, value in
            guard let value, !value.isEmpty else { return "--vt needs a tty path or none" }
            options.vt = value
            return nil
        },
        "--max-clients": { options, value in
            guard let value, let n = DecimalDigits.value(value), (1...4096).contains(n) else { return "--max-clients takes a number from 1 to 4096" }
            options.maxClients = Int(n)
            return nil
        },
        "--idle-timeout": { options, value in
            guard let value, let n = PlainDecimal.parse(value), n >= 0, n <= 86400 else {
                return "--idle-timeout takes seconds from 0 (never) to 86400"
            }
            options.idleTimeout = n == 0 ? nil : n
            return nil
        },
        "--title": { options, value in
            guard let value else { return "--title needs a text" }
            if let problem = Request.controlCharacterError(in: value) { return "--title: \(problem.message)" }
            options.title = value
            return nil
        },
        "--question-tty": { options, value in
            guard let value, value.hasPrefix("/") || value == "none" else { return "--question-tty takes an absolute tty path or none" }
            options.questionTTY = value == "none" ? .none : .path(value)
            return nil
        },
        "--ask-tty": { options, value in
            guard let value, value.hasPrefix("/") || value == "input" else { return "--ask-tty takes an absolute tty path or input" }
            if value == "input" { options.askFromInputDevices = true } else { options.askTTY = value }
            return nil
        },
        "--escape-input": { options, value in
            guard let value, value == "none" || value.hasPrefix("/") else { return "--escape-input takes an absolute directory or none" }
            options.escapeInput = value == "none" ? nil : value
            options.escapeInputGiven = true
            return nil
        },
        "--keymap": { options, value in
            guard let value, value.hasPrefix("/") else { return "--keymap takes an absolute file path" }
            options.keymapPath = value
            return nil
        },
        "--plymouth-pid-file": { options, value in
            guard let value, value == "none" || value.hasPrefix("/") else { return "--plymouth-pid-file takes an absolute file path or none" }
            options.plymouthPIDFile = value == "none" ? nil : value
            return nil
        },
        "--boot-history": { options, value in
            guard let value, value.hasPrefix("/") else { return "--boot-history takes an absolute file path" }
            options.bootHistoryPath = value
            return nil
        },
        "--ask-password-dir": { options, value in
            guard let value, value == "none" || value.hasPrefix("/") else { return "--ask-password-dir takes an absolute directory or none" }
            options.askPasswordDirectory = value == "none" ? nil : value
            return nil
        },
    ]

    static func parseDisplay(_ text: String) -> DisplayChoice? {
        let kind = text.prefix { $0 != ":" }
        let rest = text.count > kind.count ? String(text.dropFirst(kind.count + 1)) : nil
        switch kind {
        case "auto": return rest == nil ? .auto : nil
        case "drm": return .drm(path: rest)
        case "fbdev": return .fbdev(path: rest)
        case "memory": return rest.map { .memory(spec: $0) }
        case "terminal": return rest == nil ? .terminal : nil
        case "none": return rest == nil ? DisplayChoice.none : nil
        default: return nil
        }
    }
}
