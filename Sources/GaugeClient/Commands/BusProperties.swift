import CGaugeBus
import CGaugeLinux
import GaugeProtocol
import GaugeSystem
import GaugeTranslators

/// Why a D-Bus call failed, as sd-bus says it.
struct BusFailure: Error {
    var message: String
}

/// A connection to a D-Bus bus through sd-bus (loaded at run time, see CGaugeBus), for
/// reading the properties of one object.
final class BusConnection {
    private let bus: OpaquePointer
    let destination: String
    let path: String
    let interface: String

    /// `address` nil: the system bus. `direct`: `address` is a peer (systemd's own socket),
    /// not a bus. `timeout`: each call's limit in seconds.
    init(
        address: String?, direct: Bool = false, timeout: Double?, destination: String, path: String, interface: String
    ) throws(BusFailure) {
        var opened: OpaquePointer?
        let microseconds = UInt64(max(0, min(timeout ?? 0, 86_400)) * 1e6)
        try Self.call { message, size in gauge_bus_open(address, direct ? 1 : 0, microseconds, &opened, message, size) }
        guard let opened else { throw BusFailure(message: "cannot connect to the bus") }
        bus = opened
        self.destination = destination
        self.path = path
        self.interface = interface
    }

    deinit { gauge_bus_close(bus) }

    func double(_ member: String) throws(BusFailure) -> Double {
        var value = 0.0
        try Self.call { message, size in gauge_bus_get_double(bus, destination, path, interface, member, &value, message, size) }
        return value
    }

    func uint32(_ member: String) throws(BusFailure) -> UInt32 {
        var value: UInt32 = 0
        try Self.call { message, size in gauge_bus_get_uint32(bus, destination, path, interface, member, &value, message, size) }
        return value
    }

    /// A string property, of this object or of `path`'s `interface`.
    func string(_ member: String, path: String? = nil, interface: String? = nil) throws(BusFailure) -> String {
        var value: UnsafeMutablePointer<CChar>?
        let (path, interface) = (path ?? self.path, interface ?? self.interface)
        try Self.call { message, size in gauge_bus_get_string(bus, destination, path, interface, member, &value, message, size) }
        defer { free(value) }
        return value.map { String(cString: $0) } ?? ""
    }

    /// A uint64 (`t`) property, of this object or of `path`'s `interface`.
    func uint64(_ member: String, path: String? = nil, interface: String? = nil) throws(BusFailure) -> UInt64 {
        var value: UInt64 = 0
        let (path, interface) = (path ?? self.path, interface ?? self.interface)
        try Self.call { message, size in gauge_bus_get_uint64(bus, destination, path, interface, member, &value, message, size) }
        return value
    }

    /// Calls this object's method `member`, which takes no argument (its reply unread).
    func call(_ member: String) throws(BusFailure) {
        try Self.call { message, size in gauge_bus_call(bus, destination, path, interface, member, message, size) }
    }

    /// systemd's jobs now (its Manager's ListJobs).
    func listJobs() throws(BusFailure) -> [StartJobWaits.ListedJob] {
        StartJobWaits.ListedJob.parse(try list(units: false))
    }

    /// systemd's loaded units with their descriptions (ListUnits), one call for all.
    func listUnits() throws(BusFailure) -> [(unit: String, description: String)] {
        try list(units: true).split(separator: "\n").compactMap { line in
            guard let tab = line.firstIndex(of: "\t") else { return nil }
            return (String(line[..<tab]), String(line[line.index(after: tab)...]))
        }
    }

    private func list(units: Bool) throws(BusFailure) -> String {
        var text: UnsafeMutablePointer<CChar>?
        try Self.call { message, size in gauge_bus_list(bus, units ? 1 : 0, &text, message, size) }
        defer { free(text) }
        return text.map { String(cString: $0) } ?? ""
    }

    /// The current signal as systemd's JobNew or JobRemoved: the job's id, its unit, and
    /// its result (JobRemoved only); nil when it is neither.
    func signalJob() -> (id: UInt32, unit: String, result: String?)? {
        var id: UInt32 = 0
        var unit: UnsafeMutablePointer<CChar>?
        var result: UnsafeMutablePointer<CChar>?
        guard gauge_bus_signal_job(bus, &id, &unit, &result) == 0 else { return nil }
        defer {
            free(unit)
            free(result)
        }
        return (id, unit.map { String(cString: $0) } ?? "", result.map { String(cString: $0) })
    }

