/// Who has the screen: Gauge, the text console, or a display manager, from the reasons
/// the daemon has to give it up. The daemon acts on each change of `owner`.
///
/// - `hide` gives the console back until `show`;
/// - a password request of systemd's (`ask.*` pending) gives the console back until it
///   is answered;
/// - a program waiting to read the console (`ConsoleReaders`), or a Plymouth question
///   Gauge refused (its caller then asks on the console), gives the console back until
///   nobody has waited on it for a moment;
/// - `deactivate` hands the display to a display manager until `reactivate`; it wins
///   over the others: the console is then the display manager's, not ours to switch to
///   text.
struct ScreenHandover: Equatable {
    /// Named by its raw value in the log (Embedded Swift cannot describe an enum case).
    enum Owner: String, Equatable {
        /// Gauge draws; the console is in graphics mode.
        case gauge
        /// The text console shows (KD_TEXT); Gauge holds no DRM master.
        case console
        /// A display manager takes over: Gauge stops drawing and drops DRM master and VT
        /// switching, and leaves the console mode alone.
        case displayManager
    }

    var hiddenByRequest = false
    var passwordPending = false
    var consoleQuestion = false
    var deactivated = false

    var owner: Owner {
        if deactivated { return .displayManager }
        if hiddenByRequest || passwordPending || consoleQuestion { return .console }
        return .gauge
    }
}
