import CGaugeLinux
import GaugeSystem

/// Why the daemon could not start listening.
package enum ListenerError: Error, Equatable, CustomStringConvertible {
    case system(SystemError)
    /// Another daemon accepts connections on the path.
    case alreadyRunning(path: String)
    /// Something that is not a socket sits at the path; it is not ours to remove.
    case notASocket(path: String)
    /// A descriptor passed by systemd is not a listening `AF_UNIX` stream socket.
    case notAListeningUnixStreamSocket(fd: Int32)

    package var description: String {
        switch self {
        case .system(let error): "\(error)"
        case .alreadyRunning(let path): "another daemon is already listening on \(path)"
        case .notASocket(let path): "\(path) exists and is not a socket"
        case .notAListeningUnixStreamSocket(let fd): "descriptor \(fd) is not a listening Unix stream socket"
        }
    }
}

/// The daemon's listening Unix stream socket: bound by the daemon itself, or passed by
/// systemd socket activation. Non-blocking and close-on-exec either way.
package final class ListeningSocket {
    package let fd: Int32
    /// The path bound, nil for an adopted socket.
    package let path: String?
    /// The socket file this process created (device and inode), so `close()` removes
    /// it only if it is still the same file — not one a newer daemon put there.
    private let createdFile: (dev: UInt64, ino: UInt64)?
    /// The `flock`ed lock file beside the socket, held while the socket is ours.
    private let lockFD: Int32?
    private var isClosed = false

    private init(fd: Int32, path: String?, createdFile: (dev: UInt64, ino: UInt64)?, lockFD: Int32? = nil) {
        self.fd = fd
        self.path = path
        self.createdFile = createdFile
        self.lockFD = lockFD
    }

    /// The lock file of a socket path: `PATH.lock`.
    package static func lockPath(for path: String) -> String { path + ".lock" }

    deinit {
        close()
    }

    /// The daemon's socket: the first one systemd passed (`passed`, normally
    /// `SocketActivation.takeFromEnvironment()`), else `path` bound by the daemon.
    package static func passedOrBound(
        path: String, groupID: UInt32? = nil, passed: Range<Int32>
    ) throws(ListenerError) -> ListeningSocket {
        if let fd = passed.first { return try adopt(fd: fd) }
        return try bind(path: path, groupID: groupID)
    }

    /// Binds and listens on `path` (`@name` for the abstract namespace):
    /// creates the parent directories (0755) as needed, takes an exclusive `flock` on
    /// `PATH.lock` (held until `close()`; a second daemon starting at the same moment
    /// fails here, before it could mistake the first one's socket, bound but not yet
    /// listening, for a stale one), refuses to start if a live daemon answers on the
    /// path, removes a stale socket file, binds, sets the file's mode to `mode` and its
    /// group to `groupID` if given, then listens. The lock file stays (removing it would
    /// let a third daemon lock a new file while the second holds the old one).
    package static func bind(
        path: String, groupID: UInt32? = nil, mode: mode_t = 0o660, backlog: Int32 = CGL_SOMAXCONN
    ) throws(ListenerError) -> ListeningSocket {
        let address: UnixSocketAddress
        do throws(SystemError) { address = try UnixSocketAddress(path) } catch { throw .system(error) }
        var lockFD: Int32?
        if !address.isAbstract {
            do throws(SystemError) { try makeParentDirectories(of: path) } catch { throw .system(error) }
            lockFD = try lock(path)
            do throws(ListenerError) {
                try removeStaleSocket(at: address)
            } catch {
                if let lockFD { Syscall.close(lockFD) }
                throw error
            }
        }
        let fd: Int32
        do throws(SystemError) {
            fd = try Syscall.socket(domain: CGL_AF_UNIX, type: CGL_SOCK_STREAM | CGL_SOCK_NONBLOCK)
        } catch {
            if let lockFD { Syscall.close(lockFD) }
            throw .system(error)
        }
        do throws(SystemError) {
            try Syscall.bind(fd, to: address)
        } catch {
            Syscall.close(fd)
            if let lockFD { Syscall.close(lockFD) }
            throw error.errno == EADDRINUSE ? .alreadyRunning(path: path) : .system(error)
        }
        do throws(SystemError) {
            var identity: (dev: UInt64, ino: UInt64)?
            if !address.isAbstract {
                // Permissions before listen: nobody can connect before they are right.
                try Syscall.chmod(path, mode: mode)
                if let groupID { try Syscall.chown(path, group: groupID) }
                identity = try Syscall.lstat(path).map { (dev: UInt64($0.st_dev), ino: UInt64($0.st_ino)) }
            }
            try Syscall.listen(fd, backlog: backlog)
            return ListeningSocket(fd: fd, path: path, createdFile: identity, lockFD: lockFD)
        } catch {
            if !address.isAbstract { try? Syscall.unlink(path) }
            Syscall.close(fd)
            if let lockFD { Syscall.close(lockFD) }
            throw .system(error)
        }
    }

    /// Opens (creating, 0600) and locks `PATH.lock` without waiting.
    private static func lock(_ path: String) throws(ListenerError) -> Int32 {
        let lockPath = lockPath(for: path)
        do throws(SystemError) {
            let fd = try Syscall.open(lockPath, flags: O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK, mode: 0o600)
            do throws(SystemError) {
                if try Syscall.lockExclusive(fd, lockPath) { return fd }
            } catch {
                Syscall.close(fd)
                throw error
            }
            Syscall.close(fd)
        } catch {
            throw .system(error)
        }
        throw .alreadyRunning(path: path)
    }

    /// Takes over a socket passed by systemd after checking that it is a listening
    /// `AF_UNIX` stream socket.
    package static func adopt(fd: Int32) throws(ListenerError) -> ListeningSocket {
        do throws(SystemError) {
            let domain = try Syscall.socketOption(fd, level: CGL_SOL_SOCKET, name: CGL_SO_DOMAIN)
            let type = try Syscall.socketOption(fd, level: CGL_SOL_SOCKET, name: CGL_SO_TYPE)
            let listening = try Syscall.socketOption(fd, level: CGL_SOL_SOCKET, name: CGL_SO_ACCEPTCONN)
            guard domain == CGL_AF_UNIX, type == CGL_SOCK_STREAM, listening != 0 else {
                throw SystemError("adopt descriptor \(fd)", errno: ENOTSOCK)
            }
            try Syscall.makeNonBlockingAndCloseOnExec(fd)
        } catch where error.errno == ENOTSOCK || error.errno == EBADF {
            throw .notAListeningUnixStreamSocket(fd: fd)
        } catch {
            throw .system(error)
        }
        return ListeningSocket(fd: fd, path: nil, createdFile: nil)
    }

    /// Closes the socket and removes its file if this process created it and it is still
    /// there (an adopted socket's file belongs to systemd).
    package func close() {
        guard !isClosed else { return }
        isClosed = true
        Syscall.close(fd)
        defer { if let lockFD { Syscall.close(lockFD) } }
        if let path, let createdFile, let status = try? Syscall.lstat(path),
            UInt64(status.st_dev) == createdFile.dev, UInt64(status.st_ino) == createdFile.ino
        {
            try? Syscall.unlink(path)
        }
    }

    // MARK: Preparing the path

    /// `mkdir -p` of the directory holding `path`; directories it creates get 0755
    /// whatever the umask, so group members can reach the socket.
    private static func makeParentDirectories(of path: String) throws(SystemError) {
        let bytes = Array(path.utf8)
        guard let lastSlash = bytes.lastIndex(of: UInt8(ascii: "/")), lastSlash > 0 else { return }
        var index = 1
        while index <= lastSlash {
            if index == lastSlash || bytes[index] == UInt8(ascii: "/") {
                let directory = String(decoding: bytes[..<index], as: UTF8.self)
                do throws(SystemError) {
                    try Syscall.mkdir(directory, mode: 0o755)
                    try Syscall.chmod(directory, mode: 0o755)
                } catch where error.errno == EEXIST {
                    // Already there (a file in the way makes bind fail with ENOTDIR).
                }
            }
            index += 1
        }
    }

    /// Removes a socket file nobody listens on; refuses if a daemon answers or the path
    /// holds something other than a socket.
    private static func removeStaleSocket(at address: UnixSocketAddress) throws(ListenerError) {
        let path = address.path
        let status: stat?
        do throws(SystemError) { status = try Syscall.lstat(path) } catch { throw .system(error) }
        guard let status else { return }
        guard status.isType(S_IFSOCK) else { throw .notASocket(path: path) }
        do throws(SystemError) {
            let probe = try Syscall.socket(domain: CGL_AF_UNIX, type: CGL_SOCK_STREAM | CGL_SOCK_NONBLOCK)
            defer { Syscall.close(probe) }
            // Connected, or a full backlog (EAGAIN): someone is listening.
            _ = try Syscall.connect(probe, to: address)
        } catch where error.errno == ECONNREFUSED || error.errno == ENOENT {
            do throws(SystemError) {
                try Syscall.unlink(path)
                return
            } catch where error.errno == ENOENT {
                return
            } catch {
                throw .system(error)
            }
        } catch {
            throw .system(error)
        }
        throw .alreadyRunning(path: path)
    }
}

extension ListeningSocket {
    /// `gauged`'s socket: the one systemd passed, or the one bound at `options`'
    /// `--socket`, its group `--group`'s (`groupID`); why not, in one line naming the path.
    static func forDaemon(_ options: DaemonOptions, groupID: UInt32?) throws(DaemonError) -> ListeningSocket {
        do {
            return try passedOrBound(path: options.socketPath, groupID: groupID, passed: SocketActivation.takeFromEnvironment())
        } catch {
            // Most reasons name the path already: say it once.
            let reason = "\(error)"
            let path = options.socketPath
            throw DaemonError(reason.containsText(path) ? "cannot listen: \(reason)" : "cannot listen on \(path): \(reason)")
        }
    }
}

extension SocketServerConfiguration {
    /// The native socket's limits as `gauged`'s options set them, `--group`'s members (`groupID`) let in.
    init(_ options: DaemonOptions, groupID: UInt32?) {
        self.init()
        maxClients = options.maxClients
        privilegedReserve = min(4, options.maxClients / 4)
        policy = PeerPolicy(groupID: groupID)
        idleTimeout = options.idleTimeout
    }
}
