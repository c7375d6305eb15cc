import GaugeProtocol

/// The `--help` texts, made from the command table.
enum Help {
    static func overview() -> String {
        var lines = [
            "Usage: gaugectl [OPTIONS] COMMAND [ARGUMENTS]",
            "",
        ]
        lines += HelpText.paragraph(
            "Sends one request to gauged, the boot progress-screen daemon, and prints its reply. "
                + "A daemon that is still starting is waited for, within the timeout.")
        lines += ["", "Commands:"]
        lines += HelpText.table(CommandSpec.all.map { ($0.usage, $0.summary) })
        lines += ["", "Options (before the command):"]
        lines += HelpText.table(globalOptions)
        lines += ["", "'gaugectl COMMAND --help' shows one command's options.", ""]
        lines += exitStatusLines
        return lines.joined(separator: "\n")
    }

    /// `text`'s paragraphs: runs of lines between blank lines.
    private static func paragraphs(_ text: String) -> [String] {
        var result: [String] = []
        var current: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.allSatisfy({ $0 == " " }) {
                if !current.isEmpty { result.append(current.joined(separator: "\n")) }
                current = []
            } else {
                current.append(line)
            }
        }
        if !current.isEmpty { result.append(current.joined(separator: "\n")) }
        return result
    }

    static func command(_ command: CommandSpec) -> String {
        var lines = HelpText.paragraph(command.usage, indent: 7, first: "Usage: gaugectl [OPTIONS] ")
        lines.append("")
        lines += HelpText.paragraph(command.summary + ".")
        for (index, paragraph) in paragraphs(command.details).enumerated() {
            if index > 0 { lines.append("") }
            lines += HelpText.paragraph(paragraph)
        }
        let options = command.options + [OptionSpec(name: "--help", alias: "-h", valueName: nil, help: "Show this help")]
        lines += ["", "Options:"]
        var rows: [(label: String, text: String)] = []
        for option in options {
            var label = option.alias.map { $0 + ", " } ?? ""
            label += option.name
            if let value = option.valueName { label += " " + value }
            rows.append((label, option.help))
        }
        lines += HelpText.table(rows)
        lines += ["", "OPTIONS before the command are gaugectl's own (see gaugectl --help).", ""]
        lines += exitStatusLines
        return lines.joined(separator: "\n")
    }

    /// gaugectl's own options, before the command (also the man page's OPTIONS).
    static let globalOptions: [(label: String, text: String)] = [
        ("--socket PATH", "Daemon socket (default: $GAUGE_SOCKET, else \(ArgumentParser.defaultSocketPath))"),
        ("--timeout SECONDS",
         "Limit for the whole call: waiting for the daemon, connect, send, reply (default \(PlainDecimal.format(ArgumentParser.defaultTimeout)); 0: no limit)"),
        ("--no-wait", "Exit 3 at once when no daemon listens, instead of waiting for one to start"),
        ("-h, --help", "Show this help"),
        ("--version", "Print the version"),
    ]

    private static let exitStatusLines = HelpText.paragraph(
        "Exit status: 0 ok (a reply payload goes to stdout), 1 the daemon answered err, "
            + "2 usage error, 3 no daemon, timeout or connection closed without a reply, "
            + "4 the socket's permissions refuse this user.")
}

extension CommandSpec {
    static let help = CommandSpec(
        name: "help", argumentsSynopsis: "[COMMAND]",
        summary: "Show help for gaugectl or one command",
        positionals: 0...1,
        makeRequest: { _ throws(UsageError) in throw UsageError("help is not a request") })
}
