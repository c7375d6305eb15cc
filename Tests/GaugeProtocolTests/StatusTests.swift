import GaugeProtocol
import Testing

@Suite struct StatusTests {
    static let sample = Status(
        target: 42.5, shown: 40, message: "Copying files", title: "Installing", mode: .determinate,
        state: .running, visible: true,
        display: .init(name: "memory", width: 800, height: 600, format: "xrgb8888"),
        fps: 60, animating: true, clients: 1, frames: 7)

    @Test func writesOneLineWithFixedKeysAndPlainNumbers() {
        #expect(
            Self.sample.json()
                == #"{"target":42.5,"shown":40,"message":"Copying files","title":"Installing","mode":"determinate","state":"running","visible":true,"display":{"name":"memory","width":800,"height":600,"format":"xrgb8888"},"fps":60,"animating":true,"clients":1,"frames":7,"failure":null}"#
        )
        var tiny = Self.sample
        tiny.shown = 0.0000001
        tiny.target = 0
        #expect(tiny.json().hasPrefix(#"{"target":0,"shown":0,"#))
    }

    /// A percentage means something to two decimals: the eased value mid-transition
    /// (`0.0005365532495279185`) is not sent with sixteen more.
    @Test(arguments: [
        (0.0005365532495279185, "0"), (42.125, "42.13"), (99.994, "99.99"), (99.995, "100"),
        (33.333333333333336, "33.33"), (-0.004, "0"), (-0.006, "-0.01"), (100, "100"),
    ])
    func numbersHaveAtMostTwoDecimals(value: Double, text: String) {
        var status = Self.sample
        status.target = value
        status.shown = value
        #expect(status.json().hasPrefix(#"{"target":\#(text),"shown":\#(text),"#), "\(status.json())")
    }

    static let nastyStrings = [
        "", "plain", "\"quoted\"", "back\\slash", "line\nbreak", "cr\r\nlf", "tab\there",
        "nul\u{0}byte", "bell\u{7}esc\u{1B}del\u{7F}", "c1\u{85}\u{9F}", "\u{8}\u{C}", "sep\u{2028}\u{2029}",
        "emoji 🎉👩‍👩‍👧 flag 🇩🇪", "CJK 日本語 中文 한국어", "combining e\u{301}", "slash / </script>",
        "\u{FFFF}\u{10FFFF}", String(repeating: "é", count: 3000),
    ]

    @Test(arguments: nastyStrings)
    func roundTripsNastyStrings(text: String) throws {
        var status = Self.sample
        status.message = text
        status.title = String(text.reversed())
        status.display.name = text
        let json = status.json()
        #expect(!json.unicodeScalars.contains { $0.value < 0x20 || $0 == "\u{2028}" || $0 == "\u{2029}" })
        #expect(Status.parse(json: json) == status)
        #expect(Reply.parse(Reply.ok(json).encoded) == .ok(json))
    }

    @Test func roundTripsEveryEnumAndRandomNumbers() {
        var generator = SystemRandomNumberGenerator()
        for mode in DisplayMode.allCases {
            for state in RunState.allCases {
                var status = Self.sample
                status.mode = mode
                status.state = state
                status.visible.toggle()
                status.animating.toggle()
                status.target = Status.twoDecimals(Double.random(in: 0...100, using: &generator))
                status.shown = Status.twoDecimals(Double.random(in: 0...100, using: &generator))
                status.clients = Int.random(in: 0...64, using: &generator)
                status.display = .none
                #expect(Status.parse(json: status.json()) == status)
            }
        }
    }

    /// A reply with finer values than the daemon writes (the fuzzer's, seed 20260611, run for
    /// 20 s: `"target":42.114`) reads as hundredths, so it writes and reads back as itself.
    @Test func finerValuesReadAsHundredths() throws {
        let json = #"{"target":42.114,"shown":39.996,"message":"Copying files","title":"Installing","mode":"determinate","state":"running","visible":true,"display":{"name":"memory","width":800,"height":600,"format":"xrgb8888"},"fps":60,"animating":true,"clients":1,"frames":7,"stall_time":19.999,"failure":null}"#
        let status = try #require(Status.parse(json: json))
        #expect(status.target == 42.11 && status.shown == 40 && status.stallTime == 20)
        #expect(Status.parse(json: status.json()) == status)
    }

    @Test func readsKeysInAnyOrderAndIgnoresUnknownOnes() {
        let json = """
            { "clients": 2, "animating": false, "fps": 30, "extra": [1, {"x": null}],
              "display": {"format": "rgb565", "height": 480, "width": 640, "name": "fbdev"},
              "visible": false, "state": "success", "mode": "indeterminate",
              "title": "T", "message": "M", "shown": 1.0e2, "target": 100 }
            """
        let status = Status.parse(json: json)
        #expect(
            status
                == Status(
                    target: 100, shown: 100, message: "M", title: "T", mode: .indeterminate,
                    state: .success, visible: false,
                    display: .init(name: "fbdev", width: 640, height: 480, format: "rgb565"),
                    fps: 30, animating: false, clients: 2))
    }

    @Test func stallTimeIsTheLastKeyAndOptionalForOlderDaemons() {
        var withStall = Self.sample
        withStall.stallTime = 7.5
        #expect(withStall.json().hasSuffix(#","frames":7,"stall_time":7.5,"failure":null}"#))
        #expect(Status.parse(json: withStall.json()) == withStall)
        #expect(Status.parse(json: Self.sample.json())?.stallTime == nil)
        #expect(Status.parse(json: withStall.json().replacing("7.5,", with: #""7.5","#, maxReplacements: 1)) == nil)
    }

    /// `failure` is `null` while no failure screen is up, an object while one is (its
    /// `boot` only where known), and missing from an older daemon's reply (read as none).
    @Test func failureIsNullOrTheScreensObject() {
        var up = Self.sample
        up.failure = Status.Failure(title: "Update failed", summary: "disk \"full\"", lines: 3, dropped: 1)
        #expect(up.json().hasSuffix(#","frames":7,"failure":{"title":"Update failed","summary":"disk \"full\"","lines":3,"dropped":1}}"#))
        #expect(Status.parse(json: up.json()) == up)
        up.failure?.boot = "3f2a9c1e"
        #expect(up.json().hasSuffix(#""lines":3,"dropped":1,"boot":"3f2a9c1e"}}"#))
        #expect(Status.parse(json: up.json()) == up)
        up.failure?.boot = ""
        #expect(Status.parse(json: Self.sample.json())?.failure == nil)
        let old = Self.sample.json().replacing(#","failure":null"#, with: "", maxReplacements: 1)
        #expect(!old.contains("failure"))
        #expect(Status.parse(json: old) == Self.sample)
        #expect(Status.parse(json: up.json().replacing(#""lines":3"#, with: #""lines":"3""#, maxReplacements: 1)) == nil)
        #expect(Status.parse(json: Self.sample.json().replacing("null}", with: "true}", maxReplacements: 1)) == nil)
        #expect(up.humanReadable.hasSuffix("\nfailure:   \"Update failed\" (3 detail lines)"))
        #expect(!Self.sample.humanReadable.contains("failure"))
    }

    @Test func framesIsOptionalForOlderDaemons() {
        let old = Self.sample.json().replacing(#","frames":7"#, with: "", maxReplacements: 1)
        #expect(!old.contains("frames"))
        var expected = Self.sample
        expected.frames = 0
        #expect(Status.parse(json: old) == expected)
    }

    @Test func refusesMissingOrMistypedFields() {
        let good = Self.sample.json()
        #expect(Status.parse(json: good) != nil)
        #expect(Status.parse(json: good.replacing(#""fps":60"#, with: #""fps":60.5"#, maxReplacements: 1)) == nil)
        #expect(Status.parse(json: good.replacing(#""fps":60"#, with: #""fps":"60""#, maxReplacements: 1)) == nil)
        #expect(Status.parse(json: good.replacing(#""mode":"determinate""#, with: #""mode":"sideways""#, maxReplacements: 1)) == nil)
        #expect(Status.parse(json: good.replacing(#""visible":true,"#, with: "", maxReplacements: 1)) == nil)
        #expect(Status.parse(json: good.replacing(#""frames":7"#, with: #""frames":"7""#, maxReplacements: 1)) == nil)
        #expect(Status.parse(json: "[]") == nil)
        #expect(Status.parse(json: "") == nil)
    }

    @Test func humanReadableNamesEveryField() {
        let text = Self.sample.humanReadable
        #expect(!text.hasSuffix("\n"))
        for label in ["progress:", "state:", "mode:", "title:", "message:", "visible:", "display:", "fps:", "animating:", "clients:", "frames:"] {
            #expect(text.contains(label), "\(label)")
        }
        #expect(text.contains("42.5% (shown 40%)"))
        #expect(text.contains("display:   memory 800x600 xrgb8888\n"))
        #expect(text.contains("visible:   yes\n"))
        var multiline = Self.sample
        multiline.message = "a\nb"
        #expect(multiline.humanReadable.split(separator: "\n").count == text.split(separator: "\n").count)
    }

    /// A display whose name already holds its size and format (`memory 640x480
    /// XRGB8888`, `terminal 80x24` is cells, not pixels) shows each once.
    @Test func humanReadableSaysEachDisplayFactOnce() {
        var status = Self.sample
        status.display = .init(name: "memory 640x480 XRGB8888", width: 640, height: 480, format: "XRGB8888")
        #expect(status.humanReadable.contains("display:   memory 640x480 XRGB8888\n"))
        status.display = .init(name: "terminal 80x24", width: 240, height: 144, format: "XRGB8888")
        #expect(status.humanReadable.contains("display:   terminal 80x24 240x144 XRGB8888\n"))
        status.display = .init(name: "drm /dev/dri/card0 bochs-drm", width: 1024, height: 768, format: "XRGB8888")
        #expect(status.humanReadable.contains("display:   drm /dev/dri/card0 bochs-drm 1024x768 XRGB8888\n"))
    }

    /// With no display nothing is visible, whatever `show` asked for.
    @Test func humanReadableIsHonestWithoutADisplay() {
        var status = Self.sample
        status.display = .none
        #expect(status.humanReadable.contains("visible:   no (no display; shown once one appears)\n"))
        #expect(status.humanReadable.contains("display:   none\n"))
        status.visible = false
        #expect(status.humanReadable.contains("visible:   no (hidden)\n"))
    }
}

@Suite struct JSONTests {
    @Test(arguments: [
        ("null", JSONValue.null), ("true", .bool(true)), ("false", .bool(false)),
        ("0", .number(0)), ("-0", .number(0)), ("42.5", .number(42.5)), ("-1e3", .number(-1000)),
        ("1E+2", .number(100)), ("2.5e-1", .number(0.25)),
        (#""""#, .string("")), (#""a\"b\\c\/d""#, .string("a\"b\\c/d")),
        (#""\b\f\n\r\t""#, .string("\u{8}\u{C}\n\r\t")),
        (#""\u0041\u00e9\u65E5""#, .string("Aé日")),
        (#""\ud83c\udf89""#, .string("🎉")),
        (#""\uD834\uDD1E""#, .string("𝄞")),
        (#""raw 🎉 日本""#, .string("raw 🎉 日本")),
        ("[]", .array([])), ("[1, [2, []], {}]", .array([.number(1), .array([.number(2), .array([])]), .object([])])),
        (" {\"a\" : 1 , \"b\":[true,null]} \n", .object([.init("a", .number(1)), .init("b", .array([.bool(true), .null]))])),
    ])
    func reads(text: String, value: JSONValue) {
        #expect(JSONValue.parse(text) == value, "\(text)")
    }

    @Test(arguments: [
        "", " ", "nul", "tru", "01", "1.", ".5", "-", "+1", "1e", "1e400", "NaN", "Infinity", "0x10",
        "\"unterminated", "\"bad \\x escape\"", "\"raw\nnewline\"", "\"raw\ttab\"", "\"\\u12\"", "\"\\u12G4\"",
        "\"\\ud83c\"", "\"\\ud83c\\u0041\"", "\"\\udf89\"", "[1,]", "[1 2]", "{\"a\"}", "{\"a\":1,}",
        "{a:1}", "{\"a\":1} x", "[] []", "'single'",
        String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000),
    ])
    func refuses(text: String) {
        #expect(JSONValue.parse(text) == nil, "\(text)")
    }

    @Test func nestingUpToTheLimitIsRead() {
        let depth = JSONValue.maxDepth
        let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(JSONValue.parse(text) != nil)
    }

    @Test func escapesControlCharactersAsUnicodeEscapes() {
        #expect(JSONValue.string("\u{1}\u{1F}\u{7F}\u{2028}").encoded == #""\u0001\u001f\u007f\u2028""#)
        #expect(JSONValue.string("q\"b\\n\n").encoded == #""q\"b\\n\n""#)
        #expect(JSONValue.number(1e21).encoded == "1000000000000000000000")
    }

    @Test func writerAndReaderAgree() {
        let value = JSONValue.object([
            .init("s", .string("x\u{0}y\n🎉")), .init("n", .number(-12.75)), .init("a", .array([.null, .bool(false)])),
            .init("o", .object([.init("", .string(""))])),
        ])
        #expect(JSONValue.parse(value.encoded) == value)
    }
}
