import Foundation
import GaugeTranslators
import Glibc

/// A Unix stream socket listening at `path`.
package func listeningSocket(at path: String) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    precondition(fd >= 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    precondition(bound == 0 && listen(fd, 8) == 0)
    return fd
}

/// Sends all of `bytes` on `fd` (no SIGPIPE), or as much as the peer takes.
package func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
        let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if sent <= 0 { return }
        offset += sent
    }
}

/// SWUpdate's progress socket: for each connection in `script`, sends the connect ACK
/// and the messages (one write each, as SWUpdate writes them), then closes.
package final class FakeSWUpdate: @unchecked Sendable {
    package let directory = TemporaryDirectory()
    package let path: String
    private let listener: Int32

    package init(_ script: [(SWUpdateProgressMessage.Layout, [SWUpdateProgressMessage])]) {
        path = directory.path + "/swupdateprog"
        listener = listeningSocket(at: path)
        Thread { [self] in
            for (layout, messages) in script {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                writeAll(client, SWUpdateProgressMessage.connectAck())
                for message in messages {
                    usleep(20_000)
                    writeAll(client, message.encoded(layout: layout))
                }
                usleep(50_000)
                close(client)
            }
        }.start()
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}
