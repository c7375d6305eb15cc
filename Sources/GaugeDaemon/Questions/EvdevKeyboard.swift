import CGaugeLinux
import GaugeSystem

/// Keys from the kernel's input devices, for a machine with no VT to read (no console,
/// or a kernel without VTs) or when `--ask-tty input` says so: every keyboard under
/// `/dev/input` (an `event*` device that has letter keys and Enter) is opened, only while a
/// question or keystroke watch waits, and its events are turned into the bytes a VT would
/// give (`EvdevKeymap`), in the layout of the console keymap the initramfs carries
/// (`ConsoleKeymap.defaultPath`, or `--keymap`), else the US layout.
/// The devices are not grabbed: with no VT, nothing else reads keys as text.
///
/// Reads pass through one fixed buffer, zeroed after each read; nothing typed is logged.
final class EvdevKeyboard {
    private let directory: String
    private let loop: EventLoop
    private let log: Log
    private let onKeys: (UnsafeRawBufferPointer) -> Void
    private var devices: [(fd: Int32, path: String)] = []
    private var keymap: EvdevKeymap
    /// Where the layout came from, for the log.
    private let layoutName: String
    private var characters: [UInt8] = []
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: EvdevKeymap.recordSize * 16, alignment: 8)

    init(
        directory: String = "/dev/input", layout: (map: ConsoleKeymap, name: String) = (.us, "US layout"),
        loop: EventLoop, log: Log, onKeys: @escaping (UnsafeRawBufferPointer) -> Void
    ) {
        self.directory = directory
        keymap = EvdevKeymap(map: layout.map)
        layoutName = layout.name
        self.loop = loop
        self.log = log
        self.onKeys = onKeys
        characters.reserveCapacity(buffer.count)
    }

    deinit {
        stop()
        buffer.deallocate()
    }

    var isReading: Bool { !devices.isEmpty }

    /// Opens every keyboard; false (logged) when there is none.
    @discardableResult
    func start() -> Bool {
        guard devices.isEmpty else { return true }
        let names: [String]
        do throws(SystemError) {
            names = try Syscall.directoryEntries(directory).filter { $0.hasPrefix("event") }.sorted()
        } catch {
            log.info("keyboard: no VT, and no input devices: \(error)")
            return false
        }
        for name in names {
            let path = directory + "/" + name
            guard let fd = try? Syscall.open(path, flags: O_RDONLY | O_NONBLOCK | O_NOCTTY) else { continue }
            guard Self.isKeyboard(fd) else {
                Syscall.close(fd)
                continue
            }
            attach(fd, path: path)
        }
        guard !devices.isEmpty else {
            log.info("keyboard: no VT, and no keyboard under \(directory)")
            return false
        }
        log.info("keyboard: reading keys from \(devices.map { $0.path }.joined(separator: ", ")) (\(layoutName))")
        return true
    }

    /// The layout keys are read in: the keymap at `path` when given (a problem is logged and
    /// the US layout used), else the one at `ConsoleKeymap.defaultPath` when there is one.
    static func layout(path: String?, log: Log) -> (map: ConsoleKeymap, name: String) {
        let chosen = path ?? ConsoleKeymap.defaultPath
        if path == nil, case .success(nil) = Result(catching: { () throws(SystemError) in try Syscall.fileStatus(chosen) }) {
            return (.us, "US layout")
        }
        do throws(ConsoleKeymap.Invalid) {
            return (try ConsoleKeymap(path: chosen), "keymap \(chosen)")
        } catch {
            log.info("keyboard: cannot use the keymap: \(error); keys are read in the US layout")
            return (.us, "US layout")
        }
    }

    /// Reads `fd` (an input device, or in tests one end of a socket pair) as a keyboard.
    func attach(_ fd: Int32, path: String) {
        do throws(SystemError) {
            try loop.register(fd, events: .readable) { [self] _ in readKeys(fd, path: path) }
            devices.append((fd, path))
        } catch {
            log.info("keyboard: cannot read \(path): \(error)")
            Syscall.close(fd)
        }
    }

    /// Closes every device.
    func stop() {
        for device in devices {
            loop.unregister(device.fd)
            Syscall.close(device.fd)
        }
        devices = []
        keymap.reset()
    }

    private func readKeys(_ fd: Int32, path: String) {
        let count: Int?
        do throws(SystemError) {
            count = try Syscall.read(fd, into: buffer)
        } catch {
            drop(fd, path: path, because: "\(error)")
            return
        }
        guard let count else { return }
        guard count > 0 else {
            drop(fd, path: path, because: "gone")
            return
        }
        keymap.feed(UnsafeRawBufferPointer(rebasing: buffer.prefix(count)), into: &characters)
        wipe(buffer)
        guard !characters.isEmpty else { return }
        characters.withUnsafeBytes { onKeys($0) }
        wipe(&characters)
        characters.removeAll(keepingCapacity: true)
    }

    private func drop(_ fd: Int32, path: String, because reason: String) {
        log.info("keyboard: \(path): \(reason); no longer read")
        loop.unregister(fd)
        Syscall.close(fd)
        devices.removeAll { $0.fd == fd }
    }

    /// Whether Caps Lock is on, as the keys read so far left it.
    var capsLock: Bool { keymap.capsLock }

    /// Has the keys of a keyboard: A to Z and Enter (EVIOCGBIT for EV_KEY).
    private static func isKeyboard(_ fd: Int32) -> Bool {
        var bits = [UInt8](repeating: 0, count: 96)
        let request: UInt = (2 << 30) | (UInt(bits.count) << 16) | (UInt(UInt8(ascii: "E")) << 8) | 0x21
        let read = bits.withUnsafeMutableBytes { raw -> Bool in
            (try? Syscall.ioctl(fd, request, raw.baseAddress!, "EVIOCGBIT(EV_KEY)")) != nil
        }
        guard read else { return false }
        func has(_ code: Int) -> Bool { bits[code / 8] & (1 << (code % 8)) != 0 }
        return [16, 30, 44, 28].allSatisfy(has)  // KEY_Q, KEY_A, KEY_Z, KEY_ENTER
    }
}
