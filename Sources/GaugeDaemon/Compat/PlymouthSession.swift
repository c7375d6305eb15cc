import GaugeProtocol
import GaugeSystem

/// The server side of Plymouth's boot protocol (`ply-boot-protocol.h`) for one client
/// connection: what the `plymouth` command, systemd-fsckd and update tools send to
/// plymouthd, translated into Gauge requests.
///
/// Wire format (client → server), one request after another on the stream:
/// - a command byte, then `\0` when it has no argument, or
/// - a command byte, `\x02`, a length byte N, and N bytes: the argument and its NUL.
///   (plymouthd reads any second byte other than `\x02` as "no argument"; so does this.)
///
/// Every request is answered in order: with one byte, ACK `\x06` or NAK `\x15`, or, for
/// a question, with plymouthd's answer: `\x02`, the length as 4 bytes (least significant
/// first) and the answer, or `\x05` for "no answer" (see `PlymouthReply`). The answer to
/// a question comes when it is given, and the connection's later requests wait for it.
/// (plymouthd's `\t` + length + NUL-separated list for cached passwords is never sent:
/// Gauge keeps no typed password.)
///
/// Questions are asked only when `asks` is set (`gauged --ask`); otherwise they are
/// refused at once, as in the last rows of the table.
///
/// | byte | plymouth command | Gauge |
/// |---|---|---|
/// | `P` | `--ping` | ACK |
/// | `U` | `update --status=S` | `step S` (systemd sends each unit it starts) |
/// | `C` | `change-mode --MODE` | `title` from `PlymouthModeTitles`; an update mode's start and end (`PlymouthUpdates`) |
/// | `u` | `system-update --progress=N` | `progress N` (an integer 0-100, else logged); in an update mode folded into one rising bar (`PlymouthUpdates`) |
/// | `M` / `m` | `display-message` / `hide-message` | `message` (see `PlymouthMessages`; in an update mode `PlymouthUpdates` makes the line) |
/// | `$` / `H` | `show-splash` / `hide-splash` | `show` / `hide` |
/// | `D` / `r` | `deactivate` / `reactivate` | `deactivate` / `reactivate` (a display manager's hand-over) |
/// | `Q` | `quit [--retain-splash]` | `quit [retain]` (argument byte 1 = retain) |
/// | `R` | `update-root-fs --new-root-dir=DIR`, `--newroot=DIR` | `newroot DIR`, from a root peer only (else NAK) |
/// | `A` / `a` | `pause-progress` / `unpause-progress` | ACK; the boot's clock stops and goes on (`pausesProgress`): the boot estimate holds, and the pause is not learnt as boot time |
/// | `S`, `!` | `--sysinit`, `report-error` | ACK only |
/// | `V` | `--has-active-vt` | ACK if `hasActiveVT`, else NAK |
/// | `*` | `ask-for-password [--prompt=P]` | with `asks`, from root only (else NAK): the prompt and a field of bullets; the answer, or `\x05` on Escape |
/// | `W` | `ask-question --prompt=P` | with `asks`: the prompt and the answer echoed; the answer, or `\x05` on Escape |
/// | `c` | cached passwords (systemd's agent asks first) | with `asks`: `\x05`, none cached, so the caller asks with `*` |
/// | `K` | `watch-keystroke [--keys=K]` | with `asks`: the first key pressed that is in K (any key without), as an answer |
/// | `L` | `ignore-keystroke [--keys=K]` | ACK; with `asks`, from root only (else NAK): the watch for K ends and its caller gets `\x05` |
/// | `*`, `c`, `W` without `asks` | passwords, cached passwords, questions | NAK at once, so the caller falls back to asking on the console instead of hanging (Gauge's `plymouth` asks there itself), and the console gets the screen while someone waits to read it (`lendsConsole`) |
/// | `K` without `asks` | `watch-keystroke` | NAK |
/// | other | | NAK and a log line |
///
/// A connection that is not `authorized` (the daemon decides from the peer's
/// credentials, as for its native socket) gets NAK for everything, as plymouthd answers
/// non-root clients. A request the daemon's access policy refuses (`Access`: a member's
/// `H`, `D` or `Q` while root's question waits) is answered NAK by `CompatInputs`.
///
/// Pure: feed the bytes read from the connection to `consume`, apply the requests, then
/// write `reply` back before the daemon could leave (`plymouth quit` waits for its ACK;
/// `plymouth deactivate` returns once the display is released). A request is at most 258
/// bytes, so the held-back bytes stay small.
package struct PlymouthSession: Sendable {
    package static let ack = PlymouthReply.ackByte
    package static let nak = PlymouthReply.nakByte

    package var authorized: Bool
    /// The peer is root: only root may move the daemon into a new root (`R`).
    package var rootPeer: Bool
    package var hasActiveVT: Bool
    /// Questions and keystroke watches are served (`ask` in the output) rather than refused.
    package var asks: Bool
    package var modeTitles: PlymouthModeTitles
    private var decoder = PlymouthFrameDecoder()

    package init(
        authorized: Bool = true, rootPeer: Bool = true, hasActiveVT: Bool = false, asks: Bool = false,
        modeTitles: PlymouthModeTitles = .init()
    ) {
        self.authorized = authorized
        self.rootPeer = rootPeer
        self.hasActiveVT = hasActiveVT
        self.asks = asks
        self.modeTitles = modeTitles
    }

    /// Bytes of an unfinished request held back.
    package var pendingByteCount: Int { decoder.pendingByteCount }

    /// Translates the bytes just read from the connection. `messages` is the one
    /// message list shared by every Plymouth connection of the daemon.
    package mutating func consume<Bytes: Sequence<UInt8>>(
        _ bytes: Bytes, messages: inout PlymouthMessages
    ) -> CompatOutput {
        Array(bytes).withUnsafeBytes { decoder.append($0) }
        var output = CompatOutput()
        while let frame = decoder.next() {
            output.append(answer(frame, messages: &messages))
        }
        return output
    }

    /// The answer, requests and log lines for one request.
    package func answer(_ frame: PlymouthFrame, messages: inout PlymouthMessages) -> CompatOutput {
        guard authorized else {
            return CompatOutput(reply: [Self.nak], logs: ["refused \(frame.name) from an unauthorized client"])
        }
        guard let kind = frame.kind else {
            return CompatOutput(reply: [Self.nak], logs: ["unknown request \(frame.name)"])
        }
        return answer(kind, frame.argument, messages: &messages)
    }

    private func answer(_ kind: PlymouthRequest.Kind, _ argument: [UInt8]?, messages: inout PlymouthMessages) -> CompatOutput {
        let text = argument.map { CompatText.clean($0) } ?? ""
        if let output = answerQuestion(kind, argument, text: text) { return output }
        var requests: [Request] = []
        var logs: [String] = []
        var reply = Self.ack
        switch kind {
        case .ping, .sysinit, .reportError:
            break
        case .pauseProgress, .unpauseProgress:
            var output = CompatOutput(reply: [reply])
            output.pausesProgress = kind == .pauseProgress
            return output
        case .update:
            if !text.isEmpty { requests.append(.step(text)) }
        case .changeMode:
            if let title = modeTitles.title(for: text) {
                requests.append(.title(title))
                requests += messages.updates.changeMode(text, showing: messages.displayed.last)
            } else {
                logs.append("unknown mode \(CompatText.quoted(text)) ignored")
            }
        case .systemUpdate:
            if let value = Self.percent(text) {
                requests += messages.updates.isActive
                    ? messages.updates.progress(value) : [.progress(Double(value), message: nil)]
            } else {
                logs.append("system-update progress \(CompatText.quoted(text)) is not an integer 0-100")
            }
        case .displayMessage:
            requests += messages.updates.message(messages.display(text))
        case .hideMessage:
            requests += messages.updates.message(messages.hide(text))
        case .showSplash:
            requests.append(.show)
        case .hideSplash:
            requests.append(.hide)
        case .deactivate:
            requests.append(.deactivate)
        case .reactivate:
            requests.append(.reactivate)
        case .newRoot:
            switch newRoot(text) {
            case .success(let request): requests.append(request)
            case .failure(let problem): (reply, logs) = (Self.nak, [problem.text])
            }
        case .quit:
            requests.append(.quit(retain: (argument?.first ?? 0) != 0))
        case .hasActiveVT:
            if !hasActiveVT { reply = Self.nak }
        case .password, .cachedPassword, .question, .watchKeystroke, .ignoreKeystroke:
            break  // answerQuestion answered them
        }
        return CompatOutput(requests: requests, reply: [reply], logs: logs)
    }

    /// The questions and keystroke watches (nil for any other command): asked on the
    /// screen with `asks` and of root alone; without it refused, and the console lent to
    /// the caller for its own prompt.
    private func answerQuestion(_ kind: PlymouthRequest.Kind, _ argument: [UInt8]?, text: String) -> CompatOutput? {
        let name = kind.name
        switch kind {
        case .password where asks && !rootPeer, .question where asks && !rootPeer,
            .watchKeystroke where asks && !rootPeer:
            // What is typed at the boot screen (a disk's passphrase) goes to root alone.
            return CompatOutput(reply: [Self.nak], logs: ["\(name) refused: only root may ask at the screen"])
        case .ignoreKeystroke where asks && !rootPeer:
            // Every keystroke watch is root's: another peer has none to end.
            return CompatOutput(reply: [Self.nak], logs: ["\(name) refused: only root may end root's keystroke watches"])
        case .password where asks:
            return CompatOutput(ask: .password(prompt: text))
        case .question where asks:
            return CompatOutput(ask: .question(prompt: text))
        case .cachedPassword where asks:
            return CompatOutput(reply: PlymouthReply.noAnswer)
        case .watchKeystroke where asks:
            return CompatOutput(ask: .watchKeystroke(keys: argument))
        case .ignoreKeystroke:
            return asks ? CompatOutput(reply: [Self.ack], ask: .ignoreKeystroke(keys: argument)) : CompatOutput(reply: [Self.ack])
        case .password, .cachedPassword, .question:
            var output = CompatOutput(reply: [Self.nak], logs: [
                "\(name) refused (questions are asked on the screen only with gauge.ask=1); the console gets the screen for the caller's own prompt",
            ])
            output.lendsConsole = true
            return output
        case .watchKeystroke:
            return CompatOutput(reply: [Self.nak], logs: ["\(name) refused (Gauge reads no keys)"])
        default:
            return nil
        }
    }

    private struct Refusal: Error { let text: String }

    /// `newroot PATH`: root's alone, and only to an absolute directory.
    private func newRoot(_ text: String) -> Result<Request, Refusal> {
        guard rootPeer else { return .failure(Refusal(text: "newroot refused: only root may move the daemon into a new root")) }
        guard text.hasPrefix("/") else { return .failure(Refusal(text: "newroot \(CompatText.quoted(text)) is not an absolute directory")) }
        return .success(.newRoot(path: text))
    }

    /// plymouthd reads the value with `strtol` and takes only a whole 0...100.
    private static func percent(_ text: String) -> Int? {
        guard let value = DecimalDigits.value(text, maxDigits: 3), value <= 100 else { return nil }
        return Int(value)
    }
}