    /// The current signal's first two arguments as (uint32, string), or nil: PackageKit's
    /// Package (info, package id) and ErrorCode (code, details).
    func signalNumberAndText() -> (UInt32, String)? {
        var number: UInt32 = 0
        var text: UnsafeMutablePointer<CChar>?
        guard gauge_bus_signal_us(bus, &number, &text) == 0 else { return nil }
        defer { free(text) }
        return (number, text.map { String(cString: $0) } ?? "")
    }

    /// systemd's object path of `unit` ("" when sd-bus cannot make one).
    func unitPath(_ unit: String) -> String {
        guard let path = gauge_bus_unit_path(unit) else { return "" }
        defer { free(path) }
        return String(cString: path)
    }

    /// A `(isi)` property: (integer, text, integer).
    func isi(_ member: String) throws(BusFailure) -> (Int32, String, Int32) {
        var first: Int32 = 0
        var second: Int32 = 0
        var text: UnsafeMutablePointer<CChar>?
        try Self.call { message, size in
            gauge_bus_get_isi(bus, destination, path, interface, member, &first, &text, &second, message, size)
        }
        defer { free(text) }
        return (first, text.map { String(cString: $0) } ?? "", second)
    }

    /// Receives the signals `rule` (D-Bus match syntax) matches, for `nextSignal`.
    func subscribe(_ rule: String) throws(BusFailure) {
        try Self.call { message, size in gauge_bus_subscribe(bus, rule, message, size) }
    }

    /// The descriptor, events and deadline (nanoseconds on CLOCK_MONOTONIC, nil: none)
    /// to wait for before `nextSignal` has something new.
    var wait: (descriptor: Int32, events: Int16, deadline: UInt64?) {
        var usec: UInt64 = .max
        let deadline: UInt64? = gauge_bus_timeout(bus, &usec) > 0 && usec != .max ? usec &* 1000 : nil
        return (gauge_bus_fd(bus), Int16(truncatingIfNeeded: max(0, gauge_bus_events(bus))), deadline)
    }

    /// Reads what the connection has without blocking and returns the next signal a
    /// subscription caught (interface, member), or nil; its arguments are read with the
    /// `signal...` methods until the next call. Signals dropped from a full queue throw.
    func nextSignal() throws(BusFailure) -> (interface: String, member: String)? {
        var interface: UnsafePointer<CChar>?
        var member: UnsafePointer<CChar>?
        var result: Int32 = 0
        try Self.call { message, size in
            result = gauge_bus_next_signal(bus, &interface, &member, message, size)
            return result == 2 ? -1 : result
        }
        guard result == 1 else { return nil }
        return (interface.map { String(cString: $0) } ?? "", member.map { String(cString: $0) } ?? "")
    }

    /// The current signal's first argument as an int32, or nil.
    func signalInt32() -> Int32? {
        var value: Int32 = 0
        return gauge_bus_signal_int32(bus, &value) == 0 ? value : nil
    }

