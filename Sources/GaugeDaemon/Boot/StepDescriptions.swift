/// How the boot's steps read on the screen: each unit's description (`describe`, which
/// `gaugectl systemd --waits` reads from systemd, as systemd's console shows it); a step
/// without one shows its name. A client fills it, so it is bounded: at most `maxUnits`
/// units (the oldest forgotten first), names of at most `maxNameBytes` (systemd's own
/// limit), texts as `MessageHistory.line` makes them (cut, no control characters).
struct StepDescriptions {
    static let maxUnits = 512
    static let maxNameBytes = 256

    /// An array, not a dictionary: a boot describes a few hundred units, and the
    /// executable carries no dictionary of this kind.
    private var entries: [(unit: String, text: String)] = []

    var count: Int { entries.count }

    /// Keeps `text` as `unit`'s description and returns it as it will read; nil (nothing
    /// kept) for a name over `maxNameBytes` or a text with nothing to show.
    mutating func set(_ unit: String, to text: String) -> String? {
        let line = MessageHistory.line(text)
        guard unit.utf8.count <= Self.maxNameBytes, !line.isEmpty else { return nil }
        entries.removeAll { $0.unit == unit }
        if entries.count == Self.maxUnits { entries.removeFirst() }
        entries.append((unit, line))
        return line
    }

    func text(for unit: String) -> String? {
        entries.last { $0.unit == unit }?.text
    }
}
