import GaugeProtocol
import Testing

private func parse(_ line: String) -> Request? {
    try? Request.parse(line).get()
}

private func errorCode(_ line: String) -> ErrorCode? {
    if case .failure(let error) = Request.parse(line) { return error.code }
    return nil
}

@Suite struct RequestParsing {
    @Test(arguments: [
        ("progress 42", Request.progress(42, message: nil)),
        ("progress 42.5", .progress(42.5, message: nil)),
        ("progress .5", .progress(0.5, message: nil)),
        ("progress 99.5", .progress(99.5, message: nil)),
        ("progress 0", .progress(0, message: nil)),
        ("progress 100", .progress(100, message: nil)),
        ("progress 100.000", .progress(100, message: nil)),
        ("progress +7", .progress(7, message: nil)),
        ("progress -0", .progress(0, message: nil)),
        ("progress 7.", .progress(7, message: nil)),
        ("progress 42 Copying files", .progress(42, message: "Copying files")),
        ("progress   42   x", .progress(42, message: "  x")),
        ("progress 42 ", .progress(42, message: "")),
        ("message Hello, world", .message("Hello, world")),
        ("message", .message("")),
        ("message ", .message("")),
        ("message  two leading", .message(" two leading")),
        ("message tab\there", .message("tab\there")),
        ("message Grüße 日本語 🎉", .message("Grüße 日本語 🎉")),
        ("title Installing Debian", .title("Installing Debian")),
        ("title ", .title("")),
        ("mode determinate", .mode(.determinate)),
        ("mode indeterminate", .mode(.indeterminate)),
        ("mode  indeterminate  ", .mode(.indeterminate)),
        ("state running", .state(.running, message: nil)),
        ("state begin Starting", .state(.begin, message: "Starting")),
        ("state success All done", .state(.success, message: "All done")),
        ("state failure disk full", .state(.failure, message: "disk full")),
        ("theme fill_color=#ff8800", .theme([ThemeSetting(key: "fill_color", value: "#ff8800")])),
        // Alone: a question for the theme in use.
        ("theme", .theme([])),
        ("theme ", .theme([])),
        (
            "theme fill_color=#ff8800 message_font=\"DejaVu Sans\"",
            .theme([
                ThemeSetting(key: "fill_color", value: "#ff8800"),
                ThemeSetting(key: "message_font", value: "DejaVu Sans"),
            ])
        ),
        ("theme  a=1   b=\"\"  c=", .theme([.init(key: "a", value: "1"), .init(key: "b", value: ""), .init(key: "c", value: "")])),
        ("theme t=\"say \\\"hi\\\" \\\\ ok\"", .theme([.init(key: "t", value: "say \"hi\" \\ ok")])),
        ("theme k=a=b", .theme([.init(key: "k", value: "a=b")])),
        ("reload", .reload),
        ("show", .show),
        ("hide", .hide),
        ("ping", .ping),
        ("status", .status),
        ("wait", .wait),
        ("  ping  ", .ping),
        ("snapshot /tmp/frame.png", .snapshot(path: "/tmp/frame.png")),
        ("deactivate", .deactivate),
        ("reactivate", .reactivate),
        ("newroot /root", .newRoot(path: "/root")),
        ("newroot  /sysroot", .newRoot(path: "/sysroot")),
        ("snapshot   /tmp/with space.png", .snapshot(path: "/tmp/with space.png")),
        ("quit", .quit(retain: false)),
        ("quit retain", .quit(retain: true)),
    ])
    func parses(line: String, expected: Request) {
        #expect(parse(line) == expected)
    }

