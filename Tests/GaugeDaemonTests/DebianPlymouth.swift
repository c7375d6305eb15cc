import Foundation
import Testing

/// Debian's `plymouth` client, which the Plymouth-protocol tests drive gauged with and
/// compare Gauge's own client against. `tools/install-deps --test` unpacks Debian's
/// packages into .build/plymouth-client (unpacked, not installed: Gauge's package
/// conflicts with plymouth) and writes bin/plymouth there, which runs the client with its
/// libraries. Never /usr/bin/plymouth: where Gauge's package is installed that is Gauge's.
enum DebianPlymouth {
    static let path: String? = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let wrapper = root.appendingPathComponent(".build/plymouth-client/bin/plymouth").path
        return FileManager.default.isExecutableFile(atPath: wrapper) ? wrapper : nil
    }()

    static func require() throws -> String {
        try #require(path, "Debian's plymouth client is not in .build/plymouth-client; run tools/install-deps --test")
    }
}
