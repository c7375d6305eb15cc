import CGaugeLinux
import CUdev
import GaugeDisplay
import GaugeSystem

/// Where display device events come from: udev's monitor, or the kernel's uevents where
/// no udev runs.
package protocol DeviceEventSource: AnyObject {
    /// Readable while events wait.
    var descriptor: Int32 { get }
    /// For the log.
    var name: String { get }
    /// Reads up to `limit` waiting events without blocking (fewer when the source runs
    /// dry). `lost` is true when the kernel dropped events because the queue was full, so
    /// the caller cannot know what changed.
    func receive(limit: Int) -> (events: [DeviceEvent], lost: Bool)
    func close()
}

/// The kernel's uevents, and udev's monitor too when udev runs (its control socket
/// exists). The kernel's come first: devtmpfs has made the node by the time the kernel
/// announces a device, while udev's monitor tells only once udev has run its rules, which
/// in the middle of a boot's coldplug took two seconds (a display driver loaded late
/// would leave the screen to the console that long). udev's catches what a busy kernel
/// socket may drop; a device announced twice is looked at once (`settle`).
func systemDeviceEventSource() throws(SystemError) -> any DeviceEventSource {
    let kernel = KernelUevents(descriptor: try Syscall.ueventSocket(), kernelOnly: true)
    guard (try? Syscall.fileStatus("/run/udev/control")) != nil, let monitor = UdevMonitor() else { return kernel }
    return try CombinedDeviceEvents([kernel, monitor])
}

/// Several event sources read as one: readable (its descriptor is an epoll set of theirs)
/// when any of them is.
package final class CombinedDeviceEvents: DeviceEventSource {
    package let descriptor: Int32
    private let sources: [any DeviceEventSource]
    private var closed = false

    package var name: String { sources.map { $0.name }.joined(separator: " and ") }

    /// Takes the sources over (closing them on failure too).
    package init(_ sources: [any DeviceEventSource]) throws(SystemError) {
        self.sources = sources
        do {
            descriptor = try Syscall.epollCreate()
        } catch {
            for source in sources { source.close() }
            throw error
        }
        for (index, source) in sources.enumerated() {
            do {
                try Syscall.epollControl(descriptor, EPOLL_CTL_ADD, source.descriptor, events: CGL_EPOLLIN, token: UInt64(index))
            } catch {
                close()
                throw error
            }
        }
    }

    deinit { close() }

    /// Up to `limit` events from each source, in the order of the sources.
    package func receive(limit: Int) -> (events: [DeviceEvent], lost: Bool) {
        var events: [DeviceEvent] = []
        var lost = false
        for source in sources where !closed {
            let received = source.receive(limit: limit)
            events += received.events
            lost = lost || received.lost
        }
        return (events, lost)
    }

    package func close() {
        guard !closed else { return }
        closed = true
        for source in sources { source.close() }
        Syscall.close(descriptor)
    }
}

/// The kernel's uevent messages on a datagram socket: the `NETLINK_KOBJECT_UEVENT` socket
/// (only datagrams the kernel sent are read), or any socket carrying the same messages.
package final class KernelUevents: DeviceEventSource {
    package let descriptor: Int32
    package var name: String { "kernel uevents" }
    private let kernelOnly: Bool
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: DeviceEvent.maximumLength, alignment: 8)
    private var closed = false

    /// Takes `descriptor` over (non-blocking); `kernelOnly` drops datagrams from anyone but
    /// the kernel.
    package init(descriptor: Int32, kernelOnly: Bool) {
        self.descriptor = descriptor
        self.kernelOnly = kernelOnly
    }

    deinit {
        close()
        buffer.deallocate()
    }

    package func receive(limit: Int) -> (events: [DeviceEvent], lost: Bool) {
        var events: [DeviceEvent] = []
        var lost = false
        var reads = 0
        while reads < limit, !closed {
            reads += 1
            let received: (count: Int, fromKernel: Bool)?
            do throws(SystemError) {
                received = try Syscall.receiveUevent(descriptor, into: buffer)
            } catch where error.errno == ENOBUFS {
                lost = true
                continue
            } catch {
                break
            }
            guard let received else { break }
            guard received.fromKernel || !kernelOnly else { continue }
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[..<min(received.count, buffer.count)])
            if let event = DeviceEvent.parseKernelUevent(bytes) { events.append(event) }
        }
        return (events, lost)
    }

    package func close() {
        guard !closed else { return }
        closed = true
        Syscall.close(descriptor)
    }
}

