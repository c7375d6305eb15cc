import Glibc
import Testing

@testable import GaugeSystem

@Suite struct UnixSocketAddressTests {
    @Test func pathsAndAbstractNamesAndWhatDoesNotFit() throws {
        let path = try UnixSocketAddress("/run/gauge/gauged.sock")
        #expect(!path.isAbstract && path.path == "/run/gauge/gauged.sock")
        let abstract = try UnixSocketAddress("@/org/freedesktop/plymouthd")
        #expect(abstract.isAbstract)
        // An abstract name's length is its bytes (no NUL at the end), after sun_family.
        let length = abstract.withSockaddr { _, length in Int(length) }
        #expect(length == MemoryLayout<sa_family_t>.size + "@/org/freedesktop/plymouthd".utf8.count)
        #expect(throws: SystemError("socket address " + String(repeating: "x", count: 200), errno: ENAMETOOLONG)) {
            try UnixSocketAddress(String(repeating: "x", count: 200))
        }
        #expect(throws: SystemError("socket address ", errno: EINVAL)) { try UnixSocketAddress("") }
        #expect(throws: SystemError.self) { try UnixSocketAddress("/a\u{0}b") }
    }
}
