import CGaugeLinux

/// Plymouth's pid file (`/run/plymouth/pid`), which a `gauged --ask` creates in
/// Plymouth's place. systemd never reads the pid in it; it only asks whether the file
/// exists (`ConditionPathExists=`): while it does, its console password agent
/// (`systemd-ask-password-console.path`) stays off and its Plymouth agent
/// (`systemd-ask-password-plymouth.path`, or `gauged-ask-password.path`) forwards
/// password requests to Plymouth's socket. A file left behind by a daemon that died
/// therefore keeps every password prompt away from the console, so:
///
/// - it is created as a new file (a temporary one created with `O_EXCL | O_NOFOLLOW`,
///   renamed over the path), never written through a symbolic link or into a file that
///   was there;
/// - one that names no live `gauged` or `plymouthd` is stale and replaced (or removed by
///   `gaugectl console-reset`, which gauged.service runs after a crash); one that names a
///   live daemon is left alone;
/// - it is removed on exit only while it still names this process.
package enum PIDFile {
    /// Programs whose pid files these are; any other process under the pid is a reused pid.
    static let owners = ["gauged", "plymouthd"]

    /// What a pid file holds.
    package enum Holder: Equatable, Sendable {
        /// No file.
        case none
        /// A live process named in `owners`.
        case live(pid: Int32, name: String)
        /// Anything else (a dead or reused pid, no pid, a symbolic link, not a regular
        /// file), with the reason.
        case stale(String)
    }

    /// Who holds the pid file at `path`.
    package static func holder(of path: String) -> Holder {
        let bytes: [UInt8]
        do throws(RegularFile.Error) {
            bytes = try RegularFile.read(path, maxBytes: 64, followLinks: false)
        } catch {
            if (try? Syscall.lstat(path)) == nil { return .none }
            return .stale(error.description)
        }
        guard let pid = parsePID(bytes) else { return .stale("\(path) holds no pid") }
        guard let name = processName(pid), owners.contains(name) else {
            return .stale("\(path) names pid \(pid), which is not a running \(owners.joined(separator: " or "))")
        }
        return .live(pid: pid, name: name)
    }

    /// Writes `pid` to a new file that replaces whatever is at `path` (a symbolic link
    /// itself, never its target); creates the directory if its parent exists. Callers
    /// check `holder(of:)` first.
    package static func create(_ path: String, pid: Int32) throws(SystemError) {
        if let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")), slash != path.utf8.startIndex {
            let directory = String(path[..<slash])
            if try Syscall.lstat(directory) == nil { try Syscall.mkdir(directory, mode: 0o755) }
        }
        let temporary = "\(path).\(pid).new"
        // A leftover of an earlier process with this pid; unlink removes a link itself.
        if try Syscall.lstat(temporary) != nil { try Syscall.unlink(temporary) }
        let fd = try Syscall.open(
            temporary, flags: O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, mode: 0o644)
        do throws(SystemError) {
            let written = Array("\(pid)\n".utf8).withUnsafeBytes { bytes in
                Result { () throws(SystemError) in try Syscall.writeAll(fd, bytes, at: 0) }
            }
            try written.get()
            Syscall.close(fd)
            try Syscall.rename(temporary, to: path)
        } catch {
            Syscall.close(fd)
            try? Syscall.unlink(temporary)
            throw error
        }
    }

    /// Removes the file at `path` if it still names `pid`; true if removed.
    @discardableResult
    package static func remove(_ path: String, ifNaming pid: Int32) -> Bool {
        guard let bytes = try? RegularFile.read(path, maxBytes: 64, followLinks: false), parsePID(bytes) == pid else {
            return false
        }
        return (try? Syscall.unlink(path)) != nil
    }

    /// Removes the file at `path` if it is stale; the reason when removed, nil otherwise.
    package static func removeIfStale(_ path: String) throws(SystemError) -> String? {
        guard case .stale(let reason) = holder(of: path) else { return nil }
        try Syscall.unlink(path)
        return reason
    }

    /// The decimal pid of a pid file's text (`1234\n`); nil for anything else.
    package static func parsePID(_ bytes: [UInt8]) -> Int32? {
        var digits = bytes[...]
        while let last = digits.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: " ") { digits = digits.dropLast() }
        guard let value = DecimalDigits.value(of: digits, maxDigits: 10), value > 0, value <= Int64(Int32.max) else { return nil }
        return Int32(value)
    }

    /// The name of process `pid` (`/proc/PID/comm`), nil when there is no such process.
    static func processName(_ pid: Int32) -> String? {
        guard let name = Syscall.kernelText("/proc/\(pid)/comm", maxBytes: 32), !name.isEmpty else { return nil }
        return name
    }
}
