import GaugeProtocol
import GaugeTranslators

/// `--range FROM-TO`: one stage of a longer job (an installer's partitioning, copying,
/// packages, boot loader) shown as its part of one bar. The command's own 0-100 % is drawn
/// between FROM and TO, and its success moves the bar to TO but leaves the state running
/// (the script that runs the stages says success once the last one is done). A TO of 100
/// stops at `HonestBar.runningMaximum`, as one tool's bar does: only `success` fills the
/// bar. Its failure shows as without a range.
struct BarRange: Equatable {
    var from: Double
    var to: Double

    static let option = OptionSpec(
        name: "--range", valueName: "FROM-TO",
        help: "Draw the command's 0-100 % between FROM and TO % of the bar; its success moves the bar to TO (99.9 for 100) and leaves the state running (one bar across several commands)")

    /// The range the option in `arguments` asks for; nil without it.
    static func parse(_ arguments: CommandArguments) throws(UsageError) -> BarRange? {
        guard let text = arguments.values["--range"] else { return nil }
        let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let from = PlainDecimal.parse(String(parts[0])), let to = PlainDecimal.parse(String(parts[1])),
            Request.progressRange.contains(from), Request.progressRange.contains(to), from < to
        else {
            throw UsageError("--range needs FROM-TO, two percentages from 0 to 100 with FROM below TO (10-40), not '\(text)'")
        }
        return BarRange(from: from, to: to)
    }

    /// The position of the command's `percent` on the whole bar.
    func position(_ percent: Double) -> Double {
        min(from + (to - from) * min(max(percent, 0), 100) / 100, HonestBar.runningMaximum)
    }

    /// `request` as the whole bar shows it: progress moved into the range, success turned
    /// into the range's end (the stage's closing words dropped: the next stage or the
    /// script says what comes); everything else as it is.
    func map(_ request: Request) -> Request {
        switch request {
        case .progress(let value, let message): .progress(position(value), message: message)
        case .state(.success, _): .progress(position(100), message: nil)
        default: request
        }
    }
}
