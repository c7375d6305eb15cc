import CGaugeLinux
import GaugeSystem

/// Escape on any keyboard, on every boot: the details view (the boot's messages) and back,
/// as Plymouth answers Escape; and Enter and R, the failure screen's ways out (`wait-key`).
/// Every input device under `directory` that has an Escape key (EV_KEY with KEY_ESC:
/// keyboards, not a laptop's power button or lid switch) is read while `isActive`, and
/// keyboards plugged in meanwhile are found through inotify on the directory (on its parent
/// until it exists: an initramfs makes `/dev/input` with its first input device). Nothing
/// else is decoded: each press of one of those keys calls `onKey` (R by its place on the
/// keyboard, KEY_R, whatever the layout prints on it).
///
/// The devices are never grabbed (no EVIOCGRAB): the console, a getty, a program asking on
/// the console and a display manager get every key as before. The daemon keeps it off
/// while its own questions read the keys (`QuestionDesk`). Every descriptor sits in the
/// event loop: no timer, no wakeup while nobody types. A device that goes away (ENODEV) is
/// dropped; the records read are zeroed after each read, and nothing typed is logged.
/// The loop's handlers hold the watch (and `onKey` its owner) until `setActive(false)`.
final class EscapeWatch {
    /// The keys reported, by their codes (`linux/input-event-codes.h`).
    enum Key: UInt16 {
        case escape = 1
        case enter = 28
        case r = 19
        case keypadEnter = 96
    }

