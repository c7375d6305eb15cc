import GaugeProtocol
import GaugeRender

/// Where the theme comes from and what changed it: the theme file (`--theme`) on the
/// defaults, `--rotate` over it, then run-time `theme` changes, one per key, in order.
/// It answers `theme` alone, `theme KEY=VALUE...` and `reload`; the screen draws with
/// what it hands over.
struct ThemeKeeper {
    private let path: String?
    private let themesDirectory: String
    private let rotate: Int?
    /// The settings as they stand over the defaults (paths resolved).
    private var settings: [(key: String, value: String)] = []

    init(options: DaemonOptions) {
        path = options.themePath
        themesDirectory = options.themesDirectory
        rotate = options.rotate
    }

    /// The theme to start with: the file's, or the defaults (with the reason logged)
    /// when it cannot be read; every problem in it logged.
    mutating func initialTheme(log: Log) -> Theme {
        do {
            let loaded = try load()
            for problem in loaded.problems { log.info("theme: \(problem)") }
            settings = loaded.settings
            return loaded.theme
        } catch {
            log.info("\(error); using the default theme")
            return rotated(Theme())
        }
    }

    /// `reload` (and SIGHUP): the file read again onto the defaults, run-time changes
    /// discarded. A file with a problem (a bad line, a font or logo that cannot be opened)
    /// changes nothing: the answer names the first problem's file and line, the log every one.
    mutating func reload(into screen: ProgressScreen, log: Log) -> ProtocolError? {
        let loaded: (theme: Theme, problems: [ThemeFile.Problem], settings: [(key: String, value: String)])
        do {
            loaded = try load()
        } catch {
            log.info("\(error)")
            return ProtocolError(.io, error.description)
        }
        for problem in loaded.problems { log.info("theme: \(problem)") }
        if let first = loaded.problems.first {
            let more = loaded.problems.count > 1 ? " (and \(loaded.problems.count - 1) more in the log)" : ""
            log.info("theme not reloaded: the one in use stays")
            return ProtocolError(.syntax, "\(first)\(more); the theme in use stays")
        }
        screen.replaceTheme(loaded.theme)
        settings = loaded.settings
        log.info("theme reloaded")
        return nil
    }

    /// `theme KEY=VALUE...`: applied to the screen, and kept for `theme` alone.
    mutating func apply(_ changes: [ThemeSetting], to screen: ProgressScreen) -> ProtocolError? {
        do throws(ProtocolError) {
            for setting in try screen.applyTheme(changes) {
                settings.removeAll { $0.key == setting.key }
                settings.append((setting.key, setting.value))
            }
        } catch {
            return error
        }
        return nil
    }

    /// `theme` alone: the theme file and the settings over the defaults, as JSON.
    var activeJSON: String {
        JSONValue.object([
            .init("file", path.map { .string($0) } ?? .null),
            .init("settings", .object(settings.map { .init($0.key, .string($0.value)) })),
        ]).encoded
    }

    /// The theme file (if any) on the defaults with its problems and the settings it
    /// made, `--rotate` over it.
    private func load() throws(ThemeFileError)
        -> (theme: Theme, problems: [ThemeFile.Problem], settings: [(key: String, value: String)])
    {
        var theme = Theme()
        var problems: [ThemeFile.Problem] = []
        var settings: [(key: String, value: String)] = []
        if let path {
            problems = try ThemeFile.load(path, into: &theme, applied: &settings, themes: themesDirectory)
        }
        if let rotate {
            settings.removeAll { $0.key == "rotation" }
            settings.append(("rotation", String(rotate)))
        }
        var unique: [(key: String, value: String)] = []
        for setting in settings.reversed() where !unique.contains(where: { $0.key == setting.key }) {
            unique.insert(setting, at: 0)
        }
        return (rotated(theme), problems, unique)
    }

    private func rotated(_ theme: Theme) -> Theme {
        var theme = theme
        if let rotate, let rotation = Rotation(degrees: rotate) { theme.rotation = rotation }
        return theme
    }
}