/// libudev's monitor on udev's events (sent once udev has handled a device), for the
/// `drm` and `graphics` subsystems only. libudev drops messages not sent by root.
final class UdevMonitor: DeviceEventSource {
    package var name: String { "udev monitor" }
    package let descriptor: Int32
    private var udev: OpaquePointer?
    private var monitor: OpaquePointer?

    package init?() {
        guard let udev = udev_new() else { return nil }
        guard let monitor = udev_monitor_new_from_netlink(udev, "udev") else {
            udev_unref(udev)
            return nil
        }
        self.udev = udev
        self.monitor = monitor
        _ = udev_monitor_filter_add_match_subsystem_devtype(monitor, "drm", nil)
        _ = udev_monitor_filter_add_match_subsystem_devtype(monitor, "graphics", nil)
        // libudev's socket is non-blocking and close-on-exec.
        guard udev_monitor_enable_receiving(monitor) == 0 else {
            udev_monitor_unref(monitor)
            udev_unref(udev)
            return nil
        }
        descriptor = udev_monitor_get_fd(monitor)
    }

    deinit { close() }

    package func receive(limit: Int) -> (events: [DeviceEvent], lost: Bool) {
        var events: [DeviceEvent] = []
        var lost = false
        guard let monitor else { return (events, false) }
        for _ in 0..<limit {
            errno = 0
            guard let device = udev_monitor_receive_device(monitor) else {
                // The socket overflowed: events were dropped, and reading goes on.
                if errno == ENOBUFS {
                    lost = true
                    continue
                }
                break
            }
            var properties: [String: String] = [:]
            for key in ["ACTION", "SUBSYSTEM", "DEVNAME", "MAJOR", "MINOR"] {
                if let value = udev_device_get_property_value(device, key) { properties[key] = String(cString: value) }
            }
            udev_device_unref(device)
            if let event = DeviceEvent.make(properties) { events.append(event) }
        }
        return (events, lost)
    }

    package func close() {
        if let monitor { udev_monitor_unref(monitor) }
        if let udev { udev_unref(udev) }
        monitor = nil
        udev = nil
    }
}

/// Follows display devices in the event loop: when the source is readable it reads
/// everything waiting (bounded per wakeup) and hands it over at once (`onEvents`: a device
/// in use that went away must be dropped before the next frame); `settle(after:)` arms a
/// one-shot timer so a burst of events leads to one look at the devices (`onSettled`).
final class DisplayWatcher {
    var onEvents: (_ events: [DeviceEvent], _ lost: Bool) -> Void = { _, _ in }
    var onSettled: () -> Void = {}
    package let source: any DeviceEventSource
    private let loop: EventLoop
    private let timer: Int32
    private var closed = false
    private var armed = false
    /// When the armed timer expires (monotonic seconds).
    private var deadline = 0.0
    /// Events read per wakeup at most; the loop comes back for the rest.
    private static let batch = 64

    package init(source: any DeviceEventSource, loop: EventLoop) throws(SystemError) {
        self.source = source
        self.loop = loop
        timer = try Syscall.timerCreate()
        do {
            try loop.register(timer, events: .readable) { [self] _ in expired() }
            try loop.register(source.descriptor, events: .readable) { [self] _ in readEvents() }
        } catch {
            loop.unregister(timer)
            Syscall.close(timer)
            throw error
        }
    }

    deinit { close() }

    /// `onSettled` runs once, `seconds` from now, or at the time already set if that is
    /// sooner: the events of a burst share one look, a stream of events cannot put it off,
    /// and an event brings forward a look armed for later (a display's replacement waited
    /// for, `DisplaySlot.replacementGrace`).
    func settle(after seconds: Double) {
        guard !closed else { return }
        let now = MonotonicClock.now()
        guard !armed || now + seconds < deadline else { return }
        armed = true
        deadline = now + seconds
        var first = timespec(seconds: seconds)
        if first.isZero { first.tv_nsec = 1 }  // all zeros would disarm it
        try? Syscall.timerSet(timer, interval: timespec(), firstExpiration: first)
    }

    package func close() {
        guard !closed else { return }
        closed = true
        loop.unregister(source.descriptor)
        source.close()
        loop.unregister(timer)
        Syscall.close(timer)
        onEvents = { _, _ in }
        onSettled = {}
    }

    private func readEvents() {
        let (events, lost) = source.receive(limit: Self.batch)
        if !events.isEmpty || lost { onEvents(events, lost) }
    }

    private func expired() {
        var count: UInt64 = 0
        let read = withUnsafeMutableBytes(of: &count) { try? Syscall.read(timer, into: $0) }
        guard read == MemoryLayout<UInt64>.size, !closed else { return }
        armed = false
        onSettled()
    }
}
