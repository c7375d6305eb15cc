import CGaugeLinux
import GaugeProtocol
import GaugeSystem

/// What a connection's handler does with a message.
package enum ConnectionAction: Equatable, Sendable {
    /// Send these bytes back now (nothing when empty).
    case send([UInt8])
    /// The answer comes later through `complete(sending:)` (the `wait` request). Until
    /// then the connection's further messages stay queued, unprocessed, so its answers
    /// keep the order of its requests.
    case deferred
}

/// Bounds on what one connection can cost the daemon, whatever protocol it speaks.
package struct ClientLimits: Sendable {
    /// The longest request line of the line protocols (native, psplash).
    package var maxLineBytes = Limits.maxLineBytes
    /// Bytes read from one connection per loop turn. Nothing more is read from it until
    /// the messages those bytes made have been served, so one connection holds at most
    /// this much unserved input.
    var readBudget = 16 * 1024
    /// Messages served for one connection per loop turn before the others get theirs.
    var maxMessagesPerTurn = 16
    /// Time spent on one connection's messages per loop turn (at least one message is
    /// served), so a batch of slow requests delays the others by about a frame.
    package var maxSecondsPerTurn = 0.004
    /// Answer bytes waiting for a client that does not read them; beyond this the client
    /// is disconnected.
    package var maxPendingOutput = 64 * 1024

    package init() {}
}

/// What a connection knows of the protocol it speaks: the decoder that makes messages of
/// its bytes and the handler that serves them, the one part typed by the message. The
/// connection itself is one type for every input, one copy of its code.
class Inbox {
    /// Takes the bytes just read.
    func append(_ bytes: UnsafeRawBufferPointer) {}
    /// At the end of the stream: keeps the message the held-back bytes still make.
    func finish() {}
    /// A message is waiting to be served (decoding at most one ahead).
    var hasMessages: Bool { false }
    /// Hands the next message to the handler; nil when none is waiting.
    func serveNext(_ connection: Connection) -> ConnectionAction? { nil }
    /// Forgets the messages not served and the handler (and what it holds).
    func drop() {}
}

/// The inbox of a connection whose bytes `Decoder` turns into messages.
final class DecodingInbox<Decoder: MessageDecoder>: Inbox {
    private var decoder: Decoder
    private var handler: (Connection, Decoder.Message) -> ConnectionAction
    /// A message taken from the decoder to see whether one is waiting, not yet served.
    private var lookahead: Decoder.Message?
    /// What the decoder made of the bytes held back when the stream ended.
    private var last: Decoder.Message?

    init(decoder: Decoder, handler: @escaping (Connection, Decoder.Message) -> ConnectionAction) {
        self.decoder = decoder
        self.handler = handler
    }

    override func append(_ bytes: UnsafeRawBufferPointer) {
        decoder.append(bytes)
    }

    override func finish() {
        last = decoder.finish()
    }

    override var hasMessages: Bool {
        if lookahead != nil || last != nil { return true }
        lookahead = decoder.next()
        return lookahead != nil
    }

    override func serveNext(_ connection: Connection) -> ConnectionAction? {
        let message: Decoder.Message
        if let next = lookahead {
            lookahead = nil
            message = next
        } else if let next = decoder.next() {
            message = next
        } else if let next = last {
            last = nil
            message = next
        } else {
            return nil
        }
        return handler(connection, message)
    }

    override func drop() {
        lookahead = nil
        last = nil
        handler = { _, _ in .send([]) }
    }
}