    @Test(arguments: [
        // bad numbers
        ("progress NaN", ErrorCode.syntax),
        ("progress nan", .syntax),
        ("progress inf", .syntax),
        ("progress -inf", .syntax),
        ("progress infinity", .syntax),
        ("progress 1e400", .syntax),
        ("progress 1e2", .syntax),
        ("progress 4x", .syntax),
        ("progress 0x10", .syntax),
        ("progress 4,5", .syntax),
        ("progress .", .syntax),
        ("progress -", .syntax),
        ("progress +-1", .syntax),
        ("progress 1.2.3", .syntax),
        ("progress", .syntax),
        ("progress ", .syntax),
        ("progress -1", .range),
        ("progress 100.5", .range),
        ("progress 100.0000001", .range),
        ("progress -0.001", .range),
        ("progress 1000", .range),
        ("progress " + String(repeating: "9", count: 400), .range),
        // words
        ("frobnicate", .unknown),
        ("PING", .unknown),
        ("Progress 4", .unknown),
        ("ping\t", .unknown),
        ("", .syntax),
        ("   ", .syntax),
        ("ping now", .syntax),
        ("status --json", .syntax),
        ("title", .syntax),
        ("mode", .syntax),
        ("mode fast", .syntax),
        ("mode Determinate", .syntax),
        ("mode determinate extra", .syntax),
        ("state", .syntax),
        ("state done", .syntax),
        ("theme novalue", .syntax),
        ("theme =x", .syntax),
        ("theme bad/key=1", .syntax),
        ("theme a=\"unterminated", .syntax),
        ("theme a=\"x\"y", .syntax),
        ("theme a=x\"y", .syntax),
        ("snapshot", .syntax),
        ("snapshot ", .syntax),
        ("snapshot relative/path", .syntax),
        ("newroot", .syntax),
        ("newroot root", .syntax),
        ("deactivate now", .syntax),
        ("snapshot frame.png", .syntax),
        ("quit now", .syntax),
        ("quit retain please", .syntax),
        // control characters (tab is allowed in text)
        ("message a\u{1}b", .syntax),
        ("message a\rb", .syntax),
        ("message a\nb", .syntax),
        ("message a\u{7F}b", .syntax),
        ("message a\u{85}b", .syntax),
        ("title \u{1B}[31mred", .syntax),
    ])
    func rejects(line: String, code: ErrorCode) {
        #expect(errorCode(line) == code, "\(line.debugDescription)")
    }

    @Test func unknownCommandIsNamedInTheMessage() throws {
        guard case .failure(let error) = Request.parse("frobnicate 1 2") else {
            Issue.record("parsed")
            return
        }
        #expect(error.code == .unknown)
        #expect(error.message.contains("frobnicate"))
    }

    @Test func longUnknownWordIsAbbreviatedInTheMessage() {
        guard case .failure(let error) = Request.parse(String(repeating: "x", count: 4000)) else {
            Issue.record("parsed")
            return
        }
        #expect(error.code == .unknown)
        #expect(error.message.count < 100)
    }

    /// Found by fuzzing: the theme errors quoted the key whole, so a 4 KiB key came back
    /// as a 4 KiB reply.
    @Test(arguments: ["\"unterminated", "\"x\"y", "x\"y"])
    func longThemeKeyIsAbbreviatedInTheMessage(value: String) {
        let key = String(repeating: "k", count: 4000)
        guard case .failure(let error) = Request.parse("theme \(key)=\(value)") else {
            Issue.record("a bad theme value was taken")
            return
        }
        #expect(error.code == .syntax)
        #expect(error.message.utf8.count < 160, "\(error.message.utf8.count) bytes")
        #expect(error.message.contains("'" + String(repeating: "k", count: 40) + "…'"))
    }

    @Test func progressValueIsParsedExactly() throws {
        #expect(try Request.parseProgressValue("33.333").get() == 33.333)
        #expect(try Request.parseProgressValue("0.1").get() == 0.1)
    }
}

@Suite struct RequestEncoding {
    static let samples: [Request] = [
        .progress(42, message: nil),
        .progress(42.5, message: "Copying files"),
        .progress(0.1, message: nil),
        .progress(33.333333333333336, message: nil),
        .progress(1e-7, message: nil),
        .progress(100, message: ""),
        .progress(0, message: "  padded  "),
        .message(""),
        .message("Hello"),
        .message(" leading and trailing "),
        .message("tab\tand \"quotes\" and \\ backslash"),
        .message("日本語のメッセージ 🎉 Ünïcödé"),
        .title(""),
        .title("Installing"),
        .mode(.determinate),
        .mode(.indeterminate),
        .state(.running, message: nil),
        .state(.success, message: "Done"),
        .state(.failure, message: ""),
        .theme([ThemeSetting(key: "fill_color", value: "#ff8800")]),
        .theme([
            ThemeSetting(key: "message_font", value: "DejaVu Sans"),
            ThemeSetting(key: "empty", value: ""),
            ThemeSetting(key: "q", value: "a \"b\" \\c\\"),
            ThemeSetting(key: "logo", value: "/usr/share/gauge/logo.png"),
        ]),
        .reload, .show, .hide, .ping, .status, .wait,
        .snapshot(path: "/tmp/frame.png"),
        .newRoot(path: "/sys root"),
        .deactivate,
        .reactivate,
        .snapshot(path: "/tmp/dir with spaces/frame .png "),
        .quit(retain: false),
        .quit(retain: true),
    ]

