import CGaugeLinux
import GaugeSystem

/// A progress producer gaugectl runs itself (`gaugectl bootc -- COMMAND ...`,
/// `gaugectl gauge -- COMMAND ...`) rather than reading a pipe a shell set up: what the
/// command writes comes through a pipe of gaugectl's own, and once the stream ends gaugectl
/// knows how the command ended, so a command that fails (or never starts) shows as a
/// failure on the screen and in gaugectl's exit status, which a pipeline's first command
/// cannot.
struct Producer {
    let command: [String]
    let pid: pid_t

    /// Starts `command` with a new pipe's write end as its descriptor `descriptor`;
    /// returns it and the read end.
    static func start(_ command: [String], descriptor: Int32) throws(SystemError) -> (Producer, Int32) {
        let ends = try Syscall.pipe()
        defer { Syscall.close(ends.write) }
        do throws(SystemError) {
            let pid = try Syscall.spawn(command, passing: (ends.write, descriptor))
            return (Producer(command: command, pid: pid), ends.read)
        } catch {
            Syscall.close(ends.read)
            throw error
        }
    }

    /// Waits for the command to end.
    func wait() -> Syscall.ChildEnd {
        guard let status = try? Syscall.waitForChild(pid) else { return .exited(127) }
        return Syscall.ChildEnd(status: status)
    }

    /// The command's name, as the messages call it.
    var name: String { Self.name(of: command) }

    /// A command's name, as the messages call it: its first word's last part.
    static func name(of command: [String]) -> String { command[0].split(separator: "/").last.map(String.init) ?? command[0] }

    /// How the command ended, for the screen and stderr; nil for success.
    static func failure(_ name: String, _ end: Syscall.ChildEnd) -> String? {
        switch end {
        case .exited(0): nil
        case .exited(let code): "\(name) failed (exit status \(code))"
        case .signaled(let signal): "\(name) was killed by signal \(signal)"
        }
    }

    /// The exit status that forwards `end` as a shell does (128 + the signal).
    static func exitCode(_ end: Syscall.ChildEnd) -> Int32 {
        switch end {
        case .exited(let code): code
        case .signaled(let signal): 128 + signal
        }
    }

    /// A command that could not be started: the shell's 127 (not found) or 126.
    static func startFailure(_ error: SystemError) -> (message: String, code: Int32) {
        (error.description, error.errno == ENOENT ? 127 : 126)
    }
}
