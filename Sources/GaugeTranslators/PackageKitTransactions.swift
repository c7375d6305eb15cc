import GaugeProtocol

/// What PackageKit's daemon says of its transactions on the system bus, for the updates
/// screen of an offline update (`gaugectl packagekit`): `pk-offline-update` reports only
/// percentages through the `plymouth` command, but every transaction broadcasts, on its
/// own object (`/TID`, interface org.freedesktop.PackageKit.Transaction):
///
/// | signal | arguments | here |
/// |---|---|---|
/// | `Package` | info (PkInfoEnum), package id (`name;version;arch;data`), summary | the message "Updating NAME VERSION." and the warning, while info is an action on the package |
/// | `ErrorCode` | code (PkErrorEnum), details | the failure, at once, naming the package last worked on and PackageKit's details ("The update failed while updating NAME VERSION: …"): pk-offline-update waits 10 s before asking for the restart |
///
/// Package ids and details are the service's text: cleaned (`CompatText`).
package struct PackageKitTransactions: Equatable, Sendable {
    package static let warning = "Do not turn off the computer."
    /// PkInfoEnum's values for a package being worked on, as the line says them; the
    /// others (available, installed, finished, an update's kind) name no work.
    static let actions: [UInt32: String] = [
        11: "Updating", 12: "Installing", 13: "Removing", 19: "Reinstalling", 20: "Downgrading",
        21: "Preparing", 22: "Unpacking",
    ]
    /// The longest details shown; the rest is PackageKit's log's.
    static let detailsLimit = 300

    /// The last message sent.
    package private(set) var shown: String?
    /// The work last named ("Updating NAME VERSION").
    private var working: String?
    /// Whether a transaction reported an error (the screen shows the failure from then on).
    package private(set) var failed = false

    package init() {}

    /// A `Package` signal: the message naming the package, nil when it says nothing new.
    package mutating func package(info: UInt32, id: String) -> Request? {
        guard !failed, let action = Self.actions[info] else { return nil }
        let fields = id.split(separator: ";", omittingEmptySubsequences: false)
        guard let name = fields.first, !name.isEmpty else { return nil }
        let version = fields.count > 1 && !fields[1].isEmpty ? " \(fields[1])" : ""
        working = CompatText.clean("\(action) \(name)\(version)")
        let text = "\(working ?? ""). \(Self.warning)"
        guard text != shown else { return nil }
        shown = text
        return .message(text)
    }

    /// An `ErrorCode` signal: the failure, naming the package last worked on, with
    /// PackageKit's details (its code when none).
    package mutating func error(code: UInt32, details: String) -> Request? {
        guard !failed else { return nil }
        failed = true
        var said = CompatText.clean(details).split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        if said.isEmpty { said = "PackageKit's error \(code)" }
        if said.count > Self.detailsLimit { said = String(said.prefix(Self.detailsLimit)) + "…" }
        // The action's first letter lowered: the actions are this file's ASCII words.
        let during = working.map { text in
            " while " + String(decoding: text.utf8.enumerated().map { $0 == 0 && (65...90).contains($1) ? $1 + 32 : $1 }, as: UTF8.self)
        } ?? ""
        return .state(.failure, message: "The update failed\(during): \(said)")
    }
}
