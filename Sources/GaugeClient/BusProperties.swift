import CGaugeBus
import CGaugeLinux
import GaugeSystem

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

    /// `address` nil: the system bus. `timeout`: each call's limit in seconds.
    init(address: String?, timeout: Double?, destination: String, path: String, interface: String) throws(BusFailure) {
        var opened: OpaquePointer?
        let microseconds = UInt64(max(0, min(timeout ?? 0, 86_400)) * 1e6)
        try Self.call { message, size in gauge_bus_open(address, microseconds, &opened, message, size) }
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

    func string(_ member: String) throws(BusFailure) -> String {
        var value: UnsafeMutablePointer<CChar>?
        try Self.call { message, size in gauge_bus_get_string(bus, destination, path, interface, member, &value, message, size) }
        defer { free(value) }
        return value.map { String(cString: $0) } ?? ""
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

    private static func call(_ body: (UnsafeMutablePointer<CChar>, Int) -> Int32) throws(BusFailure) {
        var buffer = [CChar](repeating: 0, count: 512)
        let result = buffer.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
        guard result < 0 else { return }
        throw BusFailure(message: String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}

/// The loop of a command that polls a D-Bus service: connects (again each second while
/// the service or the bus is not there, saying so once), reads a sample every
/// `interval`, and ticks the bar in between. `sample` returns false to end the loop.
enum BusPolling {
    static func run(
        label: String, connect: () throws(BusFailure) -> BusConnection, interval: Double,
        sample: (BusConnection, UInt64) throws(BusFailure) -> Bool,
        tick: (UInt64) -> Void, nextTick: (UInt64) -> UInt64?
    ) {
        var connection: BusConnection?
        var reported = false
        let step = UInt64(max(0.01, interval) * 1e9)
        var nextSample = Deadline.now()
        while true {
            let now = Deadline.now()
            if now >= nextSample {
                nextSample = now &+ step
                do throws(BusFailure) {
                    let current: BusConnection
                    if let connection {
                        current = connection
                    } else {
                        current = try connect()
                    }
                    connection = current
                    if reported {
                        printError("gaugectl: \(label): the service answers again")
                        reported = false
                    }
                    guard try sample(current, now) else { return }
                } catch {
                    connection = nil
                    if !reported {
                        printError("gaugectl: \(label): \(error.message); trying again every second")
                        reported = true
                    }
                    nextSample = now &+ max(step, 1_000_000_000)
                }
            }
            tick(Deadline.now())
            let wake = min(nextSample, nextTick(Deadline.now()) ?? nextSample)
            _ = try? Syscall.poll(-1, events: 0, timeoutMilliseconds: ProgressTicks.milliseconds(until: wake))
        }
    }
}
