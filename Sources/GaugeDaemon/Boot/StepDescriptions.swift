/// How the boot's steps read on the screen: each unit's description (`describe`, which
/// `gaugectl systemd --waits` reads from systemd, as systemd's console shows it); a step
/// without one shows its name. A client fills it, so it is bounded: at most `maxUnits`
/// units (the oldest forgotten first), names of at most `maxNameBytes` (systemd's own
/// limit), texts as `MessageHistory.line` makes them (cut, no control characters).
struct StepDescriptions {
    static let maxUnits = 512
    static let maxNameBytes = 256

    /// Arrays, not a dictionary: a boot describes a few hundred units, and the
    /// executable carries no dictionary of this kind. `texts[i]` describes `units[i]`.
    private var units: [String] = []
    private var texts: [String] = []

    var count: Int { units.count }

    /// Keeps `text` as `unit`'s description and returns it as it will read; nil (nothing
    /// kept) for a name over `maxNameBytes` or a text with nothing to show.
    mutating func set(_ unit: String, to text: String) -> String? {
        let line = MessageHistory.line(text)
        guard unit.utf8.count <= Self.maxNameBytes, !line.isEmpty else { return nil }
        if let known = units.firstIndex(of: unit) {
            texts[known] = line
            return line
        }
        if units.count == Self.maxUnits {
            units.removeFirst()
            texts.removeFirst()
        }
        units.append(unit)
        texts.append(line)
        return line
    }

    func text(for unit: String) -> String? {
        units.firstIndex(of: unit).map { texts[$0] }
    }
}
