import GaugeProtocol
import GaugeTranslators

/// The waits of the commands that follow a tool and tick a `HonestBar` in between.
enum ProgressTicks {
    /// Milliseconds for `poll` until `tick` (nanoseconds on `Deadline.now()`'s clock),
    /// rounded up; -1 (no limit) for nil.
    static func milliseconds(until tick: UInt64?) -> Int32 {
        guard let tick else { return -1 }
        let now = Deadline.now()
        guard tick > now else { return 0 }
        return Int32(min((tick - now + 999_999) / 1_000_000, UInt64(Int32.max)))
    }

    /// The bar options every such command takes.
    static let options = [
        OptionSpec(
            name: "--stall", valueName: "SECONDS",
            help: "Show the indeterminate style after SECONDS without progress (default: the theme's stall_time, 20; 0: never)"),
        OptionSpec(
            name: "--creep", valueName: "SECONDS",
            help: "Inside a silent step, creep towards its end, half way in SECONDS (default 30; 0: never)"),
    ]

    /// The settings the options in `arguments` ask for.
    static func settings(_ arguments: CommandArguments) throws(UsageError) -> HonestBar.Settings {
        var settings = HonestBar.Settings()
        if let text = arguments.values["--stall"] {
            settings.stallSeconds = try seconds(text, "--stall")
        } else {
            settings.stallFromTheme = true
        }
        if let text = arguments.values["--creep"] { settings.creepHalfSeconds = try seconds(text, "--creep") }
        return settings
    }

    private static func seconds(_ text: String, _ name: String) throws(UsageError) -> Double? {
        guard let value = PlainDecimal.parse(text), value.isFinite, value >= 0, value <= 86_400 else {
            throw UsageError("\(name) needs a number of seconds from 0 to 86400, not '\(text)'")
        }
        return value == 0 ? nil : value
    }
}

extension ProgressTicks {
    static let swupdateDetails = """
        One bar for the whole update: a download takes the first half, the install's steps
        share the rest, and the bar never goes back within an update (a step starting at
        0 % holds it). Inside a silent step it creeps towards the step's end; after the
        stall time without progress (the theme's stall_time, or --stall) it shows the
        indeterminate style until progress resumes.
        """
}
