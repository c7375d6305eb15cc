import CGaugeLinux
import GaugeSystem

/// Bytes on their way to a terminal, written without ever blocking the caller.
///
/// The descriptor is made non-blocking without disturbing anyone else who shares it:
/// a terminal is opened again through `/proc/self/fd` (a private open file description
/// with `O_NONBLOCK`), a pipe or socket gets `O_NONBLOCK` set and its old flags back in
/// `finish`, and a regular file is written as it is (writes to files do not wait on a
/// reader). Whatever the descriptor does not take now stays in `pending` for the next
/// `flush`; the owner decides how much it queues.
final class TerminalOutput {
    /// The descriptor written to (the private reopen, when there is one).
    let fd: Int32
    private let callerFD: Int32
    private let ownsFD: Bool
    /// The caller's flags from before `O_NONBLOCK` was set, to put back.
    private let savedFlags: Int32?
    private var pending: [UInt8] = []
    private var written = 0
    /// Set once a write fails for good (terminal hung up, pipe reader gone).
    private(set) var failure: DisplayError?

    init(fd callerFD: Int32) throws(DisplayError) {
        let st: stat
        do throws(SystemError) {
            st = try Syscall.fstat(callerFD)
        } catch {
            throw DisplayError("terminal: output fd \(callerFD): \(errnoText(error.errno))")
        }
        self.callerFD = callerFD
        if st.isType(S_IFREG) {
            (fd, ownsFD, savedFlags) = (callerFD, false, nil)
            return
        }
        if st.isType(S_IFCHR) && Syscall.isTerminal(callerFD) {
            if let reopened = try? Syscall.open("/proc/self/fd/\(callerFD)", flags: O_WRONLY | O_NOCTTY | O_NONBLOCK) {
                (fd, ownsFD, savedFlags) = (reopened, true, nil)
                return
            }
        }
        // No /proc (an early initramfs) or not a terminal: flip the shared flag, and flip it back later.
        let flags: Int32
        do throws(SystemError) {
            flags = try Syscall.fcntl(callerFD, F_GETFL)
        } catch {
            throw DisplayError("terminal: output fd \(callerFD): \(errnoText(error.errno))")
        }
        if flags & O_NONBLOCK == 0 {
            do throws(SystemError) {
                _ = try Syscall.fcntl(callerFD, F_SETFL, flags | O_NONBLOCK)
            } catch {
                throw DisplayError("terminal: cannot make output fd \(callerFD) non-blocking: \(errnoText(error.errno))")
            }
            savedFlags = flags
        } else {
            savedFlags = nil
        }
        (fd, ownsFD) = (callerFD, false)
    }

    /// True when everything queued has been written.
    var isIdle: Bool { written == pending.count }

    var pendingCount: Int { pending.count - written }

    func append(_ bytes: [UInt8]) {
        compact()
        pending.append(contentsOf: bytes)
    }

    /// Drops what has not been written yet and queues `bytes` instead. `bytes` must start
    /// with ESC, which ends any escape sequence the dropped text left half written.
    func replacePending(with bytes: [UInt8]) {
        pending.removeAll(keepingCapacity: true)
        written = 0
        pending.append(contentsOf: bytes)
    }

    /// Writes as much as the descriptor takes without waiting. Throws once, on the write
    /// that finds the output gone; after that everything queued is discarded.
    func flush() throws(DisplayError) {
        guard failure == nil else {
            replacePending(with: [])
            return
        }
        while written < pending.count {
            let result = pending.withUnsafeBytes { buf in
                Result { () throws(SystemError) in try Syscall.write(fd, UnsafeRawBufferPointer(rebasing: buf[written...])) }
            }
            switch result {
            case .success(let n?) where n > 0:
                written += n
                continue
            case .success:
                break
            case .failure(let failed):
                let error = DisplayError("terminal: write failed: \(errnoText(failed.errno))")
                failure = error
                replacePending(with: [])
                throw error
            }
            break
        }
        compact()
    }

    /// Drops what is queued, writes `bytes` waiting at most `timeoutMilliseconds` for the
    /// terminal to take them, and gives the descriptor back as it was found.
    func finish(with bytes: [UInt8], timeoutMilliseconds: Int) {
        replacePending(with: bytes)
        if failure == nil {
            let deadline = MonotonicClock.milliseconds() + Int64(timeoutMilliseconds)
            while !isIdle {
                do { try flush() } catch { break }
                if isIdle { break }
                let left = deadline - MonotonicClock.milliseconds()
                if left <= 0 { break }
                _ = try? Syscall.poll(fd, events: Int16(POLLOUT), timeoutMilliseconds: Int32(min(left, Int64(Int32.max))))
            }
        }
        replacePending(with: [])
        if ownsFD {
            Syscall.close(fd)
        } else if let savedFlags {
            _ = try? Syscall.fcntl(callerFD, F_SETFL, savedFlags)
        }
    }

    private func compact() {
        if written == pending.count {
            pending.removeAll(keepingCapacity: true)
            written = 0
        } else if written > 65536 {
            pending.removeFirst(written)
            written = 0
        }
    }


}
