// A stand-in for `gauged`, only for tools/vm-test while the real daemon is not on main:
// the same command line (`--display`, `--socket`) and enough of the protocol (progress,
// message, title, mode, ping, show, hide, quit [retain]) for gaugectl to drive the real
// displays. tools/vm-test --standin builds it in place of Sources/gauged/main.swift.
// Delete it once gauged serves the socket itself.
import CGaugeLinux
import GaugeDisplay
import GaugeProtocol
import GaugeRender
import Glibc

func log(_ text: String) {
    let line = "gauged: \(text)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

var displaySpec = "auto"
var socketPath = getenv("GAUGE_SOCKET").map { String(cString: $0) } ?? "/run/gauge/gauged.sock"
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--display": displaySpec = arguments.next() ?? displaySpec
    case "--socket": socketPath = arguments.next() ?? socketPath
    default: break
    }
}

// The console: graphics mode while we show, text again on the way out.
var console: Int32 = -1
do {
    let tty0 = open("/dev/tty0", O_RDWR | O_NOCTTY)
    if tty0 >= 0 {
        var state = vt_stat()
        if CGL_ioctl_ptr(tty0, CGL_VT_GETSTATE, &state) == 0 {
            console = open("/dev/tty\(state.v_active)", O_RDWR | O_NOCTTY)
        }
        close(tty0)
    }
}
@MainActor func consoleMode(_ mode: Int32) {
    if console >= 0 { _ = CGL_ioctl_value(console, CGL_KDSETMODE, UInt(mode)) }
}

var display: (any DeviceDisplay)?
do throws(DisplayError) {
    display = try openDeviceDisplay(spec: displaySpec, log: log)
} catch {
    log("display: \(error)")
}
guard let display else {
    log("no display; exiting (the stand-in does not serve without one)")
    exit(1)
}
consoleMode(CGL_KD_GRAPHICS)

let scene = Scene(theme: Theme(), width: display.width, height: display.height)
var model = ScreenModel()

// The socket.
let listener = socket(CGL_AF_UNIX, CGL_SOCK_STREAM | CGL_SOCK_NONBLOCK | CGL_SOCK_CLOEXEC, 0)
var address = sockaddr_un()
let length = socketPath.withCString { CGL_sockaddr_un_init(&address, $0, strlen($0)) }
unlink(socketPath)
let bound = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
}
guard bound == 0, listen(listener, 16) == 0 else {
    log("cannot listen on \(socketPath)")
    consoleMode(CGL_KD_TEXT)
    exit(1)
}
log("listening on \(socketPath)")

var clients: [Int32: [UInt8]] = [:]
var running = true
var retain = false
var visible = true
var frameDue = true

func reply(_ fd: Int32, _ text: String) {
    let line = text + "\n"
    _ = line.withCString { send(fd, $0, strlen($0), CGL_MSG_NOSIGNAL) }
}

@MainActor func handle(_ line: String, from fd: Int32) {
    switch Request.parse(line) {
    case .failure(let error):
        reply(fd, Reply.err(error).encoded)
    case .success(let request):
        switch request {
        case .progress(let value, let message):
            model.mode = .determinate
            model.setTarget(value)
            if let message { model.message = message }
        case .message(let text): model.message = text
        case .title(let text): model.title = text
        case .mode(let mode): model.mode = GaugeRender.DisplayMode(rawValue: mode.rawValue) ?? .determinate
        case .hide:
            if visible { display.release(); consoleMode(CGL_KD_TEXT); visible = false }
        case .show:
            if !visible {
                consoleMode(CGL_KD_GRAPHICS)
                do throws(DisplayError) { try display.acquire() } catch { log("\(error)") }
                scene.invalidate()
                visible = true
            }
        case .quit(let keep):
            retain = keep
            running = false
        default: break
        }
        reply(fd, Reply.ok(nil).encoded)
        frameDue = true
    }
}

var lastPresent = 0.0
while running {
    let t = now()
    let animating = scene.isAnimating(model, at: t)
    if visible, frameDue || (animating && t - lastPresent >= 1.0 / 60), let target = display.beginFrame() {
        let damage = scene.update(model, at: t)
        let drawn = damage.union(target.staleRegion)
        scene.draw(into: target.buffer, clip: drawn)
        do { try display.present(damage: drawn) } catch { log("present: \(error)") }
        lastPresent = t
        frameDue = false
    }
    var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
    if let events = display.eventDescriptor { fds.append(pollfd(fd: events, events: Int16(POLLIN), revents: 0)) }
    for fd in clients.keys { fds.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0)) }
    let wait: Int32 = (animating || frameDue) ? Int32(max(1, (lastPresent + 1.0 / 60 - now()) * 1000)) : 1000
    _ = poll(&fds, nfds_t(fds.count), wait)
    for entry in fds where entry.revents != 0 {
        if entry.fd == listener {
            while true {
                let client = CGL_accept4(listener, CGL_SOCK_CLOEXEC)
                if client < 0 { break }
                clients[client] = []
            }
        } else if entry.fd == display.eventDescriptor {
            display.handleEvents()
        } else {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(entry.fd, &buffer, buffer.count, CGL_MSG_DONTWAIT)
            if count <= 0 {
                close(entry.fd)
                clients[entry.fd] = nil
                continue
            }
            clients[entry.fd, default: []] += buffer[0..<count]
            while let newline = clients[entry.fd]!.firstIndex(of: 10) {
                let line = String(decoding: clients[entry.fd]![..<newline], as: UTF8.self)
                clients[entry.fd]!.removeSubrange(...newline)
                handle(line, from: entry.fd)
            }
        }
    }
}

for fd in clients.keys { close(fd) }
close(listener)
unlink(socketPath)
display.close(retain: retain)
if !retain { consoleMode(CGL_KD_TEXT) }
log("quit")
