import CGaugeLinux

/// The raw system calls of every target (daemon, displays, gaugectl), in one place: one
/// wrapper per call, `errno` read at once after it, before any message is built.
///
/// Every call is retried on `EINTR` (except `close`, which Linux never restarts) and failures
/// throw a `SystemError` naming the operation. Calls on non-blocking descriptors return
/// `nil` for `EAGAIN`/`EWOULDBLOCK` instead of throwing, so "not now" is not an error.
package enum Syscall {
    // MARK: Retry helpers

    /// Runs `call` unless a test's `SyscallFaults` plan fails it first; either way returns
    /// the result and the `errno` read at once, before anything else can change it.
    @inline(__always)
    private static func invoke<T: FixedWidthInteger>(_ name: StaticString, _ call: () -> T) -> (T, Int32) {
        if let plan = SyscallFaults.current, let injected = plan.take(name) { return (-1, injected) }
        let result = call()
        return (result, result == -1 ? CGL_errno() : 0)
    }

    @inline(__always)
    static func retrying<T: FixedWidthInteger>(
        _ name: StaticString, _ operation: @autoclosure () -> String, _ call: () -> T
    ) throws(SystemError) -> T {
        while true {
            let (result, error) = invoke(name, call)
            if result != -1 { return result }
            if error == EINTR { continue }
            throw SystemError(operation(), errno: error)
        }
    }

    @inline(__always)
    static func nonBlocking<T: FixedWidthInteger>(
        _ name: StaticString, _ operation: @autoclosure () -> String, _ call: () -> T
    ) throws(SystemError) -> T? {
        while true {
            let (result, error) = invoke(name, call)
            if result != -1 { return result }
            if error == EINTR { continue }
            if error == EAGAIN || error == EWOULDBLOCK { return nil }
            throw SystemError(operation(), errno: error)
        }
    }

    // MARK: Descriptors

    /// Reads at most `buffer.count` bytes: the count read, 0 at end of file, nil if nothing
    /// is available yet.
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int? {
        try nonBlocking("read", "read", { CGaugeLinux.read(fd, buffer.baseAddress, buffer.count) })
    }

    /// Writes at most `bytes.count` bytes: the count written, nil if the descriptor is full.
    package static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemError) -> Int? {
        try nonBlocking("write", "write", { CGaugeLinux.write(fd, bytes.baseAddress, bytes.count) })
    }

    /// `send` that never raises SIGPIPE and never blocks: the count sent, nil if the socket is full.
    package static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemError) -> Int? {
        try nonBlocking("send", "send", {
            CGaugeLinux.send(fd, bytes.baseAddress, bytes.count, CGL_MSG_NOSIGNAL | CGL_MSG_DONTWAIT)
        })
    }

    /// `send` of `bytes` with `descriptor` passed along (SCM_RIGHTS): never raises SIGPIPE;
    /// nil if the socket is full.
    package static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, passing descriptor: Int32) throws(SystemError) -> Int? {
        try nonBlocking("sendmsg", "sendmsg", { CGL_send_with_descriptor(fd, bytes.baseAddress, bytes.count, descriptor) })
    }

    /// Closes a descriptor. Not retried: on Linux the descriptor is released even when
    /// `close` reports `EINTR`, and a retry could close a descriptor opened meanwhile.
    package static func close(_ fd: Int32) {
        _ = CGaugeLinux.close(fd)
    }

    package static func open(_ path: String, flags: Int32, mode: mode_t = 0) throws(SystemError) -> Int32 {
        try retrying("open", "open \(path)", { CGL_open(path, flags | O_CLOEXEC, mode) })
    }

    package static func fcntl(_ fd: Int32, _ command: Int32, _ argument: Int32 = 0) throws(SystemError) -> Int32 {
        try retrying("fcntl", "fcntl", { CGL_fcntl_value(fd, command, argument) })
    }

    /// Sets `O_NONBLOCK` and `FD_CLOEXEC` on a descriptor that was handed to us.
    package static func makeNonBlockingAndCloseOnExec(_ fd: Int32) throws(SystemError) {
        let flags = try fcntl(fd, F_GETFL)
        if flags & O_NONBLOCK == 0 { _ = try fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
        let descriptorFlags = try fcntl(fd, F_GETFD)
        if descriptorFlags & FD_CLOEXEC == 0 { _ = try fcntl(fd, F_SETFD, descriptorFlags | FD_CLOEXEC) }
    }

    package static func ioctl(
        _ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer, _ name: @autoclosure () -> String
    ) throws(SystemError) {
        _ = try retrying("ioctl", "ioctl \(name())", { CGL_ioctl_ptr(fd, request, argument) })
    }

    package static func ioctl(
        _ fd: Int32, _ request: UInt, value: UInt, _ name: @autoclosure () -> String
    ) throws(SystemError) {
        _ = try retrying("ioctl", "ioctl \(name())", { CGL_ioctl_value(fd, request, value) })
    }

    // MARK: Files

    package static func unlink(_ path: String) throws(SystemError) {
        _ = try retrying("unlink", "unlink \(path)", { CGaugeLinux.unlink(path) })
    }

    /// Replaces `destination` with `source` in one step (both in one file system).
    package static func rename(_ source: String, to destination: String) throws(SystemError) {
        _ = try retrying("rename", "rename \(source) to \(destination)", { CGaugeLinux.rename(source, destination) })
    }

    /// Writes a file's data to its disk before it replaces another one.
    package static func fsync(_ fd: Int32) throws(SystemError) {
        _ = try retrying("fsync", "fsync", { CGaugeLinux.fsync(fd) })
    }

    package static func mkdir(_ path: String, mode: mode_t) throws(SystemError) {
        _ = try retrying("mkdir", "mkdir \(path)", { CGaugeLinux.mkdir(path, mode) })
    }

    package static func chmod(_ path: String, mode: mode_t) throws(SystemError) {
        _ = try retrying("chmod", "chmod \(path)", { CGaugeLinux.chmod(path, mode) })
    }

    /// Changes the group of a file, keeping its owner.
    package static func chown(_ path: String, group: gid_t) throws(SystemError) {
        _ = try retrying("chown", "chown \(path)", { CGaugeLinux.chown(path, uid_t.max, group) })
    }

    /// `lstat`, or nil if nothing exists at the path.
    package static func lstat(_ path: String) throws(SystemError) -> stat? {
        var status = stat()
        do throws(SystemError) {
            _ = try retrying("lstat", "lstat \(path)", { CGaugeLinux.lstat(path, &status) })
        } catch where error.errno == ENOENT {
            return nil
        }
        return status
    }

    /// `stat` (following symbolic links, also /proc's links to open files), or nil if
    /// nothing exists at the path.
    package static func fileStatus(_ path: String) throws(SystemError) -> CGaugeLinux.stat? {
        var status = CGaugeLinux.stat()
        do throws(SystemError) {
            _ = try retrying("stat", "stat \(path)", { fstatat(AT_FDCWD, path, &status, 0) })
        } catch where error.errno == ENOENT {
            return nil
        }
        return status
    }

    /// `fstat` of an open descriptor.
    package static func fstat(_ fd: Int32) throws(SystemError) -> stat {
        var status = stat()
        _ = try retrying("fstat", "fstat", { CGaugeLinux.fstat(fd, &status) })
        return status
    }

    /// Makes a FIFO; the mode is filtered by the umask, as `mkfifo(3)` does.
    package static func mkfifo(_ path: String, mode: mode_t) throws(SystemError) {
        _ = try retrying("mkfifo", "mkfifo \(path)", { CGaugeLinux.mkfifo(path, mode) })
    }

    /// Takes an exclusive `flock` without waiting: false if another open file holds it.
    package static func lockExclusive(_ fd: Int32, _ what: @autoclosure () -> String) throws(SystemError) -> Bool {
        try nonBlocking("flock", "flock \(what())", { CGL_flock_try_exclusive(fd) }) != nil
    }

    /// Maps `length` bytes of a descriptor shared, for reading and writing.
    package static func mapShared(_ fd: Int32, length: Int, offset: Int64 = 0) throws(SystemError) -> UnsafeMutableRawPointer {
        if let plan = SyscallFaults.current, let injected = plan.take("mmap") { throw SystemError("mmap", errno: injected) }
        guard let pointer = CGaugeLinux.mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(offset)),
            pointer != UnsafeMutableRawPointer(bitPattern: -1)
        else { throw SystemError("mmap", errno: CGL_errno()) }
        return pointer
    }

    /// Ignores `signal` from now on (`SIG_IGN`).
    package static func ignoreSignal(_ signal: Int32) {
        _ = CGL_ignore_signal(signal)
    }

    /// Gives `signal` its default action (`SIG_DFL`): a SIGCHLD ignored by whoever started
    /// this process would have its children reaped unseen.
    package static func defaultSignal(_ signal: Int32) {
        _ = CGL_default_signal(signal)
    }

    package static func unmap(_ pointer: UnsafeMutableRawPointer, length: Int) {
        _ = CGaugeLinux.munmap(pointer, length)
    }

    // MARK: Sockets

    package static func socket(domain: Int32, type: Int32) throws(SystemError) -> Int32 {
        try retrying("socket", "socket", { CGaugeLinux.socket(domain, type | CGL_SOCK_CLOEXEC, 0) })
    }

    package static func bind(_ fd: Int32, to address: UnixSocketAddress) throws(SystemError) {
        _ = try retrying("bind", "bind \(address.path)", {
            address.withSockaddr { CGaugeLinux.bind(fd, $0, $1) }
        })
    }

    /// Connects; on a non-blocking socket `EAGAIN` (a full backlog) comes back as `false`.
    package static func connect(_ fd: Int32, to address: UnixSocketAddress) throws(SystemError) -> Bool {
        try nonBlocking("connect", "connect \(address.path)", {
            address.withSockaddr { CGaugeLinux.connect(fd, $0, $1) }
        }) != nil
    }

    package static func listen(_ fd: Int32, backlog: Int32) throws(SystemError) {
        _ = try retrying("listen", "listen", { CGaugeLinux.listen(fd, backlog) })
    }

    /// Accepts a connection as a non-blocking, close-on-exec socket; nil if none is waiting.
    /// Connections that died in the backlog (`ECONNABORTED`) are skipped.
    package static func accept(_ fd: Int32) throws(SystemError) -> Int32? {
        while true {
            do throws(SystemError) {
                return try nonBlocking("accept", "accept", { CGL_accept4(fd, CGL_SOCK_NONBLOCK | CGL_SOCK_CLOEXEC) })
            } catch where error.errno == ECONNABORTED || error.errno == EPROTO {
                continue
            }
        }
    }

    package static func sendTo(
        _ fd: Int32, _ bytes: UnsafeRawBufferPointer, address: UnixSocketAddress
    ) throws(SystemError) -> Int? {
        try nonBlocking("sendto", "sendto \(address.path)", {
            address.withSockaddr {
                CGaugeLinux.sendto(fd, bytes.baseAddress, bytes.count, CGL_MSG_NOSIGNAL | CGL_MSG_DONTWAIT, $0, $1)
            }
        })
    }

    package static func socketOption(_ fd: Int32, level: Int32, name: Int32) throws(SystemError) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = try retrying("getsockopt", "getsockopt", { CGaugeLinux.getsockopt(fd, level, name, &value, &length) })
        return value
    }

    /// The pid, uid and gid of a socket's peer as the kernel recorded them at `connect`
    /// (`SO_PEERCRED`).
    package static func peerCredentials(_ fd: Int32) throws(SystemError) -> (pid: Int32, uid: UInt32, gid: UInt32) {
        var pid: Int32 = 0
        var uid: UInt32 = 0
        var gid: UInt32 = 0
        _ = try retrying("getsockopt", "getsockopt SO_PEERCRED", { CGL_peer_credentials(fd, &pid, &uid, &gid) })
        return (pid, uid, gid)
    }

    /// The supplementary groups of a socket's peer as the kernel recorded them at
    /// `connect` (`SO_PEERGROUPS`): no race with the peer exiting and its pid being reused.
    package static func peerGroups(_ fd: Int32) throws(SystemError) -> [UInt32] {
        var groups = [UInt32](repeating: 0, count: 64)
        while true {
            var length = socklen_t(groups.count * MemoryLayout<UInt32>.size)
            do throws(SystemError) {
                _ = try retrying("getsockopt", "getsockopt SO_PEERGROUPS", {
                    groups.withUnsafeMutableBytes { CGaugeLinux.getsockopt(fd, CGL_SOL_SOCKET, CGL_SO_PEERGROUPS, $0.baseAddress, &length) }
                })
                return Array(groups.prefix(Int(length) / MemoryLayout<UInt32>.size))
            } catch where error.errno == ERANGE && Int(length) > groups.count * MemoryLayout<UInt32>.size {
                // The kernel said how much room the list needs.
                groups = [UInt32](repeating: 0, count: Int(length) / MemoryLayout<UInt32>.size)
            }
        }
    }

    /// Waits up to `timeoutMilliseconds` (-1: no limit) for `events` on one descriptor:
    /// the events that came, empty on timeout or when interrupted by a signal.
    package static func poll(_ fd: Int32, events: Int16, timeoutMilliseconds: Int32) throws(SystemError) -> Int16 {
        var entry = pollfd(fd: fd, events: events, revents: 0)
        do throws(SystemError) {
            let ready = try retrying("poll", "poll", { CGaugeLinux.poll(&entry, 1, timeoutMilliseconds) })
            return ready > 0 ? entry.revents : 0
        } catch where error.errno == EINTR {
            return 0
        }
    }

    // MARK: epoll, timerfd, signalfd

    package static func epollCreate() throws(SystemError) -> Int32 {
        try retrying("epoll_create1", "epoll_create1", { epoll_create1(CGL_EPOLL_CLOEXEC) })
    }

    package static func epollControl(
        _ epollFD: Int32, _ operation: Int32, _ fd: Int32, events: UInt32, token: UInt64
    ) throws(SystemError) {
        var event = epoll_event()
        event.events = events
        event.data.u64 = token
        _ = try retrying("epoll_ctl", "epoll_ctl", { epoll_ctl(epollFD, operation, fd, &event) })
    }

    /// Waits for events; an interrupted wait returns no events.
    package static func epollWait(
        _ epollFD: Int32, _ events: UnsafeMutableBufferPointer<epoll_event>, timeoutMilliseconds: Int32
    ) throws(SystemError) -> Int {
        let (count, error) = invoke("epoll_wait", {
            epoll_wait(epollFD, events.baseAddress, Int32(events.count), timeoutMilliseconds)
        })
        if count >= 0 { return Int(count) }
        if error == EINTR { return 0 }
        throw SystemError("epoll_wait", errno: error)
    }

    package static func timerCreate() throws(SystemError) -> Int32 {
        try retrying("timerfd_create", "timerfd_create", {
            timerfd_create(CGL_CLOCK_MONOTONIC, CGL_TFD_NONBLOCK | CGL_TFD_CLOEXEC)
        })
    }

    /// Arms (or with all zeros disarms) a timerfd; `absolute`: `firstExpiration` is a time
    /// on the timer's clock rather than a delay.
    package static func timerSet(
        _ fd: Int32, interval: timespec, firstExpiration: timespec, absolute: Bool = false
    ) throws(SystemError) {
        var specification = itimerspec(it_interval: interval, it_value: firstExpiration)
        let flags = absolute ? CGL_TFD_TIMER_ABSTIME : 0
        _ = try retrying("timerfd_settime", "timerfd_settime", { timerfd_settime(fd, flags, &specification, nil) })
    }

    /// Creates a signalfd for `mask`, or changes the mask of an existing one (`fd` ≥ 0).
    package static func signalDescriptor(_ fd: Int32, mask: sigset_t) throws(SystemError) -> Int32 {
        var mask = mask
        return try retrying("signalfd", "signalfd", { signalfd(fd, &mask, CGL_SFD_NONBLOCK | CGL_SFD_CLOEXEC) })
    }

    /// Changes the calling thread's signal mask and returns the previous one.
    package static func signalMask(_ how: Int32, _ set: sigset_t) throws(SystemError) -> sigset_t {
        var set = set
        var previous = sigset_t()
        let result = pthread_sigmask(how, &set, &previous)
        if result != 0 { throw SystemError("pthread_sigmask", errno: result) }
        return previous
    }
}