    @Test(arguments: samples)
    func roundTrips(request: Request) {
        let line = request.encoded
        #expect(!line.contains("\n"))
        #expect(parse(line) == request, "\(line.debugDescription)")
    }

    @Test func encodesCanonicalLines() {
        #expect(Request.progress(42, message: "hello").encoded == "progress 42 hello")
        #expect(Request.progress(42.5, message: nil).encoded == "progress 42.5")
        #expect(Request.progress(1e-7, message: nil).encoded == "progress 0.0000001")
        #expect(Request.message("").encoded == "message")
        #expect(Request.state(.success, message: "ok").encoded == "state success ok")
        #expect(Request.quit(retain: true).encoded == "quit retain")
        #expect(
            Request.theme([.init(key: "a", value: "b c"), .init(key: "d", value: "e")]).encoded
                == "theme a=\"b c\" d=e")
    }

    /// `describe UNIT TEXT`: the unit is one word, the text the rest of the line.
    @Test func describeTakesAUnitAndItsDescription() {
        #expect(parse("describe systemd-journald.service Journal Service") == .describe(unit: "systemd-journald.service", text: "Journal Service"))
        #expect(parse("describe  a.service  x ") == .describe(unit: "a.service", text: " x "))
        #expect(Request.describe(unit: "a.mount", text: "/boot").encoded == "describe a.mount /boot")
        for line in ["describe", "describe a.service", "describe a.service "] {
            guard case .failure(let error) = Request.parse(line) else {
                Issue.record("\(line) parsed")
                continue
            }
            #expect(error.code == .syntax, "\(line)")
        }
    }

    @Test func gaugesOwnUnitsAreKnownByName() {
        for unit in ["gauged.service", "gauged-poweroff.service", "gauged-ask-password.path", "gauged-waits.service"] {
            #expect(Request.isGaugeUnit(unit), "\(unit)")
        }
        for unit in ["gaugedx.service", "systemd-journald.service", "gauged-data.mount", "gauged"] {
            #expect(!Request.isGaugeUnit(unit), "\(unit)")
        }
    }

    @Test func jobsTakesOneShareOfJobsDone() {
        #expect(parse("jobs 62.5") == .jobs(62.5))
        #expect(Request.jobs(62.5).encoded == "jobs 62.5")
        for (line, code) in [("jobs", ErrorCode.syntax), ("jobs many", .syntax), ("jobs 101", .range), ("jobs 5 more", .syntax)] {
            guard case .failure(let error) = Request.parse(line) else {
                Issue.record("\(line) parsed")
                continue
            }
            #expect(error.code == code, "\(line)")
        }
    }

    @Test func everyCommandWordIsKnown() {
        for word in Request.commandWords {
            if case .failure(let error) = Request.parse(word) {
                #expect(error.code != .unknown, "\(word)")
            }
        }
    }
}

@Suite struct PlainDecimalTests {
    @Test(arguments: [
        (0.0, "0"), (-0.0, "0"), (42, "42"), (42.5, "42.5"), (100, "100"), (0.1, "0.1"),
        (1e-5, "0.00001"), (1.5e-7, "0.00000015"), (1e16, "10000000000000000"),
        (1.25e20, "125000000000000000000"), (-3, "-3"), (-0.25, "-0.25"),
        (Double.nan, "0"), (Double.infinity, "0"),
    ])
    func formats(value: Double, text: String) {
        #expect(PlainDecimal.format(value) == text)
    }

    @Test func formatReadsBackExactly() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let value = Double.random(in: 0...100, using: &generator)
            let text = PlainDecimal.format(value)
            #expect(!text.contains("e"))
            #expect(PlainDecimal.parse(text) == value, "\(text)")
        }
        for exponent in -30...30 {
            let value = 1.2345 * pow10(exponent)
            #expect(PlainDecimal.parse(PlainDecimal.format(value)) == value)
        }
    }

    private func pow10(_ exponent: Int) -> Double {
        var result = 1.0
        for _ in 0..<abs(exponent) { result *= 10 }
        return exponent < 0 ? 1 / result : result
    }

    @Test(arguments: ["", "+", "-", ".", "1e5", "0x1", "inf", "nan", " 1", "1 ", "1.2.3", "1-", "٣"])
    func refuses(text: String) {
        #expect(PlainDecimal.parse(text) == nil)
    }
}

