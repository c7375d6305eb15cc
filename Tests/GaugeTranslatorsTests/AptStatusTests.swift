import GaugeProtocol
import GaugeTranslators
import Testing

/// What apt 2.6.1 wrote to APT::Status-Fd for `apt-get install gauge-one gauge-two` from a
/// copy: repository (two packages of 200 kB), each line with the requests it must lead to.
private let aptInstall: [(line: String, requests: [Request])] = [
    ("dlstatus:1:0.0000:Retrieving file 1 of 2", [.message("Retrieving file 1 of 2")]),
    ("dlstatus:2:49.9998:Retrieving file 2 of 2", [.progress(24.9, message: "Retrieving file 2 of 2")]),
    ("dlstatus:2:49.9998:Retrieving file 2 of 2", []),
    ("dlstatus:2:100.0000:Retrieving file 2 of 2", [.progress(50, message: nil)]),
    ("pmstatus:dpkg-exec:0.0000:Running dpkg", [.message("Running dpkg")]),
    ("pmstatus:gauge-one:0.0000:Preparing gauge-one (amd64)", [.message("Preparing gauge-one (amd64)")]),
    ("pmstatus:gauge-one:11.1111:Unpacking gauge-one (amd64)", [.progress(55.5, message: "Unpacking gauge-one (amd64)")]),
    ("pmstatus:gauge-one:22.2222:Installing gauge-one (amd64)", [.progress(61.1, message: "Installing gauge-one (amd64)")]),
    ("pmstatus:gauge-two:22.2222:Preparing gauge-two (amd64)", [.message("Preparing gauge-two (amd64)")]),
    ("pmstatus:gauge-two:33.3333:Unpacking gauge-two (amd64)", [.progress(66.6, message: "Unpacking gauge-two (amd64)")]),
    ("pmstatus:gauge-two:44.4444:Installing gauge-two (amd64)", [.progress(72.2, message: "Installing gauge-two (amd64)")]),
    ("pmstatus:dpkg-exec:44.4444:Running dpkg", [.message("Running dpkg")]),
    ("pmstatus:gauge-one:44.4444:Preparing to configure gauge-one (amd64)", [.message("Preparing to configure gauge-one (amd64)")]),
    ("pmstatus:gauge-one:55.5556:Configuring gauge-one (amd64)", [.progress(77.7, message: "Configuring gauge-one (amd64)")]),
    ("pmstatus:gauge-one:66.6667:Installed gauge-one (amd64)", [.progress(83.3, message: "Installed gauge-one (amd64)")]),
    ("pmstatus:gauge-two:66.6667:Preparing to configure gauge-two (amd64)", [.message("Preparing to configure gauge-two (amd64)")]),
    ("pmstatus:gauge-two:77.7778:Configuring gauge-two (amd64)", [.progress(88.8, message: "Configuring gauge-two (amd64)")]),
    ("pmstatus:gauge-two:88.8889:Installed gauge-two (amd64)", [.progress(94.4, message: "Installed gauge-two (amd64)")]),
]

/// What dpkg 1.21 wrote to --status-fd for `dpkg -i gauge-one.deb gauge-two.deb` (gauge-two
/// was installed already), with the requests for four steps.
private let dpkgInstall: [(line: String, requests: [Request])] = [
    ("processing: install: gauge-one", [.message("Unpacking gauge-one")]),
    ("status: gauge-one: half-installed", []),
    ("status: gauge-one: unpacked", [.progress(25, message: nil)]),
    ("processing: upgrade: gauge-two", [.message("Unpacking gauge-two (upgrade)")]),
    ("status: gauge-two: half-configured", []),
    ("status: gauge-two: unpacked", [.progress(50, message: nil)]),
    ("status: gauge-two: half-installed", []),
    ("status: gauge-two: unpacked", []),
    ("processing: configure: gauge-one", [.message("Configuring gauge-one")]),
    ("status: gauge-one: half-configured", []),
    ("status: gauge-one: installed", [.progress(75, message: nil)]),
    ("processing: configure: gauge-two", [.message("Configuring gauge-two")]),
    ("status: gauge-two: half-configured", []),
    // Every step done: still not full while dpkg runs.
    ("status: gauge-two: installed", [.progress(99.9, message: nil)]),
]

private let quiet = HonestBar.Settings(stallSeconds: nil, creepHalfSeconds: nil)

/// The requests each line leads to, read through the reader as bytes.
private func translate(_ lines: [String], _ translator: inout AptStatusTranslator) -> [[Request]] {
    var reader = AptStatusReader()
    return lines.map { line in
        reader.consume(Array((line + "\n").utf8)).flatMap { item -> [Request] in
            guard case .event(let event) = item else {
                Issue.record("'\(line)' was not read: \(item)")
                return []
            }
            return translator.requests(for: event, at: 0)
        }
    }
}

