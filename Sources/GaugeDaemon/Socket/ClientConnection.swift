import GaugeProtocol
import Glibc
import GaugeSystem

/// What the request handler does with a line.
package enum ReplyAction: Equatable, Sendable {
    /// Send this reply line now (a trailing `\n` is added if missing).
    case reply(String)
    /// The reply comes later through `ClientConnection.complete(reply:)` (the `wait`
    /// request). Until then the client's further lines stay queued, unprocessed, so its
    /// replies keep the order of its requests.
    case deferred
}

/// Bounds on what one client can cost the daemon.
package struct ClientLimits: Sendable {
    /// The longest request line (LineFramer).
    package var maxLineBytes = Limits.maxLineBytes
    /// Bytes read from one client per readiness callback, so a fast client cannot delay
    /// the others or the frame clock.
    package var readBudget = 16 * 1024
    /// Reply bytes waiting for a client that does not read them; beyond this the client
    /// is disconnected.
    package var maxPendingOutput = 64 * 1024

    package init() {}
}

/// One accepted client: reads its bytes into a `LineFramer`, hands each line (or framing
/// error) to the request handler in order, and writes the replies back, buffering what the
/// socket does not take at once until it is writable again.
///
/// Reading pauses while a deferred reply is outstanding and lines are queued behind it,
/// so a client cannot pile up requests in the daemon. A client that vanishes (EOF,
/// ECONNRESET, EPIPE) is closed quietly; lines it completed before leaving still run.
/// If it only shut down its writing side, the replies still owed to it are sent first.
package final class ClientConnection {
    package typealias RequestHandler = (ClientConnection, LineFramer.Item) -> ReplyAction

    /// Unique for the daemon's lifetime (descriptor numbers are reused).
    package let id: UInt64
    package let peer: PeerCredentials
    package private(set) var isOpen = true
    /// A deferred reply is outstanding.
    package private(set) var isAwaitingReply = false

    private let fd: Int32
    private let loop: EventLoop
    private let limits: ClientLimits
    private let scratch: ReadBuffer
    private let log: Log
    private let handler: RequestHandler
    private let onClose: (ClientConnection) -> Void

    private var framer: LineFramer
    private var queue: [LineFramer.Item] = []
    private var queueHead = 0
    private var output: [UInt8] = []
    private var outputHead = 0
    private var readClosed = false
    private var interest: IOEvents = []
    private var resumeScheduled = false
    /// The last descriptor the client sent (SCM_RIGHTS), for the request it came with.
    private var passedDescriptor: Int32?

    init(
        fd: Int32, id: UInt64, peer: PeerCredentials, loop: EventLoop, limits: ClientLimits,
        scratch: ReadBuffer, log: Log, handler: @escaping RequestHandler,
        onClose: @escaping (ClientConnection) -> Void
    ) {
        self.fd = fd
        self.id = id
        self.peer = peer
        self.loop = loop
        self.limits = limits
        self.scratch = scratch
        self.log = log
        self.handler = handler
        self.onClose = onClose
        framer = LineFramer(maxLineBytes: limits.maxLineBytes)
    }

    deinit {
        if isOpen {
            loop.unregister(fd)
            Syscall.close(fd)
        }
        if let passedDescriptor { Syscall.close(passedDescriptor) }
    }

    func start() throws(SystemError) {
        interest = .readable
        try loop.register(fd, events: interest) { [weak self] events in self?.handle(events) }
    }

    /// Bytes of replies not yet taken by the socket.
    package var pendingOutputCount: Int { output.count - outputHead }

    /// Lines received and not yet handed to the handler.
    package var queuedLineCount: Int { queue.count - queueHead }

    /// Sends the reply of the request that was answered with `.deferred`, then goes on
    /// with the lines queued behind it (from the event loop, not from inside this call).
    /// Ignored if the client has gone meanwhile.
    package func complete(reply: String) {
        guard isOpen else { return }
        guard isAwaitingReply else {
            log.info("client \(id): reply completed with none deferred, dropped")
            return
        }
        isAwaitingReply = false
        appendReply(reply)
        flush()
        guard isOpen, checkOutputLimit() else { return }
        scheduleResume()
    }

    /// Hands over the descriptor the client sent with its request (gaugectl sends one with
    /// `snapshot -`, in the same message as the line); the caller closes it. Only the
    /// latest one is kept: one sent before it is closed when the next arrives.
    package func takePassedDescriptor() -> Int32? {
        defer { passedDescriptor = nil }
        return passedDescriptor
    }

    /// Closes the connection at once; replies not yet sent are tried once more.
    package func close() {
        guard isOpen else { return }
        if pendingOutputCount > 0 { flush(closeOnError: false) }
        isOpen = false
        loop.unregister(fd)
        Syscall.close(fd)
        queue = []
        output = []
        if let passedDescriptor { Syscall.close(passedDescriptor) }
        passedDescriptor = nil
        onClose(self)
    }

    // MARK: Events

    private func handle(_ events: IOEvents) {
        guard isOpen else { return }
        if events.contains(.error) {
            log.debug("client \(id): socket error, closed")
            close()
            return
        }
        if events.contains(.writable) {
            flush()
            guard isOpen else { return }
        }
        if events.contains(.readable), interest.contains(.readable) {
            readChunk()
            guard isOpen else { return }
        }
        processQueue()
        guard isOpen else { return }
        // Both directions closed while we are not reading: nobody is left to answer.
        if events.contains(.hangup), !interest.contains(.readable) || readClosed {
            log.debug("client \(id): hung up")
            close()
            return
        }
        settle()
    }

    /// One read of at most `readBudget` bytes; level-triggered epoll calls again for more.
    private func readChunk() {
        let buffer = UnsafeMutableRawBufferPointer(rebasing: scratch.bytes.prefix(limits.readBudget))
        let count: Int?
        var passed: [Int32] = []
        do throws(SystemError) {
            count = try Syscall.receive(fd, into: buffer, descriptors: &passed)
        } catch {
            if error.isDisconnect { log.debug("client \(id): \(error), closed") } else { log.info("client \(id): \(error), closed") }
            close()
            return
        }
        if let last = passed.popLast() {
            for extra in passed { Syscall.close(extra) }
            if let passedDescriptor { Syscall.close(passedDescriptor) }
            passedDescriptor = last
        }
        guard let count else { return }
        if count == 0 {
            readClosed = true
            if framer.pendingByteCount > 0 { log.debug("client \(id): left mid-line") }
            return
        }
        framer.append(UnsafeRawBufferPointer(rebasing: buffer.prefix(count)))
        while let item = framer.next() { queue.append(item) }
    }

    /// Hands queued lines to the handler until one is deferred or none are left.
    private func processQueue() {
        while isOpen, !isAwaitingReply, queueHead < queue.count {
            let item = queue[queueHead]
            queueHead += 1
            switch handler(self, item) {
            case .reply(let reply):
                appendReply(reply)
            case .deferred:
                isAwaitingReply = true
            }
            guard isOpen else { return }
            if pendingOutputCount >= 8 * 1024 {
                flush()
                guard isOpen else { return }
            }
            guard checkOutputLimit() else { return }
        }
        if queueHead == queue.count {
            queue.removeAll(keepingCapacity: queue.count <= 256)
        } else if queueHead > 0 {
            queue.removeFirst(queueHead)
        }
        queueHead = 0
        flush()
    }

    /// After an event: watch for what the connection now needs, or finish it.
    private func settle() {
        guard isOpen else { return }
        if readClosed, !isAwaitingReply, queuedLineCount == 0, pendingOutputCount == 0 {
            log.debug("client \(id): done")
            close()
            return
        }
        var wanted: IOEvents = []
        // Lines queued behind a deferred reply: stop reading until it completes.
        if !readClosed, !(isAwaitingReply && queuedLineCount > 0) { wanted.insert(.readable) }
        if pendingOutputCount > 0 { wanted.insert(.writable) }
        guard wanted != interest else { return }
        do throws(SystemError) {
            try loop.modify(fd, events: wanted)
            interest = wanted
        } catch {
            log.info("client \(id): \(error), closed")
            close()
        }
    }

    private func scheduleResume() {
        guard !resumeScheduled else { return }
        resumeScheduled = true
        loop.execute { [weak self] in
            guard let self else { return }
            resumeScheduled = false
            guard isOpen else { return }
            processQueue()
            settle()
        }
    }

    // MARK: Output

    private func appendReply(_ reply: String) {
        // One reply is one line: a line break inside it would shift every later reply.
        var replaced = false
        var utf8 = Array(reply.utf8)
        if utf8.last == UInt8(ascii: "\n") { utf8.removeLast() }
        for index in utf8.indices where utf8[index] == UInt8(ascii: "\n") || utf8[index] == UInt8(ascii: "\r") {
            utf8[index] = UInt8(ascii: " ")
            replaced = true
        }
        if replaced { log.debug("client \(id): line break inside a reply replaced") }
        output += utf8
        output.append(UInt8(ascii: "\n"))
    }

    /// False (and the client disconnected) when it lets replies pile up.
    private func checkOutputLimit() -> Bool {
        guard pendingOutputCount > limits.maxPendingOutput else { return true }
        log.info("client \(id) (\(peer)): not reading its replies (\(pendingOutputCount) bytes pending), disconnected")
        output = []
        outputHead = 0
        close()
        return false
    }

    /// Writes as much pending output as the socket takes.
    private func flush(closeOnError: Bool = true) {
        while outputHead < output.count {
            let result = output.withUnsafeBytes { bytes in
                Result { () throws(SystemError) in
                    try Syscall.send(fd, UnsafeRawBufferPointer(rebasing: bytes[outputHead...]))
                }
            }
            switch result {
            case .success(let count?):
                outputHead += count
            case .success(nil):
                compactOutput()
                return
            case .failure(let error):
                outputHead = output.count
                if closeOnError {
                    if error.isDisconnect { log.debug("client \(id): \(error), closed") } else { log.info("client \(id): \(error), closed") }
                    close()
                }
                return
            }
        }
        output.removeAll(keepingCapacity: output.capacity <= 16 * 1024)
        outputHead = 0
    }

    private func compactOutput() {
        if outputHead >= 16 * 1024, outputHead * 2 >= output.count {
            output.removeFirst(outputHead)
            outputHead = 0
        }
    }
}

/// The bytes one read lands in, shared by every client of a server (one thread).
final class ReadBuffer {
    let bytes: UnsafeMutableRawBufferPointer

    init(count: Int) {
        bytes = .allocate(byteCount: count, alignment: 16)
    }

    deinit {
        bytes.deallocate()
    }
}
