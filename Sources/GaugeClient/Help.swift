import GaugeProtocol

/// The `--help` texts, made from the command table.
enum Help {
    static func overview() -> String {
        let commands = CommandSpec.all
        let width = commands.map { $0.usage.count }.max() ?? 0
        var lines = [
            "Usage: gaugectl [--socket PATH] [--timeout SECONDS] [--no-wait] COMMAND [ARGUMENTS]",
            "",
            "Sends one request to gauged, the boot progress-screen daemon, and prints its reply.",
            "A daemon that is still starting is waited for, within the timeout.",
            "",
            "Commands:",
        ]
        for command in commands {
            lines.append("  " + padded(command.usage, to: width) + "  " + command.summary)
        }
        lines += [
            "",
            "Options (before the command):",
            "  --socket PATH      Daemon socket (default: $GAUGE_SOCKET, else \(ArgumentParser.defaultSocketPath))",
            "  --timeout SECONDS  Limit for the whole call: waiting for the daemon, connect, send, reply",
            "                     (default \(PlainDecimal.format(ArgumentParser.defaultTimeout)); 0: no limit)",
            "  --no-wait          Exit 3 at once when no daemon listens, instead of waiting for one to start",
            "  -h, --help         Show this help; 'gaugectl COMMAND --help' shows one command's",
            "  --version          Print the version",
            "",
        ]
        lines += exitStatusLines
        return lines.joined(separator: "\n")
    }

    static func command(_ command: CommandSpec) -> String {
        var lines = [
            "Usage: gaugectl [--socket PATH] [--timeout SECONDS] [--no-wait] " + command.usage,
            "",
            command.summary + ".",
        ]
        if !command.details.isEmpty { lines.append(command.details) }
        let options = command.options + [OptionSpec(name: "--help", alias: "-h", valueName: nil, help: "Show this help")]
        let labels = options.map { option in
            (option.alias.map { $0 + ", " } ?? "    ") + option.name + (option.valueName.map { " " + $0 } ?? "")
        }
        let width = labels.map { $0.count }.max() ?? 0
        lines += ["", "Options:"]
        for (label, option) in zip(labels, options) {
            lines.append("  " + padded(label, to: width) + "  " + option.help)
        }
        lines.append("")
        lines += exitStatusLines
        return lines.joined(separator: "\n")
    }

    private static let exitStatusLines = [
        "Exit status: 0 ok (a reply payload goes to stdout), 1 the daemon answered err,",
        "2 usage error, 3 no daemon, timeout or connection closed without a reply.",
    ]

    private static func padded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }
}
