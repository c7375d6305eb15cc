import GaugeDaemon
import Glibc
import Testing

/// Only the "no VT" side can run here: the real console is not the tests' to switch.
@Suite struct ConsoleVTTests {
    @Test(arguments: ["/nonexistent/tty9", "/dev/null"])
    func withoutAVTEveryMethodIsHarmless(path: String) {
        final class Lines: @unchecked Sendable { var all: [String] = [] }
        let lines = Lines()
        let console = ConsoleVT(path: path, log: Log { lines.all.append($0) })
        #expect(!console.isAvailable)
        #expect(lines.all.count == 1)
        console.takeGraphics()
        console.enableProcessSwitching()
        #expect(console.switchRequested(by: ConsoleVT.releaseSignal) == nil)
        console.acknowledgeRelease()
        console.acknowledgeAcquire()
        console.releaseText()
        console.restore()
        console.restore()
        #expect(lines.all.count == 1)
    }
}
