import CGaugeLinux
import GaugeProtocol

/// What a peer may ask of the daemon, decided once per connection and checked for every
/// request in one place (`Daemon.apply`). README "Access" is the policy in words.
///
/// Who may connect at all is `PeerPolicy`'s part: root, the daemon's own user, members of
/// `--group`. Of those, only root and the daemon's own user may make the daemon open a
/// file by name (a snapshot path, the theme keys that name files): the daemon would open
/// it with its own rights, which a group member must not borrow. Members drive the
/// screen and get snapshots written into files they opened themselves (`snapshot -`).
/// Moving the daemon into a new root (`newroot`, Plymouth's update-root-fs) is root's alone.
package struct Access: Equatable, Sendable {
    /// May name files the daemon opens: `snapshot PATH`, `theme logo=... font=...`.
    var mayNameFiles: Bool
    /// Is root: may move the daemon into a new root.
    var isRoot: Bool

    package init(mayNameFiles: Bool, isRoot: Bool) {
        self.mayNameFiles = mayNameFiles
        self.isRoot = isRoot
    }

    /// A connected peer: full rights for root, files for the daemon's own user too.
    package init(peer: PeerCredentials, daemonUID: UInt32 = geteuid()) {
        mayNameFiles = peer.uid == 0 || peer.uid == daemonUID
        isRoot = peer.uid == 0
    }

    /// Its `step`s (and Plymouth's `update --status`) go into the boot history the next
    /// boot's estimate follows: root's (systemd, the initramfs scripts) and the daemon's
    /// own user's only. A member's or a Plymouth peer's steps still show on the message
    /// line, but cannot fill the history's `BootHistory.maxSteps` or push it past the
    /// size the next boot reads.
    var mayRecordBootSteps: Bool { mayNameFiles }

    /// The daemon's own requests (the demo script).
    package static let daemon = Access(mayNameFiles: true, isRoot: true)
    /// The psplash FIFO, whose writers are unknown (its file mode decides who writes), and
    /// a Plymouth peer whose credentials cannot be read.
    package static let compatInput = Access(mayNameFiles: false, isRoot: false)

    /// What `request` would do to a question on the screen, in words; nil when it leaves
    /// it be.
    private static func takesTheScreen(_ request: Request) -> String? {
        switch request {
        case .hide: "hide the splash"
        case .deactivate: "hand the display over"
        case .theme, .reload: "change the theme"
        case .snapshot, .snapshotToPassedFile: "take a snapshot"
        case .quit: "quit"
        default: nil
        }
    }

    /// Theme keys whose values are file paths.
    static let fileThemeKeys = ThemeSetting.fileKeys

    /// Why `request` is refused (`err denied`), or nil when it is allowed. `rootWaits`:
    /// root waits for the keyboard on the screen (a question or a keystroke watch,
    /// `QuestionDesk`); until it is answered the screen is root's, and another peer may
    /// not take the screen away from it (`hide`, `deactivate`), cover or move it (`theme`,
    /// `reload`), read it off the screen (`snapshot`: a password's bullets, an echoed
    /// answer), nor end the daemon under it (`quit`). README "Access" has the reasons.
    package func refusal(of request: Request, rootWaits: Bool = false) -> ProtocolError? {
        if case .newRoot = request, !isRoot {
            return ProtocolError(.denied, "only root may move the daemon into a new root")
        }
        if rootWaits, !isRoot, let what = Self.takesTheScreen(request) {
            return ProtocolError(.denied, "root's question waits on the screen: only root may \(what) until it is answered")
        }
        guard !mayNameFiles else { return nil }
        switch request {
        case .snapshot:
            return ProtocolError(
                .denied, "only root may name a snapshot path; send 'snapshot -' with a file you opened (gaugectl snapshot FILE does)")
        case .theme(let settings):
            let named = settings.map { $0.key }.filter { Self.fileThemeKeys.contains($0) }
            guard let first = named.first else { return nil }
            return ProtocolError(.denied, "only root may set theme keys that name files (\(first))")
        case .jobs:
            return ProtocolError(.denied, "only root reports the boot's jobs (the boot estimate follows them)")
        case .describe:
            return ProtocolError(.denied, "only root describes the boot's units (their steps would read as it says)")
        case .waitKey:
            return ProtocolError(.denied, "only root waits for the keys typed at the screen")
        default:
            return nil
        }
    }
}
