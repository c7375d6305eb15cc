import CGaugeLinux
import GaugeSystem

/// The daemon's one thread: an epoll instance and the handlers of the descriptors in it.
///
/// Handlers are closures called on the loop's thread when their descriptor is ready
/// (level-triggered). Nothing here blocks except `epoll_wait` itself, which waits with no
/// timeout: an idle daemon (no timer armed, no client talking) makes no wakeups.
///
/// Not thread-safe: create it, register with it, run it and stop it from one thread.
/// A descriptor must be unregistered before it is closed.
package final class EventLoop {
    package typealias Handler = (IOEvents) -> Void

    private struct Registration {
        var fd: Int32
        var handler: Handler
    }

    private let epollFD: Int32
    private let eventBuffer: UnsafeMutableBufferPointer<epoll_event>
    /// Keyed by a token that is never reused, so an event already fetched for a descriptor
    /// that a handler closed (and whose number a new descriptor took) is dropped, not
    /// delivered to the new one.
    private var registrations: [UInt64: Registration] = [:]
    private var tokens: [Int32: UInt64] = [:]
    private var nextToken: UInt64 = 1
    private var pendingWork: [() -> Void] = []
    private var stopRequested = false
    /// When the current turn's wait returned (monotonic seconds): events handled in one
    /// turn happened in an order the loop cannot know, so they share this time.
    private(set) var wakeTime = MonotonicClock.now()

    package init(maxEventsPerWait: Int = 64) throws(SystemError) {
        epollFD = try Syscall.epollCreate()
        eventBuffer = .allocate(capacity: max(1, maxEventsPerWait))
    }

    deinit {
        Syscall.close(epollFD)
        eventBuffer.deallocate()
    }

    /// Descriptors currently watched.
    package var registeredCount: Int { registrations.count }

    func isRegistered(_ fd: Int32) -> Bool { tokens[fd] != nil }

    /// Fails with `EEXIST` for a descriptor already registered (a programming error,
    /// reported like any other failure rather than crashing the daemon).
    package func register(_ fd: Int32, events: IOEvents, handler: @escaping Handler) throws(SystemError) {
        guard tokens[fd] == nil else { throw SystemError("register descriptor \(fd)", errno: EEXIST) }
        let token = nextToken
        nextToken += 1
        try Syscall.epollControl(epollFD, EPOLL_CTL_ADD, fd, events: events.rawValue, token: token)
        registrations[token] = Registration(fd: fd, handler: handler)
        tokens[fd] = token
    }

    /// Changes the events watched for a registered descriptor (an empty set still reports
    /// hangups and errors).
    package func modify(_ fd: Int32, events: IOEvents) throws(SystemError) {
        guard let token = tokens[fd] else { return }
        try Syscall.epollControl(epollFD, EPOLL_CTL_MOD, fd, events: events.rawValue, token: token)
    }

    /// Stops watching a descriptor; harmless if it is not registered.
    package func unregister(_ fd: Int32) {
        guard let token = tokens.removeValue(forKey: fd) else { return }
        registrations[token] = nil
        try? Syscall.epollControl(epollFD, EPOLL_CTL_DEL, fd, events: 0, token: 0)
    }

    /// Runs `work` on the loop's thread once the handlers of the current wakeup have
    /// returned, before the loop waits again. For work that must not run inside the
    /// caller (a reply completed from inside another client's handler, for example).
    package func execute(_ work: @escaping () -> Void) {
        pendingWork.append(work)
    }

    /// Makes `run()` return once the current wakeup has been handled.
    package func stop() {
        stopRequested = true
    }

    /// Waits for and handles events until `stop()` is called (by a handler). A `stop()`
    /// before `run()` makes it return at once.
    package func run() throws(SystemError) {
        defer { stopRequested = false }
        while !stopRequested {
            try runOnce(timeoutMilliseconds: -1)
        }
    }

    /// Waits up to `timeoutMilliseconds` (-1: no limit) for events, calls their handlers,
    /// then the work queued with `execute`. Returns the number of handlers called.
    @discardableResult
    package func runOnce(timeoutMilliseconds: Int32) throws(SystemError) -> Int {
        let timeout = pendingWork.isEmpty ? timeoutMilliseconds : 0
        let count = try Syscall.epollWait(epollFD, eventBuffer, timeoutMilliseconds: timeout)
        wakeTime = MonotonicClock.now()
        var handled = 0
        for index in 0..<count {
            let event = eventBuffer[index]
            guard let registration = registrations[event.data.u64] else { continue }
            registration.handler(IOEvents(rawValue: event.events))
            handled += 1
        }
        runPendingWork()
        return handled
    }

    /// Handles, without waiting, the events already there for the descriptors `serves`
    /// accepts, and leaves the others (level-triggered: the next wait reports them again)
    /// and the queued work for the loop's turns. A descriptor registered by one of these
    /// handlers (a connection just accepted) is looked at in a second pass, up to
    /// `passes`. For a start that answers some requests before its first frame, before
    /// the loop runs.
    package func handleReady(where serves: (Int32) -> Bool, passes: Int = 3) throws(SystemError) {
        for _ in 0..<passes {
            let count = try Syscall.epollWait(epollFD, eventBuffer, timeoutMilliseconds: 0)
            wakeTime = MonotonicClock.now()
            var handled = 0
            for index in 0..<count {
                let event = eventBuffer[index]
                guard let registration = registrations[event.data.u64], serves(registration.fd) else { continue }
                registration.handler(IOEvents(rawValue: event.events))
                handled += 1
            }
            if handled == 0 { return }
        }
    }

    private func runPendingWork() {
        // Work queued by this work waits for the next turn, so a chain of work cannot
        // starve the descriptors.
        guard !pendingWork.isEmpty else { return }
        let work = pendingWork
        pendingWork.removeAll()
        for item in work { item() }
    }
}