/// One connection of any of the daemon's inputs — a native client, a Plymouth client,
/// the psplash FIFO — whose `Inbox` turns its bytes into messages with the input's
/// `MessageDecoder`, so all of them get the same limits, fairness and back-pressure:
///
/// - one read of at most `readBudget` bytes per loop turn, and no further read until
///   the messages it made are served (a flood stays in the kernel's buffer, and its
///   writer blocks, rather than in the daemon);
/// - at most `maxMessagesPerTurn` messages (or `maxSecondsPerTurn`) served per turn;
///   the rest wait on the loop's ready list (`EventLoop.execute`), behind every other
///   descriptor that is ready, so one client's pipelined batch cannot hold the others;
/// - answers buffered while the socket is full, and the peer dropped when more than
///   `maxPendingOutput` bytes pile up;
/// - at the end of the stream, the decoder's last message (a request without its
///   newline) is still served and answered before the connection closes.
///
/// A peer that vanishes (EOF, ECONNRESET, EPIPE) is closed quietly; if it only shut
/// down its writing side, the answers still owed to it are sent first.
package final class Connection {
    /// Unique for the daemon's lifetime (descriptor numbers are reused).
    package let id: UInt64
    /// The peer's credentials; nil for a FIFO.
    package let peer: PeerCredentials?
    /// The peer passed the access policy (a refused peer of an input that answers
    /// everyone, Plymouth's, is served with refusals).
    package let isAuthorized: Bool
    package private(set) var isOpen = true
    /// A deferred answer is outstanding.
    package private(set) var isAwaitingReply = false
    /// When the peer last sent anything (monotonic seconds).
    package private(set) var lastActivity: Double
    /// The loop turn the connection was accepted in (`EventLoop.wakeTime`): nothing it
    /// asks was asked earlier.
    let openedAt: Double

    let fd: Int32
    /// For log lines: "client 3", "plymouth client 2", "psplash FIFO".
    let label: String
    private let loop: EventLoop
    private let limits: ClientLimits
    private let scratch: ReadBuffer
    private let log: Log
    private let inbox: Inbox
    private var onClose: (Connection) -> Void
    private let closesDescriptor: Bool
    /// Reads with `recvmsg`, taking descriptors the peer sends (SCM_RIGHTS).
    private let receivesDescriptors: Bool
    /// The last descriptor the peer sent, for the request it came with.
    private var passedDescriptor: Int32?

    private var output: [UInt8] = []
    private var outputHead = 0
    private var readClosed = false
    /// The output holds an answer typed at the keyboard: zeroed once sent.
    private var sensitiveOutput = false
    private var interest: IOEvents = []
    private var resumeScheduled = false

    /// `decoder` makes messages of the bytes and `handler` serves each; `closesDescriptor:
    /// false` leaves `fd` open on close (its owner closes it: the FIFO).
    package convenience init<Decoder: MessageDecoder>(
        fd: Int32, id: UInt64, label: String, peer: PeerCredentials?, isAuthorized: Bool = true,
        decoder: Decoder, loop: EventLoop, limits: ClientLimits, scratch: ReadBuffer, log: Log,
        closesDescriptor: Bool = true, receivesDescriptors: Bool = false,
        handler: @escaping (Connection, Decoder.Message) -> ConnectionAction,
        onClose: @escaping (Connection) -> Void = { _ in }
    ) {
        self.init(
            fd: fd, id: id, label: label, peer: peer, isAuthorized: isAuthorized,
            inbox: DecodingInbox(decoder: decoder, handler: handler), loop: loop, limits: limits, scratch: scratch,
            log: log, closesDescriptor: closesDescriptor, receivesDescriptors: receivesDescriptors, onClose: onClose)
    }

    init(
        fd: Int32, id: UInt64, label: String, peer: PeerCredentials?, isAuthorized: Bool, inbox: Inbox,
        loop: EventLoop, limits: ClientLimits, scratch: ReadBuffer, log: Log, closesDescriptor: Bool,
        receivesDescriptors: Bool, onClose: @escaping (Connection) -> Void
    ) {
        self.fd = fd
        self.id = id
        self.label = label
        self.peer = peer
        self.isAuthorized = isAuthorized
        self.inbox = inbox
        self.loop = loop
        self.limits = limits
        self.scratch = scratch
        self.log = log
        self.closesDescriptor = closesDescriptor
        self.receivesDescriptors = receivesDescriptors
        self.onClose = onClose
        lastActivity = MonotonicClock.now()
        openedAt = loop.wakeTime
    }

    deinit {
        if isOpen {
            loop.unregister(fd)
            if closesDescriptor { Syscall.close(fd) }
        }
        if let passedDescriptor { Syscall.close(passedDescriptor) }
    }

    /// Starts watching the descriptor. What the peer has already sent (a client usually
    /// sends its request with its connect) is served at the end of this loop turn, after
    /// the events already fetched (another connection's end, say), not a turn later.
    package func start() throws(SystemError) {
        interest = .readable
        try loop.register(fd, events: interest) { [self] events in handle(events) }
        loop.execute { [self] in handle(.readable) }
    }

    /// Bytes of answers not yet taken by the socket.
    var pendingOutputCount: Int { output.count - outputHead }

    /// Messages received and not yet handed to the handler. Messages are decoded only
    /// as they are served (so decoding is part of a turn's share); this decodes at most
    /// one ahead.
    package var hasQueuedMessages: Bool { inbox.hasMessages }

    /// Sends the answer of the request that was answered with `.deferred`, then goes on
    /// with the messages queued behind it (from the event loop, not from inside this
    /// call). Ignored if the peer has gone meanwhile. `sensitive`: the bytes are a typed
    /// answer, and the send buffer is zeroed once they have gone.
    package func complete(sending bytes: [UInt8], sensitive: Bool = false) {
        guard isOpen else { return }
        guard isAwaitingReply else {
            log.info("\(label): reply completed with none deferred, dropped")
            return
        }
        isAwaitingReply = false
        if sensitive { sensitiveOutput = true }
        output += bytes
        flush()
        guard isOpen, checkOutputLimit() else { return }
        scheduleResume()
    }

    /// Hands over the descriptor the peer sent with its request (gaugectl sends one with
    /// `snapshot -`, in the same message as the line); the caller closes it. Only the
    /// latest one is kept: one sent before it is closed when the next arrives.
    func takePassedDescriptor() -> Int32? {
        defer { passedDescriptor = nil }
        return passedDescriptor
    }

    /// Closes the connection at once; answers not yet sent are tried once more.
    package func close() {
        guard isOpen else { return }
        if pendingOutputCount > 0 { flush(closeOnError: false) }
        isOpen = false
        loop.unregister(fd)
        if closesDescriptor { Syscall.close(fd) }
        inbox.drop()
        zeroOutput()
        output = []
        if let passedDescriptor { Syscall.close(passedDescriptor) }
        passedDescriptor = nil
        outputHead = 0
        onClose(self)
        onClose = { _ in }
    }

    // MARK: Events

    private func handle(_ events: IOEvents) {
        guard isOpen else { return }
        if events.contains(.error) {
            log.debug("\(label): socket error, closed")
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
        if !resumeScheduled { processQueue() }
        guard isOpen else { return }
        // Both directions closed while we are not reading: nobody is left to answer
        // (messages it sent before leaving are still served first).
        if events.contains(.hangup), !hasQueuedMessages, !interest.contains(.readable) || readClosed {
            log.debug("\(label): hung up")
            close()
            return
        }
        settle()
    }

    /// One read of at most `readBudget` bytes, handed to the decoder.
    private func readChunk() {
        let buffer = UnsafeMutableRawBufferPointer(rebasing: scratch.bytes.prefix(limits.readBudget))
        let count: Int?
        var passed: [Int32] = []
        do throws(SystemError) {
            count = receivesDescriptors
                ? try Syscall.receive(fd, into: buffer, descriptors: &passed) : try Syscall.read(fd, into: buffer)
        } catch {
            if error.isDisconnect { log.debug("\(label): \(error), closed") } else { log.info("\(label): \(error), closed") }
            close()
            return
        }
        if let newest = passed.popLast() {
            for extra in passed { Syscall.close(extra) }
            if let passedDescriptor { Syscall.close(passedDescriptor) }
            passedDescriptor = newest
        }
        guard let count else { return }
        if count == 0 {
            readClosed = true
            inbox.finish()
            return
        }
        lastActivity = MonotonicClock.now()
        inbox.append(UnsafeRawBufferPointer(rebasing: buffer.prefix(count)))
    }

    /// Hands queued messages to the handler until one is deferred, none are left or this
    /// turn's share is used; the rest wait for the next turn.
    private func processQueue() {
        let started = MonotonicClock.now()
        var served = 0
        while isOpen, !isAwaitingReply, hasQueuedMessages {
            if served >= limits.maxMessagesPerTurn || (served > 0 && MonotonicClock.now() - started >= limits.maxSecondsPerTurn) {
                scheduleResume()
                break
            }
            guard let action = inbox.serveNext(self) else { break }
            served += 1
            switch action {
            case .send(let bytes):
                output += bytes
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
        flush()
    }

    /// After an event: watch for what the connection now needs, or finish it.
    private func settle() {
        guard isOpen else { return }
        if readClosed, !isAwaitingReply, !hasQueuedMessages, pendingOutputCount == 0 {
            log.debug("\(label): done")
            close()
            return
        }
        var wanted: IOEvents = []
        // Messages not yet served: read no more until they are (back-pressure).
        if !readClosed, !hasQueuedMessages { wanted.insert(.readable) }
        if pendingOutputCount > 0 { wanted.insert(.writable) }
        guard wanted != interest else { return }
        do throws(SystemError) {
            try loop.modify(fd, events: wanted)
            interest = wanted
        } catch {
            log.info("\(label): \(error), closed")
            close()
        }
    }

    /// Puts the connection on the loop's ready list: it is served again after the
    /// descriptors that are ready now.
    private func scheduleResume() {
        guard !resumeScheduled else { return }
        resumeScheduled = true
        loop.execute { [self] in
            resumeScheduled = false
            guard isOpen else { return }
            processQueue()
            settle()
        }
    }

    // MARK: Output

    /// False (and the peer disconnected) when it lets answers pile up.
    private func checkOutputLimit() -> Bool {
        guard pendingOutputCount > limits.maxPendingOutput else { return true }
        log.info("\(label) (\(peer.map { "\($0)" } ?? "no peer")): not reading its replies (\(pendingOutputCount) bytes pending), disconnected")
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
                zeroOutput()
                outputHead = output.count
                if closeOnError {
                    if error.isDisconnect { log.debug("\(label): \(error), closed") } else { log.info("\(label): \(error), closed") }
                    close()
                }
                return
            }
        }
        zeroOutput()
        output.removeAll(keepingCapacity: output.capacity <= 16 * 1024)
        outputHead = 0
    }

    private func zeroOutput() {
        guard sensitiveOutput else { return }
        sensitiveOutput = false
        wipe(&output)
    }

    private func compactOutput() {
        if outputHead >= 16 * 1024, outputHead * 2 >= output.count {
            output.removeFirst(outputHead)
            outputHead = 0
        }
    }
}

/// A client of the native protocol: lines in, one reply line per request out.
package typealias ClientConnection = Connection

/// What the native request handler does with a line.
package enum ReplyAction: Equatable, Sendable {
    /// Send this reply line now (a trailing `\n` is added if missing).
    case reply(String)
    /// The reply comes later through `ClientConnection.complete(reply:)`.
    case deferred
}

extension Connection {
    package typealias RequestHandler = (ClientConnection, LineFramer.Item) -> ReplyAction

    /// Sends the reply of the request that was answered with `.deferred`.
    package func complete(reply: String) {
        complete(sending: Self.replyLine(reply))
    }

    /// One reply is one line: a line break inside it would shift every later reply, so
    /// it becomes a space.
    static func replyLine(_ reply: String) -> [UInt8] {
        var utf8 = Array(reply.utf8)
        if utf8.last == UInt8(ascii: "\n") { utf8.removeLast() }
        for index in utf8.indices where utf8[index] == UInt8(ascii: "\n") || utf8[index] == UInt8(ascii: "\r") {
            utf8[index] = UInt8(ascii: " ")
        }
        utf8.append(UInt8(ascii: "\n"))
        return utf8
    }
}

/// The bytes one read lands in, shared by every connection of the loop (one thread).
package final class ReadBuffer {
    let bytes: UnsafeMutableRawBufferPointer

    package init(count: Int) {
        bytes = .allocate(byteCount: max(1, count), alignment: 16)
    }

    deinit {
        bytes.deallocate()
    }
}
