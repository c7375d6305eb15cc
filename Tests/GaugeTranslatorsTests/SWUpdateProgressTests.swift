import GaugeProtocol
import GaugeTranslators
import Testing

@Suite struct SWUpdateProgressTests {
    private let sample = SWUpdateProgressMessage(
        status: .run, downloadPercent: 17, downloadBytes: 0x1_2345_6789, steps: 3, step: 2, stepPercent: 40,
        image: "rootfs.ext4", handler: "raw", source: 4, info: "{\"x\": 1}")

    @Test func sizesAreThoseOfTheCStruct() {
        #expect(SWUpdateProgressMessage.Layout.packed.size == 2408)
        #expect(SWUpdateProgressMessage.Layout.aligned.size == 2416)
        #expect(SWUpdateProgressMessage.connectAck() == [0, 0, 2, 0, 0x41, 0x43, 0x4B, 0])
    }

    @Test(arguments: SWUpdateProgressMessage.Layout.allCases)
    func fieldsSitAtTheirOffsets(layout: SWUpdateProgressMessage.Layout) {
        let bytes = sample.encoded(layout: layout)
        let aligned = layout == .aligned
        func u32(_ offset: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) } }
        #expect(u32(0) == 0x0002_0000)
        #expect(u32(4) == 2)
        #expect(u32(8) == 17)
        #expect(u32(aligned ? 16 : 12) == 0x2345_6789)
        #expect(u32(aligned ? 20 : 16) == 1)
        #expect(u32(aligned ? 24 : 20) == 3)
        #expect(u32(aligned ? 28 : 24) == 2)
        #expect(u32(aligned ? 32 : 28) == 40)
        #expect(Array(bytes[(aligned ? 36 : 32)...].prefix(12)) == Array("rootfs.ext4".utf8) + [0])
        #expect(Array(bytes[(aligned ? 292 : 288)...].prefix(4)) == Array("raw".utf8) + [0])
        #expect(u32(aligned ? 356 : 352) == 4)
        #expect(u32(aligned ? 360 : 356) == 8)
        #expect(Array(bytes[(aligned ? 364 : 360)...].prefix(8)) == Array("{\"x\": 1}".utf8))
        #expect(SWUpdateProgressMessage(decoding: bytes, layout: layout) == sample)
    }

    @Test func stringsFillingTheirFieldAreCutAndInfoLengthIsBounded() {
        var message = sample
        message.image = String(repeating: "i", count: 300)
        var bytes = message.encoded(layout: .packed)
        #expect(SWUpdateProgressMessage(decoding: bytes, layout: .packed).image.count == 255)
        // A field without a NUL ends at the field's end; infolen beyond 2048 is bounded.
        for index in 32..<288 { bytes[index] = UInt8(ascii: "j") }
        bytes[356] = 0xFF
        bytes[357] = 0xFF
        let decoded = SWUpdateProgressMessage(decoding: bytes, layout: .packed)
        #expect(decoded.image == String(repeating: "j", count: 256))
        #expect(decoded.handler == "raw")
    }

    private func messages(_ events: [SWUpdateProgressStream.Event]) -> [SWUpdateProgressMessage] {
        events.compactMap { if case .message(let message) = $0 { message } else { nil } }
    }

    @Test(arguments: SWUpdateProgressMessage.Layout.allCases)
    func streamFindsTheLayoutFromWholeMessages(layout: SWUpdateProgressMessage.Layout) {
        var stream = SWUpdateProgressStream()
        let events = stream.consume(SWUpdateProgressMessage.connectAck())
        #expect(events == [.connected(apiVersion: 0x0002_0000)])
        #expect(stream.consume(sample.encoded(layout: layout)) == [.message(sample)])
        #expect(stream.layout == layout)
        var second = sample
        second.stepPercent = 90
        #expect(messages(stream.consume(second.encoded(layout: layout) + sample.encoded(layout: layout))) == [second, sample])
    }

    @Test(arguments: SWUpdateProgressMessage.Layout.allCases)
    func splitMessagesWaitThenDecode(layout: SWUpdateProgressMessage.Layout) {
        var stream = SWUpdateProgressStream()
        let bytes = SWUpdateProgressMessage.connectAck() + sample.encoded(layout: layout) + sample.encoded(layout: layout)
        var decoded: [SWUpdateProgressMessage] = []
        var offset = 0
        for size in [3, 700, 1900, 1000, 2000, 9999] {
            let end = min(bytes.count, offset + size)
            decoded += messages(stream.consume(bytes[offset..<end]))
            offset = end
        }
        #expect(decoded == [sample, sample])
        #expect(stream.layout == layout)
        #expect(stream.pendingByteCount == 0)
    }

    @Test func givenLayoutIsUsedAndResetForgetsADetectedOne() {
        var fixed = SWUpdateProgressStream(layout: .packed)
        #expect(messages(fixed.consume(SWUpdateProgressMessage.connectAck() + sample.encoded(layout: .packed))) == [sample])
        fixed.reset()
        #expect(fixed.layout == .packed)

        var detected = SWUpdateProgressStream()
        _ = detected.consume(SWUpdateProgressMessage.connectAck() + sample.encoded(layout: .aligned))
        #expect(detected.layout == .aligned)
        detected.reset()
        #expect(detected.layout == nil)
        #expect(messages(detected.consume(SWUpdateProgressMessage.connectAck() + sample.encoded(layout: .packed))) == [sample])
    }

    @Test func serverWithoutAckIsReadToo() {
        var stream = SWUpdateProgressStream()
        #expect(messages(stream.consume(sample.encoded(layout: .aligned))) == [sample])
    }

    @Test func otherMajorVersionsAreSkipped() {
        var stream = SWUpdateProgressStream(layout: .packed)
        var old = sample
        old.apiVersion = 0x0003_0000
        let events = stream.consume(SWUpdateProgressMessage.connectAck() + old.encoded(layout: .packed) + sample.encoded(layout: .packed))
        #expect(messages(events) == [sample])
        #expect(events.contains { if case .problem = $0 { true } else { false } })
    }

    // MARK: translation

    @Test func aWholeUpdateBecomesTheseRequests() {
        var translator = SWUpdateProgressTranslator()
        let sequence: [SWUpdateProgressMessage] = [
            .init(status: .idle),
            .init(status: .start, source: 4),
            .init(status: .download, downloadPercent: 0),
            .init(status: .download, downloadPercent: 30),
            .init(status: .download, downloadPercent: 30),
            .init(status: .run, steps: 2, step: 0),
            .init(status: .run, steps: 2, step: 1, stepPercent: 0, image: "rootfs.ext4", handler: "raw"),
            .init(status: .run, steps: 2, step: 1, stepPercent: 50, image: "rootfs.ext4", handler: "raw"),
            .init(status: .progress, steps: 3, step: 1, stepPercent: 100, image: "rootfs.ext4", handler: "raw"),
            .init(status: .run, steps: 2, step: 2, stepPercent: 0, image: "boot.img"),
            .init(status: .subprocess, info: "x"),
            .init(status: .run, steps: 2, step: 2, stepPercent: 100, image: "boot.img"),
            .init(status: .success),
            .init(status: .done),
            .init(status: .start),
            .init(status: .failure),
        ]
        let lines = sequence.flatMap { translator.requests(for: $0) }.map(\.encoded)
        // The download is the first half, the two steps a quarter each; a step starting
        // at 0 % or a recount of the steps never moves the bar back.
        #expect(lines == [
            "progress 0", "state running Update started",
            "message Downloading update", "progress 15",
            "progress 50 Installing rootfs.ext4 (raw)",
            "progress 62.5",
            "progress 66.6",
            "progress 75 Installing boot.img",
            "progress 99.9",
            "state success Update successful",
            "progress 0", "state running Update started",
            "state failure Update failed",
        ])
    }

    @Test func withoutADownloadTheStepsShareTheWholeBar() {
        var translator = SWUpdateProgressTranslator()
        let sequence: [SWUpdateProgressMessage] = [
            .init(status: .start),
            .init(status: .run, steps: 4, step: 1, stepPercent: 100, image: "a"),
            .init(status: .run, steps: 4, step: 2, stepPercent: 0, image: "b"),
            .init(status: .run, steps: 4, step: 2, stepPercent: 33, image: "b"),
        ]
        let lines = sequence.flatMap { translator.requests(for: $0) }.map(\.encoded)
        #expect(lines == [
            "progress 0", "state running Update started",
            "progress 25 Installing a", "message Installing b", "progress 33.2",
        ])
    }

    @Test func aSilentStepCreepsThenTurnsIndeterminate() {
        var translator = SWUpdateProgressTranslator(settings: .init(stallSeconds: 60, creepHalfSeconds: 10))
        _ = translator.requests(for: .init(status: .start), at: 0)
        _ = translator.requests(for: .init(status: .run, steps: 2, step: 1, stepPercent: 0, image: "a"), at: 0)
        let second: UInt64 = 1_000_000_000
        // After 10 s, half of 90 % of the step's 50 %.
        #expect(translator.tick(at: 10 * second) == [.progress(22.5, message: nil)])
        #expect(translator.tick(at: 60 * second) == [.mode(.indeterminate)])
        #expect(translator.requests(for: .init(status: .run, steps: 2, step: 2, stepPercent: 0, image: "b"), at: 61 * second)
            == [.mode(.determinate), .progress(50, message: "Installing b")])
    }

    /// The last step at 100 % is not the end of the update: the bar stops short of full
    /// until SUCCESS, and so does a huge step count.
    @Test func onlySuccessFillsTheBar() {
        var translator = SWUpdateProgressTranslator(settings: .init(stallSeconds: nil, creepHalfSeconds: nil))
        _ = translator.requests(for: .init(status: .start))
        #expect(translator.requests(for: .init(status: .run, steps: 1, step: 1, stepPercent: 100, image: "a"))
            == [.progress(99.9, message: "Installing a")])
        #expect(translator.requests(for: .init(status: .success))
            == [.state(.success, message: "Update successful")])
        _ = translator.requests(for: .init(status: .start))
        #expect(translator.requests(for: .init(status: .run, steps: 20_000, step: 15_000, stepPercent: 0, image: "b"))
            == [.progress(74.9, message: "Installing b")], "steps beyond 10,000 are counted, not cut")
    }

    @Test func oddValuesStayInRangeAndTextIsCleaned() {
        var translator = SWUpdateProgressTranslator()
        let requests = translator.requests(
            for: .init(status: .run, steps: 2, step: 2, stepPercent: 40, image: "a\nb", handler: "h\u{7F}"))
        #expect(requests == [.progress(70, message: "Installing a b (h )")])
        // A step past the steps, a percentage past 100, 0xffffffff everywhere: no report.
        #expect(translator.requests(for: .init(status: .run, steps: 2, step: 7, stepPercent: 10, image: "c")) == [])
        #expect(translator.requests(for: .init(status: .run, steps: 2, step: 2, stepPercent: 900, image: "c")) == [])
        #expect(translator.requests(for: .init(
            status: .progress, downloadPercent: .max, downloadBytes: .max, steps: .max, step: .max, stepPercent: .max,
            source: .max)) == [])
        // 250 % is a whole download, behind the bar: only the message changes.
        #expect(translator.requests(for: .init(status: .download, downloadPercent: 250)) == [.message("Downloading update")])
        var unknown = SWUpdateProgressMessage(status: .idle)
        unknown.statusCode = 99
        #expect(translator.requests(for: unknown) == [])
    }
}
