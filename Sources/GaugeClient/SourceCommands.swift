import GaugeProtocol

/// The commands that follow an update tool's own progress reports and drive the bar
/// (`HonestBar`) with them.
extension CommandSpec {
    static let sourceCommands: [CommandSpec] = []
}