@Suite struct AptStatusTests {
    @Test func aptInstallIsOneBarDownloadThenPackagesAndOnlyTheEndFillsIt() {
        var translator = AptStatusTranslator(settings: quiet)
        #expect(translator.start(message: "Running apt-get", at: 0) == [
            .progress(0, message: nil), .state(.running, message: "Running apt-get"),
        ])
        let got = translate(aptInstall.map(\.line), &translator)
        for (index, expected) in aptInstall.enumerated() {
            #expect(got[index] == expected.requests, "line \(index): \(expected.line)")
        }
        #expect(translator.finish(failure: nil) == [.state(.success, message: "Done")])
    }

    @Test func withoutADownloadThePackagesTakeTheWholeBarAndACountGoingBackHoldsIt() {
        var translator = AptStatusTranslator(settings: quiet)
        _ = translator.start(message: "Running apt-get", at: 0)
        let got = translate([
            "pmstatus:hello:40.0000:Unpacking hello (amd64)",
            // apt counting again from 0 (a second dpkg run): the bar holds, the message moves.
            "pmstatus:hello:10.0000:Configuring hello (amd64)",
            "pmstatus:hello:30.0000:Configuring hello (amd64)",
            "pmstatus:hello:55.0000:Installed hello (amd64)",
            // A download reported once the packages are under way says nothing of the bar.
            "dlstatus:1:90.0000:Retrieving file 1 of 1",
            "pmstatus:hello:100.0000:Installed hello (amd64)",
        ], &translator)
        #expect(got == [
            [.progress(40, message: "Unpacking hello (amd64)")],
            [.message("Configuring hello (amd64)")],
            [],
            [.progress(55, message: "Installed hello (amd64)")],
            [],
            [.progress(99.9, message: nil)],
        ])
    }

    @Test func pmerrorShowsFailureAtOnceWithAptsWordsAndTheRestOfTheRunChangesNothing() {
        var translator = AptStatusTranslator(settings: quiet)
        _ = translator.start(message: "Running apt-get", at: 0)
        let words = "installed gauge-bad package post-installation script subprocess returned error exit status 1"
        let got = translate([
            "pmstatus:gauge-bad:60.0000:Configuring gauge-bad (amd64)",
            "pmerror:gauge-bad:60.0000:" + words,
            "pmstatus:gauge-two:80.0000:Configuring gauge-two (amd64)",
        ], &translator)
        #expect(got == [
            [.progress(60, message: "Configuring gauge-bad (amd64)")],
            [.state(.failure, message: "gauge-bad: " + words)],
            [],
        ])
        #expect(translator.failure == "gauge-bad: " + words)
        #expect(translator.finish(failure: "apt-get failed (exit status 100)") == [])
    }

    @Test func aCommandThatFailsWithoutAnErrorLineShowsItsEnd() {
        var translator = AptStatusTranslator(settings: quiet)
        _ = translator.start(message: "Running apt-get", at: 0)
        _ = translate(["pmstatus:hello:20:Preparing hello (amd64)"], &translator)
        #expect(translator.finish(failure: "apt-get was killed by signal 15") == [
            .state(.failure, message: "apt-get was killed by signal 15")
        ])
    }

    @Test func conffileQuestionsAndMediaChangesSayTheTerminalWaits() {
        var translator = AptStatusTranslator(settings: quiet)
        _ = translator.start(message: "Running apt-get", at: 0)
        let got = translate([
            "pmconffile:/etc/hello.conf:50.0000:'/etc/hello.conf' '/etc/hello.conf.dpkg-new' 1 1",
            "status: /etc/other.conf : conffile-prompt : '/etc/other.conf' '/etc/other.conf.dpkg-new' 1 1",
            "media-change: Debian 12 DVD 1:/media/cdrom:Please insert the disc labeled: 'Debian 12 DVD 1' in the drive '/media/cdrom' and press enter.",
        ], &translator)
        #expect(got == [
            [.message("Waiting for an answer about /etc/hello.conf in the terminal")],
            [.message("Waiting for an answer about /etc/other.conf in the terminal")],
            [.message("Please insert the disc labeled: 'Debian 12 DVD 1' in the drive '/media/cdrom' and press enter.")],
        ])
    }

    @Test func dpkgStepsShareTheBarAndItsErrorIsTheFailure() {
        let line = AptCommandLine(["dpkg", "--root", "/tmp/root", "-i", "gauge-one.deb", "gauge-two.deb"], descriptor: 3)
        #expect(line?.dpkgSteps == 4)
        var translator = AptStatusTranslator(settings: quiet, dpkg: true, dpkgSteps: line?.dpkgSteps)
        _ = translator.start(message: "Running dpkg", at: 0)
        let got = translate(dpkgInstall.map(\.line), &translator)
        for (index, expected) in dpkgInstall.enumerated() {
            #expect(got[index] == expected.requests, "line \(index): \(expected.line)")
        }
        var failing = AptStatusTranslator(settings: quiet, dpkg: true, dpkgSteps: 2)
        _ = failing.start(message: "Running dpkg", at: 0)
        #expect(translate([
            "processing: configure: gauge-bad",
            "status: gauge-bad : error : installed gauge-bad package post-installation script subprocess returned error exit status 1",
        ], &failing) == [
            [.message("Configuring gauge-bad")],
            [.state(.failure, message: "gauge-bad: installed gauge-bad package post-installation script subprocess returned error exit status 1")],
        ])
    }

    @Test func dpkgWithoutACountShowsTheIndeterminateStyleNamingEachStep() {
        let line = AptCommandLine(["dpkg", "--configure", "--pending"], descriptor: 3)
        #expect(line != nil && line?.dpkgSteps == nil)
        var translator = AptStatusTranslator(settings: quiet, dpkg: true, dpkgSteps: nil)
        #expect(translator.start(message: "Running dpkg", at: 0) == [
            .progress(0, message: nil), .state(.running, message: "Running dpkg"), .mode(.indeterminate),
        ])
        #expect(translate(["processing: configure: hello", "status: hello: installed"], &translator) == [
            [.message("Configuring hello")], [],
        ])
        #expect(translator.nextTick(after: 0) == nil)
        #expect(translator.finish(failure: nil) == [.mode(.determinate), .state(.success, message: "Done")])
    }

    @Test func badLinesAreSkippedWithAProblemEachAndReadingGoesOn() {
        var reader = AptStatusReader()
        let huge = "pmstatus:hello:" + String(repeating: "9", count: 20_000) + "\n"
        var bytes = Array(huge.utf8)
        bytes += Array("pmstatus:hello:abc:Unpacking hello\n".utf8)
        bytes += Array("pmstatus:hello:250:Unpacking hello\n".utf8)
        bytes += Array("dlstatus:1:-5:Retrieving file 1 of 1\n".utf8)
        bytes += Array("pmstatus::20:Unpacking\n".utf8)
        bytes += [0x00, 0x01, 0xFF, 0xFE, 0x0A]
        bytes += Array("\r\n\nstatus: hello: two words\n".utf8)
        bytes += Array("pmstatus:libc6:amd64:20.0000:Unpacking libc6 (amd64)\r\n".utf8)
        #expect(reader.consume(bytes) == [
            .problem("a status line longer than 16384 bytes skipped"),
            .problem("a status line that is not APT's or dpkg's skipped: 'pmstatus:hello:abc:Unpacking hello'"),
            .problem("a status line that is not APT's or dpkg's skipped: 'pmstatus:hello:250:Unpacking hello'"),
            .problem("a status line that is not APT's or dpkg's skipped: 'dlstatus:1:-5:Retrieving file 1 of 1'"),
            .problem("a status line that is not APT's or dpkg's skipped: 'pmstatus::20:Unpacking'"),
            .problem("a status line that is not APT's or dpkg's skipped: '\u{20}\u{20}\u{FFFD}\u{FFFD}'"),
            .problem("a status line that is not APT's or dpkg's skipped: 'status: hello: two words'"),
            .event(.install(package: "libc6:amd64", percent: 20, text: "Unpacking libc6 (amd64)")),
        ])
        // A line that never ends: held in bounded memory, dropped once too long, and a
        // last line without its newline still counts at the end.
        #expect(reader.consume(Array(repeating: UInt8(ascii: "x"), count: 40_000)) == [
            .problem("a status line longer than 16384 bytes skipped")
        ])
        #expect(reader.pendingByteCount == 0)
        #expect(reader.consume(Array("\npmerror:hello:60.0000:boom".utf8)) == [])
        #expect(reader.finish() == [.event(.error(package: "hello", message: "boom"))])
    }

    @Test func theStatusOptionGoesAfterTheAptOrDpkgWord() {
        let apt = AptCommandLine(["apt-get", "-y", "install", "hello"], descriptor: 3)
        #expect(apt?.arguments == ["apt-get", "-o", "APT::Status-Fd=3", "-y", "install", "hello"])
        #expect(apt?.name == "apt-get" && apt?.isDpkg == false && apt?.dpkgSteps == nil)
        let chrooted = AptCommandLine(["chroot", "/target", "/usr/bin/apt", "full-upgrade"], descriptor: 7)
        #expect(chrooted?.arguments == ["chroot", "/target", "/usr/bin/apt", "-o", "APT::Status-Fd=7", "full-upgrade"])
        let dpkg = AptCommandLine(["dpkg", "--root", "/r", "-P", "one", "two", "three"], descriptor: 3)
        #expect(dpkg?.arguments == ["dpkg", "--status-fd", "3", "--root", "/r", "-P", "one", "two", "three"])
        #expect(dpkg?.isDpkg == true && dpkg?.dpkgSteps == 3)
        #expect(AptCommandLine(["dpkg", "-i", "-R", "/debs"], descriptor: 3)?.dpkgSteps == nil)
        #expect(AptCommandLine(["dpkg", "-i"], descriptor: 3)?.dpkgSteps == nil)
        #expect(AptCommandLine(["sh", "-c", "apt-get install hello"], descriptor: 3) == nil)
    }
}