/// The titles `change-mode` sets, by the mode name on the wire (`plymouth change-mode
/// --boot-up` sends `boot-up`; plymouthd's own `--mode` calls it `boot`).
package struct PlymouthModeTitles: Equatable, Sendable {
    package var titles: [String: String]

    package init(
        _ titles: [String: String] = [
            "boot-up": "",
            "boot": "",
            "shutdown": "Shutting down",
            "reboot": "Restarting",
            "updates": "Installing updates",
            "system-upgrade": "Upgrading the system",
            "firmware-upgrade": "Updating firmware",
        ]
    ) {
        self.titles = titles
    }

    /// The title for `mode` (empty clears it); nil for a mode not in the table.
    package func title(for mode: String) -> String? { titles[mode] }
}

/// Plymouth keeps a list of displayed messages: `display-message` adds one,
/// `hide-message TEXT` removes the one with that text. Gauge has one message line, which
/// shows the newest message still displayed (or nothing). One list per daemon, shared
/// by all Plymouth connections, since each `plymouth` call is a connection of its own.
///
/// The list keeps at most `capacity` messages (the oldest go first), so a client that
/// only ever displays cannot grow it: each message is at most 255 bytes.
///
/// It also carries the update modes' bar (`updates`), daemon-wide for the same reason.
package struct PlymouthMessages: Equatable, Sendable {
    static let defaultCapacity = 32

    package let capacity: Int
    package private(set) var displayed: [String] = []
    /// The bar and message line while an update mode is on.
    package var updates: PlymouthUpdates

    package init(capacity: Int = PlymouthMessages.defaultCapacity, updates: PlymouthUpdates = PlymouthUpdates()) {
        self.capacity = max(1, capacity)
        self.updates = updates
    }

    mutating func display(_ text: String) -> [Request] {
        displayed.removeAll { $0 == text }
        if displayed.count == capacity { displayed.removeFirst() }
        displayed.append(text)
        return [.message(text)]
    }

    mutating func hide(_ text: String) -> [Request] {
        guard let index = displayed.lastIndex(of: text) else { return [] }
        let wasShown = index == displayed.count - 1
        displayed.remove(at: index)
        return wasShown ? [.message(displayed.last ?? "")] : []
    }
}
