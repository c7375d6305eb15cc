import CGaugeLinux

/// What a descriptor is ready for, as epoll reports it. `hangup` and `error` are always
/// reported, whether asked for or not.
package struct IOEvents: OptionSet, Sendable, CustomStringConvertible {
    package let rawValue: UInt32

    package init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    package static let readable = IOEvents(rawValue: CGL_EPOLLIN)
    package static let writable = IOEvents(rawValue: CGL_EPOLLOUT)
    /// The peer shut down its writing side (`EPOLLRDHUP`).
    static let readHangup = IOEvents(rawValue: CGL_EPOLLRDHUP)
    /// Both directions are closed (`EPOLLHUP`).
    static let hangup = IOEvents(rawValue: CGL_EPOLLHUP)
    package static let error = IOEvents(rawValue: CGL_EPOLLERR)

    package var description: String {
        let names: [(IOEvents, String)] = [
            (.readable, "in"), (.writable, "out"), (.readHangup, "rdhup"), (.hangup, "hup"), (.error, "err"),
        ]
        return "[" + names.filter { contains($0.0) }.map { $0.1 }.joined(separator: ",") + "]"
    }
}
