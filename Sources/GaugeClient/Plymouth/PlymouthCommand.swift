import CGaugeLinux
import GaugeProtocol
import GaugeSystem

/// `plymouth`: Plymouth's client command, as the programs that talk to a boot splash call
/// it (cryptsetup's askpass, systemd's units, display managers, update tools), speaking
/// Plymouth's protocol on its socket, which `gauged --plymouth-compat` serves. Installed as
/// a third name of the one executable.
///
/// Exit statuses are Plymouth's: 0 done; 1 the daemon refused, gave no answer, or none runs
/// (`--ping`, `--has-active-vt`); 2 the daemon went away in the middle; for
/// `ask-for-password --command`, the command's status. A command line it does not know
/// prints the usage on standard error and exits 1.
///
/// One difference, so that a question is never lost: where the daemon refuses to ask
/// (NAK: `gauged` asks on the screen only with `--ask`), `ask-for-password` and
/// `ask-question` ask on the console themselves, as Plymouth's client does for
/// `--command` when no daemon runs; the daemon gives the console the screen while a
/// program reads it. Plymouth's client would end with status 1 and print nothing, which a
/// caller such as askpass takes for an empty passphrase.
package enum PlymouthCommand {
    package static let socketPath = "@/org/freedesktop/plymouthd"

    /// Runs the command line `arguments` (without the program name) and exits.
    package static func main(_ arguments: [String]) -> Never {
        Syscall.ignoreSignal(SIGPIPE)
        let invocation: PlymouthInvocation
        switch PlymouthCommandLine.parse(arguments) {
        case .success(let parsed): invocation = parsed
        case .failure(let error):
            printError(error.message)
            if error.showsUsage { printError(PlymouthCommandLine.usage()) }
            exit(1)
        }
        switch invocation.help {
        case .requested:
            print(PlymouthCommandLine.usage(), terminator: "")
            exit(0)
        case .noArguments:
            printError(PlymouthCommandLine.usage())
            exit(0)
        case nil:
            break
        }
        guard let session = PlymouthSessionClient(path: socketPath) else { exit(notConnected(invocation)) }
        var status: Int32 = 0
        for action in invocation.actions {
            status = session.run(action)
            if status != 0 { break }
        }
        if invocation.waits, status == 0 { session.waitForDaemonToLeave() }
        exit(status)
    }

    /// What Plymouth's client does when no daemon answers: `--wait` is done at once,
    /// `ask-for-password --command` runs the command on its own (it asks for itself), the
    /// rest fail.
    private static func notConnected(_ invocation: PlymouthInvocation) -> Int32 {
        if invocation.waits { return 0 }
        for action in invocation.actions {
            if case .askForPassword(_, let command?, let tries, _) = action {
                return PlymouthAnswers.runOnItsOwn(command, tries: tries)
            }
        }
        return 1
    }
}

/// A connection to the daemon's Plymouth socket and the requests it carries, one reply
/// after another.
final class PlymouthSessionClient {
    private var fd: Int32
    private let path: String
    private var received: [UInt8] = []
    private let forever = Deadline(seconds: nil)

    /// Nil when no daemon listens.
    init?(path: String) {
        self.path = path
        guard let fd = try? DaemonConnection.connect(to: path, deadline: Deadline(seconds: 5)) else { return nil }
        self.fd = fd
    }

    deinit { Syscall.close(fd) }

    /// Sends a request and waits for its reply; nil when the daemon went away first or
    /// answered outside the protocol.
    func request(_ kind: PlymouthRequest.Kind, _ argument: String? = nil) -> PlymouthResponse? {
        do throws(ConnectionFailure) {
            try DaemonConnection.send(PlymouthRequest.encode(kind, text: argument), on: fd, path: path, deadline: forever)
            while true {
                if let decoded = PlymouthResponse.decode(received[...]) {
                    guard case .success(let (reply, count)) = decoded else { return nil }
                    received.removeFirst(count)
                    return reply
                }
                guard try DaemonConnection.receive(from: fd, onto: &received, path: path, deadline: forever) else { return nil }
            }
        } catch {
            return nil
        }
    }

    /// ACK: 0; NAK: 1; gone: 2, as Plymouth's client exits.
    func simple(_ kind: PlymouthRequest.Kind, _ argument: String? = nil) -> Int32 {
        switch request(kind, argument) {
        case .ack?: return 0
        case nil: return Self.disconnected()
        default: return 1
        }
    }

    /// The daemon went away in the middle of a request: status 2.
    static func disconnected() -> Int32 {
        printError("error: unexpectedly disconnected from boot status daemon")
        return 2
    }

    func run(_ action: PlymouthAction) -> Int32 {
        switch action {
        case .ping: return simple(.ping)
        case .hasActiveVT: return simple(.hasActiveVT)
        case .sysinit: return simple(.sysinit)
        case .showSplash: return simple(.showSplash)
        case .hideSplash: return simple(.hideSplash)
        case .deactivate: return simple(.deactivate)
        case .reactivate: return simple(.reactivate)
        case .pauseProgress: return simple(.pauseProgress)
        case .unpauseProgress: return simple(.unpauseProgress)
        case .reportError: return simple(.reportError)
        case .quit(let retain):
            // The argument is one byte, 1 to keep the splash on screen, and its NUL.
            return simple(.quit, retain ? "\u{01}" : "")
        case .update(let status): return simple(.update, status)
        case .changeMode(let mode): return simple(.changeMode, mode)
        case .systemUpdate(let progress): return simple(.systemUpdate, "\(progress)")
        case .newRoot(let directory): return simple(.newRoot, directory)
        case .displayMessage(let text): return simple(.displayMessage, text)
        case .hideMessage(let text): return simple(.hideMessage, text)
        case .ignoreKeystroke(let keys): return simple(.ignoreKeystroke, keys)
        case .watchKeystroke(let keys, let command):
            switch request(.watchKeystroke, keys) {
            case .answer(let key)?: return PlymouthAnswers.deliver(key, to: command)
            case nil: return Self.disconnected()
            default: return 1
            }
        case .askForPassword(let prompt, let command, let tries, let pauses):
            return withProgressPaused(pauses) { PlymouthAnswers(session: self).password(prompt: prompt, command: command, tries: tries) }
        case .askQuestion(let prompt, let command, let pauses):
            return withProgressPaused(pauses) { PlymouthAnswers(session: self).question(prompt: prompt, command: command) }
        }
    }

    /// Plymouth's client pauses the bar while a question waits unless told not to.
    private func withProgressPaused(_ pauses: Bool, _ body: () -> Int32) -> Int32 {
        if pauses, request(.pauseProgress) == nil { return 2 }
        let status = body()
        if pauses { _ = request(.unpauseProgress) }
        return status
    }

    /// `--wait`: returns once the daemon has gone. A connection the daemon closed while it
    /// still runs (its idle limit) is made again.
    func waitForDaemonToLeave() {
        while true {
            var ignored: [UInt8] = []
            while (try? DaemonConnection.receive(from: fd, onto: &ignored, path: path, deadline: forever)) == true {
                ignored.removeAll(keepingCapacity: true)
            }
            Syscall.close(fd)
            guard let again = try? DaemonConnection.connect(to: path, deadline: Deadline(seconds: 5)) else {
                fd = -1
                return
            }
            fd = again
        }
    }
}