    private let directory: String
    private let loop: EventLoop
    private let log: Log
    private let onKey: (Key) -> Void
    private var devices: [(fd: Int32, path: String, partial: [UInt8])] = []
    private var inotify: Int32 = -1
    private var watch: Int32 = -1
    /// Whether the watch is on `directory` itself (else on its parent, until it exists).
    private var watchesDirectory = false
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: EvdevKeymap.recordSize * 32, alignment: 8)
    private(set) var isActive = false

    private static let directoryMask = CGL_IN_CREATE | CGL_IN_MOVED_TO | CGL_IN_DELETE_SELF | CGL_IN_MOVE_SELF

    init(directory: String = "/dev/input", loop: EventLoop, log: Log, onKey: @escaping (Key) -> Void) {
        self.directory = directory
        self.loop = loop
        self.log = log
        self.onKey = onKey
    }

    deinit {
        stop()
        buffer.deallocate()
    }

    /// Reads the keyboards (and follows the directory) while `active`; closes them all otherwise.
    func setActive(_ active: Bool) {
        guard active != isActive else { return }
        isActive = active
        if active {
            do throws(SystemError) {
                inotify = try Syscall.inotifyInit()
                try loop.register(inotify, events: .readable) { [self] _ in directoryChanged() }
            } catch {
                log.info("escape: cannot follow \(directory) for keyboards plugged in: \(error)")
                if inotify >= 0 { Syscall.close(inotify) }
                inotify = -1
            }
            rearm()
            scan(announcing: false)
            log.info(devices.isEmpty
                ? "escape: no keyboard under \(directory) yet"
                : "escape: Escape on \(devices.map { $0.path }.joined(separator: ", ")) shows the boot's messages")
        } else {
            stop()
        }
    }

    /// Closes every device and the directory's watch.
    private func stop() {
        for device in devices { close(device.fd) }
        devices = []
        if inotify >= 0 {
            loop.unregister(inotify)
            Syscall.close(inotify)
        }
        inotify = -1
        watch = -1
    }

    /// Reads `fd` (an input device, or in tests one end of a socket pair) for Escape.
    func attach(_ fd: Int32, path: String) {
        do throws(SystemError) {
            try loop.register(fd, events: .readable) { [self] _ in readKeys(fd) }
            devices.append((fd, path, []))
        } catch {
            log.info("escape: cannot read \(path): \(error)")
            Syscall.close(fd)
        }
    }

    /// The paths read now.
    var paths: [String] { devices.map { $0.path } }

    /// Watches `directory`, or its parent while it does not exist.
    private func rearm() {
        guard inotify >= 0 else { return }
        if watch >= 0 { Syscall.inotifyRemoveWatch(inotify, watch) }
        if let next = try? Syscall.inotifyAddWatch(inotify, directory, mask: Self.directoryMask | CGL_IN_ONLYDIR) {
            (watch, watchesDirectory) = (next, true)
        } else {
            let parent = AskPasswordWatch.ancestors(of: directory).last ?? "/"
            watch = (try? Syscall.inotifyAddWatch(inotify, parent, mask: CGL_IN_CREATE | CGL_IN_MOVED_TO | CGL_IN_ONLYDIR)) ?? -1
            watchesDirectory = false
        }
    }

    /// Opens every `event*` device not read yet that has an Escape key.
    private func scan(announcing: Bool) {
        guard let names = try? Syscall.directoryEntries(directory) else { return }
        for name in names.sorted() where name.hasPrefix("event") {
            let path = directory + "/" + name
            guard !devices.contains(where: { $0.path == path }),
                let fd = try? Syscall.open(path, flags: O_RDONLY | O_NONBLOCK | O_NOCTTY)
            else { continue }
            guard Self.hasEscapeKey(fd) else {
                Syscall.close(fd)
                continue
            }
            attach(fd, path: path)
            if announcing { log.info("escape: keyboard \(path) plugged in: its Escape shows the boot's messages") }
        }
    }

    private func directoryChanged() {
        var moved = false
        while let count = try? Syscall.read(inotify, into: buffer), count > 0 {
            var offset = 0
            while offset + 16 <= count {
                // struct inotify_event: wd, mask, cookie, len, then len bytes of name.
                let mask = buffer.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                offset += 16 + Int(buffer.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                if !watchesDirectory || mask & (CGL_IN_DELETE_SELF | CGL_IN_MOVE_SELF | CGL_IN_IGNORED) != 0 { moved = true }
            }
        }
        if moved { rearm() }
        scan(announcing: true)
    }

    private func readKeys(_ fd: Int32) {
        guard let index = devices.firstIndex(where: { $0.fd == fd }) else { return }
        let count: Int?
        do throws(SystemError) {
            count = try Syscall.read(fd, into: buffer)
        } catch {
            drop(at: index, because: "\(error)")
            return
        }
        guard let count else { return }
        guard count > 0 else {
            drop(at: index, because: "gone")
            return
        }
        let presses = Self.presses(UnsafeRawBufferPointer(rebasing: buffer.prefix(count)), partial: &devices[index].partial)
        memset(buffer.baseAddress!, 0, count)
        for key in presses { onKey(key) }
    }

    /// The keys of `Key` that went down in `bytes`, in order (`struct input_event` records,
    /// the first completing `partial`, a record split across reads; what is left of one goes
    /// back there).
    static func presses(_ bytes: UnsafeRawBufferPointer, partial: inout [UInt8]) -> [Key] {
        var presses: [Key] = []
        for byte in bytes {
            partial.append(byte)
            guard partial.count == EvdevKeymap.recordSize else { continue }
            let base = EvdevKeymap.recordSize - 8
            let type = UInt16(partial[base]) | UInt16(partial[base + 1]) << 8
            let code = UInt16(partial[base + 2]) | UInt16(partial[base + 3]) << 8
            let value = UInt32(partial[base + 4]) | UInt32(partial[base + 5]) << 8 | UInt32(partial[base + 6]) << 16
                | UInt32(partial[base + 7]) << 24
            // EV_KEY, pressed (1; 2 is the key repeating, 0 its release).
            if type == 1, value == 1, let key = Key(rawValue: code) { presses.append(key == .keypadEnter ? .enter : key) }
            for i in partial.indices { partial[i] = 0 }
            partial.removeAll(keepingCapacity: true)
        }
        return presses
    }

    private func drop(at index: Int, because reason: String) {
        log.info("escape: \(devices[index].path): \(reason); no longer read")
        close(devices[index].fd)
        devices.remove(at: index)
    }

    private func close(_ fd: Int32) {
        loop.unregister(fd)
        Syscall.close(fd)
    }

    /// Has an Escape key: EVIOCGBIT(EV_KEY) says KEY_ESC.
    static func hasEscapeKey(_ fd: Int32) -> Bool {
        var bits = [UInt8](repeating: 0, count: 96)
        let request: UInt = (2 << 30) | (UInt(bits.count) << 16) | (UInt(UInt8(ascii: "E")) << 8) | 0x21
        let read = bits.withUnsafeMutableBytes { raw -> Bool in
            (try? Syscall.ioctl(fd, request, raw.baseAddress!, "EVIOCGBIT(EV_KEY)")) != nil
        }
        let escape = Key.escape.rawValue
        return read && bits[Int(escape) / 8] & (1 << (escape % 8)) != 0
    }
}