    /// The string entry `key` of the current signal's a{sv} argument, or nil.
    func signalString(_ key: String) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard gauge_bus_signal_string(bus, key, &value) == 1 else { return nil }
        defer { free(value) }
        return value.map { String(cString: $0) } ?? ""
    }

    /// The uint32 entry `key` of the current signal's a{sv} argument, or nil.
    func signalUInt32(_ key: String) -> UInt32? {
        var value: UInt32 = 0
        return gauge_bus_signal_uint32(bus, key, &value) == 1 ? value : nil
    }

    /// The (isi) entry `key` of the current signal's a{sv} argument, or nil.
    func signalIsi(_ key: String) -> (Int32, String, Int32)? {
        var first: Int32 = 0
        var second: Int32 = 0
        var text: UnsafeMutablePointer<CChar>?
        guard gauge_bus_signal_isi(bus, key, &first, &text, &second) == 1 else { return nil }
        defer { free(text) }
        return (first, text.map { String(cString: $0) } ?? "", second)
    }

    private static func call(_ body: (UnsafeMutablePointer<CChar>, Int) -> Int32) throws(BusFailure) {
        var buffer = [CChar](repeating: 0, count: 512)
        let result = buffer.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
        guard result < 0 else { return }
        throw BusFailure(message: String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}

/// The loop of a command that follows a D-Bus service: connects (again each second while
/// the service or the bus is not there, saying so once), subscribes to the service's
/// signals (`rules`, and the name's owner changing), reads a sample at once, then one
/// every `interval` seconds where the tool announces nothing (nil: only when it
/// announces something, or its name changes hands), hands every signal to `signal`, and
/// ticks the bar in between. One loop: the bus's descriptor is what it waits on.
/// `sample` and `signal` return false to end the loop. `lost` is called when the service
/// followed so far is gone (its name changed hands, or the connection failed): whatever
/// it was doing died with it.
enum BusPolling {
    static func run(
        label: String, connect: () throws(BusFailure) -> BusConnection, rules: [String] = [],
        interval: Double?,
        sample: (BusConnection, UInt64) throws(BusFailure) -> Bool,
        signal: (BusConnection, String, String, UInt64) throws(BusFailure) -> Bool = { _, _, _, _ in true },
        lost: (UInt64) -> Void = { _ in },
        tick: (UInt64) -> Void, nextTick: (UInt64) -> UInt64?
    ) {
        var connection: BusConnection?
        var reported = false
        let step = interval.map { UInt64(max(0.01, $0) * 1e9) }
        var nextSample = Deadline.now()
        while true {
            let now = Deadline.now()
            do throws(BusFailure) {
                if let current = connection {
                    if let step, now >= nextSample {
                        nextSample = now &+ step
                        guard try sample(current, now) else { return }
                    }
                } else if now >= nextSample {
                    let current = try connect()
                    connection = current
                    for rule in rules + [nameOwnerRule(current.destination)] { try current.subscribe(rule) }
                    nextSample = now &+ (step ?? 0)
                    let goesOn = try sample(current, now)
                    // Only now: the bus may answer while the service is not on it yet.
                    if reported {
                        printError("gaugectl: \(label): the service answers again")
                        reported = false
                    }
                    guard goesOn else { return }
                }
                if let current = connection {
                    while let (interface, member) = try current.nextSignal() {
                        let at = Deadline.now()
                        let ownerChanged = interface == "org.freedesktop.DBus" && member == "NameOwnerChanged"
                        if ownerChanged { lost(at) }
                        let goesOn = ownerChanged ? try sample(current, at) : try signal(current, interface, member, at)
                        guard goesOn else { return }
                    }
                }
            } catch {
                if connection != nil { lost(Deadline.now()) }
                connection = nil
                if !reported {
                    printError("gaugectl: \(label): \(error.message); trying again every second")
                    reported = true
                }
                nextSample = now &+ max(step ?? 0, 1_000_000_000)
            }
            tick(Deadline.now())
            var wake = nextTick(Deadline.now())
            if connection == nil || step != nil { wake = min(wake ?? nextSample, nextSample) }
            wait(on: connection, until: wake)
        }
    }

    /// Sleeps until `wake` (nil: no time of ours), the bus's own deadline, or the bus
    /// having something to read, whichever comes first.
    private static func wait(on connection: BusConnection?, until wake: UInt64?) {
        guard let connection else {
            _ = try? Syscall.poll(-1, events: 0, timeoutMilliseconds: ProgressTicks.milliseconds(until: wake))
            return
        }
        var wake = wake
        let (descriptor, events, deadline) = connection.wait
        if let deadline { wake = min(wake ?? deadline, deadline) }
        _ = try? Syscall.poll(descriptor, events: events, timeoutMilliseconds: ProgressTicks.milliseconds(until: wake))
    }

    /// The match rule for `name` changing hands (the service stopping or starting again).
    static func nameOwnerRule(_ name: String) -> String {
        "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(name)'"
    }

    /// The match rule for every signal `destination` sends on `path`.
    static func signalsRule(_ destination: String, path: String) -> String {
        "type='signal',sender='\(destination)',path='\(path)'"
    }
}

/// `--address`, checked to be one.
func busAddress(_ arguments: CommandArguments) throws(UsageError) -> String? {
    guard let address = arguments.values["--address"] else { return nil }
    guard address.contains(":") else {
        throw UsageError("--address needs a D-Bus address such as unix:path=/run/dbus/system_bus_socket")
    }
    return address
}

/// `--interval`: 0.01 to 60 seconds.
func pollInterval(_ arguments: CommandArguments) throws(UsageError) -> Double {
    guard let text = arguments.values["--interval"] else { return 0.25 }
    guard let value = PlainDecimal.parse(text), value >= 0.01, value <= 60 else {
        throw UsageError("--interval needs a number of seconds from 0.01 to 60, not '\(text)'")
    }
    return value
}