/// The failure screen's requests (`failure`, `failure-summary`, `failure-line`,
/// `failure-clear`) and the bounds of what the daemon keeps of them.
@Suite struct FailureRequests {
    @Test(arguments: [
        ("failure", Request.failure(title: "")),
        ("failure ", .failure(title: "")),
        ("failure Update failed", .failure(title: "Update failed")),
        ("failure  two  spaces ", .failure(title: " two  spaces ")),
        ("failure-summary Could not write /boot/vmlinuz", .failureSummary("Could not write /boot/vmlinuz")),
        ("failure-summary ", .failureSummary("")),
        ("failure-line E: Sub-process /usr/bin/dpkg returned an error code (1)", .failureLine("E: Sub-process /usr/bin/dpkg returned an error code (1)")),
        ("failure-line ", .failureLine("")),
        ("failure-line \tindented", .failureLine("\tindented")),
        ("failure-line 日本語 \u{FFFD}", .failureLine("日本語 \u{FFFD}")),
        ("failure-clear", .failureClear),
        ("  failure-clear  ", .failureClear),
    ])
    func parses(line: String, request: Request) {
        #expect(parse(line) == request)
        #expect(parse(request.encoded) == request, "\(request.encoded.debugDescription)")
    }

    @Test(arguments: [
        ("failure-line", ErrorCode.syntax),  // no text: a blank line is "failure-line " with its space
        ("failure-summary", .syntax),
        ("failure-clear now", .syntax),
        ("failure-line \u{1B}[31mred", .syntax),  // an escape sequence never reaches the screen
        ("failure-line bell\u{07}", .syntax),
        ("failure-line c1\u{9B}31m", .syntax),
        ("failure Update\u{0}failed", .syntax),
        ("failure-lines x", .unknown),
        ("Failure x", .unknown),
    ])
    func refuses(line: String, code: ErrorCode) {
        #expect(errorCode(line) == code, "\(line.debugDescription)")
    }

    /// A request line longer than the protocol's limit is refused before parsing
    /// (`toolong`), and the longest text a request carries fits in a line.
    @Test func tooLongLinesAreRefusedAndTheTextLimitFits() {
        var framer = LineFramer(maxLineBytes: Limits.maxLineBytes)
        let long = "failure-line " + String(repeating: "x", count: Limits.maxLineBytes)
        framer.append(Array((long + "\nfailure-clear\n").utf8))
        #expect(framer.next() == .error(ProtocolError(.toolong, "line longer than \(Limits.maxLineBytes) bytes")))
        #expect(framer.next() == .line("failure-clear"))
        let text = String(repeating: "é", count: Limits.maxFailureTextBytes / 2)
        for request in [Request.failure(title: text), .failureSummary(text), .failureLine(text)] {
            #expect(request.encoded.utf8.count <= Limits.maxLineBytes)
            #expect(parse(request.encoded) == request)
        }
    }

    @Test func theDefaultTitleShowsWhenNoneIsGiven() {
        #expect(FailureReport().shownTitle == "Something went wrong")
        #expect(FailureReport(title: "Boot failed").shownTitle == "Boot failed")
    }

    /// Past the count the oldest lines go, each counted as dropped.
    @Test func tooManyLinesDropTheOldest() {
        var report = FailureReport(title: "t")
        for n in 1...(Limits.maxFailureLines + 50) { report.append("line \(n)") }
        #expect(report.lines.count == Limits.maxFailureLines)
        #expect(report.dropped == 50)
        #expect(report.lines.first == "line 51")
        #expect(report.lines.last == "line \(Limits.maxFailureLines + 50)")
    }

    /// Past the bytes the oldest lines go too; a line alone over the bound is cut to it
    /// between characters.
    @Test func tooManyBytesDropTheOldest() {
        var report = FailureReport()
        let kilobyte = String(repeating: "a", count: 1024)
        for _ in 0..<40 { report.append(kilobyte) }
        #expect(report.lines.count == Limits.maxFailureBytes / 1024)
        #expect(report.dropped == 40 - Limits.maxFailureBytes / 1024)
        report.append(String(repeating: "€", count: Limits.maxFailureBytes))
        #expect(report.lines.count == 1)
        #expect(report.lines[0].utf8.count == Limits.maxFailureBytes - Limits.maxFailureBytes % 3)
        #expect(report.lines[0].unicodeScalars.allSatisfy { $0 == "€" })
        var small = FailureReport()
        for n in 1...5 { small.append("\(n)", maxLines: 3, maxBytes: 100) }
        #expect(small.lines == ["3", "4", "5"])
        #expect(small.dropped == 2)
    }
}
