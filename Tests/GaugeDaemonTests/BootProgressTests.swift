import GaugeDaemon
import GaugeSystem
import Glibc
import Testing
import GaugeTestSupport

@Suite("Boot progress")
struct BootProgressTests {
    let history = BootHistory(
        duration: 40, steps: ["systemd-udevd.service": 4, "local-fs.target": 10, "systemd-logind.service": 30])

    @Test func theHistoryFileRoundTripsAndKeepsStepsInTheirOrder() throws {
        let text = history.encoded
        let lines = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(lines == ["duration 40", "step 4 systemd-udevd.service", "step 10 local-fs.target", "step 30 systemd-logind.service"])
        #expect(BootHistory.parse(Array(text.utf8)) == history)
    }

    @Test(arguments: [
        "",  // empty
        "garbage\n\u{0}\u{1}\n",
        "duration -3\n",
        "duration nan\nstep 1 a\n",
        "duration 99999\n",  // longer than a boot worth learning from
        "step 1 a.service\n",  // no duration
    ])
    func aCorruptFileIsNoHistory(text: String) {
        #expect(BootHistory.parse(Array(text.utf8)) == nil)
    }

    @Test func badStepLinesAreSkippedAndTheRestKept() throws {
        let text = "duration 20\nstep 2 good.service\nstep x bad.service\nstep 5\nstep 30 after-the-end.service\nstep 3 good.service\n"
        let parsed = try #require(BootHistory.parse(Array(text.utf8)))
        #expect(parsed.steps == ["good.service": 2], "the first of a repeated step, none past the end")
    }

    @Test func withoutHistoryTheBarStillMovesAndNeverClaimsTheEnd() {
        var estimate = BootEstimate(history: nil)
        let values = stride(from: 0.0, through: 600, by: 0.5).map { estimate.value(at: $0) }
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }, "never goes back")
        #expect(values[4] > 0.1, "moves within the first two seconds: \(values[4])")
        #expect(values[60] > 0.5, "past half-way after 30 s: \(values[60])")
        #expect(values[400] - values[200] > 0.02, "still moving in a boot of minutes: \(values[200]) → \(values[400])")
        #expect(values.last! < BootEstimate.ceiling)
    }

    /// A first boot as the boot test's VM runs it: the initramfs until 8 s, then systemd
    /// in the real root reporting its Progress (the share of its jobs done) four times a
    /// second, falling whenever jobs are added, until gauged-quit at 30 s with nearly every
    /// job done.
    static let systemdProgress: [(at: Double, share: Double)] = [
        (8.5, 0.02), (9, 0.10), (10, 0.18), (11, 0.15), (12, 0.31), (14, 0.40), (16, 0.38),
        (18, 0.55), (20, 0.62), (22, 0.70), (24, 0.78), (26, 0.84), (28, 0.90), (29.5, 0.95),
    ]

    @Test func aFirstBootFollowsSystemdsJobsNeverGoesBackAndEndsHigh() {
        var estimate = BootEstimate(history: nil)
        var curveOnly = BootEstimate(history: nil)
        var reports = Self.systemdProgress[...]
        var values: [Double] = []
        for tick in 0...120 {
            let time = Double(tick) / 4
            while let next = reports.first, next.at <= time {
                estimate.jobsDone(next.share)
                reports = reports.dropFirst()
            }
            values.append(estimate.value(at: time))
            #expect(values.last! >= curveOnly.value(at: time), "never behind the first boot's curve at \(time) s")
        }
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }, "never goes back, though systemd's share falls")
        #expect(values[119] >= 0.85, "at gauged-quit (29.75 s): \(values[119]); the curve alone: \(curveOnly.value(at: 29.75))")
        #expect(curveOnly.value(at: 29.75) < 0.7, "the curve alone would end lower")
        #expect(values.last! < BootEstimate.ceiling, "never the end")
    }

    @Test func systemdsJobsCountOnlyWithoutAHistory() {
        var estimate = BootEstimate(history: history)
        #expect(abs(estimate.value(at: 10) - 0.25) < 0.001)
        estimate.jobsDone(0.9)
        #expect(abs(estimate.value(at: 12) - 0.3) < 0.001, "the previous boot's pace, not systemd's count")
        var first = BootEstimate(history: nil)
        first.jobsDone(.nan)
        first.jobsDone(-3)
        let early = first.value(at: 6)
        #expect(abs(early - 0.95 * 6 / 21) < 0.001, "nothing done is no change: \(early)")
        first.jobsDone(7)
        #expect(abs(first.value(at: 6.25) - BootEstimate.ceiling) < 0.001, "a share past 1 is all done, never past the ceiling")
    }

    @Test func aBootLikeTheLastOneFollowsItsSteps() {
        var estimate = BootEstimate(history: history)
        #expect(abs(estimate.value(at: 10) - 0.25) < 0.001)
        estimate.step("local-fs.target", at: 10)
        #expect(abs(estimate.value(at: 20) - 0.5) < 0.001)
        estimate.step("systemd-logind.service", at: 30)
        let atLogind = estimate.value(at: 30)
        #expect(atLogind > 0.74 && atLogind < 0.8)
    }

    @Test func aStepReachedEarlyPullsTheBarForwardAndSpeedsItUp() {
        var slow = BootEstimate(history: history)
        var fast = BootEstimate(history: history)
        fast.step("systemd-logind.service", at: 15)  // reached in half the time it took last boot
        #expect(fast.value(at: 15) >= 0.75, "never behind a step seen")
        #expect(fast.value(at: 16) > slow.value(at: 16) + 0.3)
    }

    @Test func aSlowerBootSlowsTheBarButNeverStopsAtTheEndOrGoesBack() {
        var estimate = BootEstimate(history: history)
        var last = 0.0
        var values: [Double: Double] = [:]
        for second in stride(from: 1.0, through: 200, by: 1) {
            if second == 20 { estimate.step("local-fs.target", at: second) }  // twice as slow as last time
            let value = estimate.value(at: second)
            #expect(value >= last)
            last = value
            values[second] = value
        }
        #expect(last < BootEstimate.ceiling && last > BootEstimate.knee)
        #expect(values[200]! - values[100]! > 0.005, "still moving: \(values[100]!) → \(values[200]!)")
        #expect(values[30]! - values[20]! < 0.25 * 0.8, "slower than the last boot's pace once a step came late")
    }

    @Test func unknownStepsChangeNothing() {
        var estimate = BootEstimate(history: history)
        estimate.step("never-seen.service", at: 5)
        #expect(abs(estimate.value(at: 10) - 0.25) < 0.001)
    }

    @Test func theRecordKeepsFirstTimesAndEndsAtQuit() throws {
        var record = BootRecord()
        record.step("a.service", at: 2)
        record.step("b.service", at: 3)
        record.step("a.service", at: 9)
        record.step("", at: 4)
        let saved = try #require(record.history(endingAt: 12))
        #expect(saved == BootHistory(duration: 12, steps: ["a.service": 2, "b.service": 3]))
        #expect(record.history(endingAt: BootHistory.maxDuration + 1) == nil, "a boot left at a prompt is no guide")
    }

    @Test func savingReplacesTheFileWhole() throws {
        let directory = TemporaryDirectory()
        let path = directory.appending("gauge/boot-duration")
        try history.save(to: path)
        #expect(BootHistory.load(path).history == history)
        let shorter = BootHistory(duration: 12, steps: ["a": 1])
        try shorter.save(to: path)
        #expect(BootHistory.load(path).history == shorter)
        #expect((try? Syscall.lstat(path + ".new")) == nil, "no temporary file left")
    }

    /// The largest history a boot can record (every step a name of the longest, reached
    /// just before an hour) is written within the size the next boot reads, and read whole.
    @Test func theLargestRecordIsReadBackWhole() throws {
        var record = BootRecord()
        for index in 0..<(BootHistory.maxSteps + 10) {
            let digits = String(index)
            let name = digits + String(repeating: "x", count: BootHistory.maxNameBytes - digits.utf8.count)
            record.step(name, at: BootHistory.maxDuration - 0.001 - Double(index) / 1e6)
        }
        let worst = try #require(record.history(endingAt: BootHistory.maxDuration))
        #expect(worst.steps.count == BootHistory.maxSteps)
        let directory = TemporaryDirectory()
        let path = directory.appending("boot-duration")
        try worst.save(to: path)
        let size = Int(try #require(try Syscall.lstat(path)).st_size)
        #expect(size > 256 * 1024 && size <= BootHistory.maxFileBytes, "\(size) bytes")
        let loaded = BootHistory.load(path)
        #expect(loaded.problem == nil, "\(loaded.problem ?? "")")
        let read = try #require(loaded.history)
        let same = Set(read.steps.keys) == Set(worst.steps.keys)
            && read.steps.allSatisfy { abs($0.value - worst.steps[$0.key]!) <= 0.0005 }
        #expect(same, "every step read back as written (to the millisecond)")
    }

    /// A history made by hand with more steps, or longer names, than a record keeps is
    /// written only as far as the reader takes it: the earliest steps.
    @Test func theWriterKeepsToTheReadersLimits() throws {
        var steps: [String: Double] = [:]
        let padding = String(repeating: "x", count: BootHistory.maxNameBytes - 20)
        for index in 0..<(BootHistory.maxSteps * 2) { steps["unit-\(index)-\(padding)"] = Double(index) / 1000 }
        steps[String(repeating: "y", count: BootHistory.maxNameBytes + 1)] = 0
        let large = BootHistory(duration: 60, steps: steps)
        let text = large.encoded
        #expect(text.utf8.count <= BootHistory.maxFileBytes)
        let parsed = try #require(BootHistory.parse(Array(text.utf8)))
        #expect(parsed.steps.count == BootHistory.maxSteps)
        #expect(parsed.steps["unit-0-\(padding)"] == 0 && parsed.steps["unit-\(BootHistory.maxSteps - 1)-\(padding)"] != nil)
        #expect(parsed.steps["unit-\(BootHistory.maxSteps)-\(padding)"] == nil, "the latest steps are left out")
    }

    @Test func aMissingFileIsAFirstBootAndAnUnusableOneSaysWhy() throws {
        let directory = TemporaryDirectory()
        let missing = BootHistory.load(directory.appending("none"))
        #expect(missing.history == nil && missing.problem == nil)
        let fifo = directory.appending("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let refused = BootHistory.load(fifo)
        #expect(refused.history == nil)
        #expect(refused.problem?.contains("not a regular file") == true, "\(refused.problem ?? "")")
    }
}

@Suite struct BootClockTests {
    @Test func timePausedIsLeftOut() {
        var clock = BootClock()
        #expect(clock.time(at: 5) == 5)
        clock.setPaused(true, at: 6)
        clock.setPaused(true, at: 7)  // already paused: the pause began at 6
        #expect(clock.time(at: 9) == 6, "held while paused")
        clock.setPaused(false, at: 10)
        #expect(clock.time(at: 10) == 6)
        #expect(clock.time(at: 12) == 8)
        clock.setPaused(false, at: 13)  // not paused: nothing changes
        clock.setPaused(true, at: 14)
        clock.setPaused(false, at: 15.5)
        #expect(clock.time(at: 20) == 14.5, "both pauses, 4 s and 1.5 s, are left out")
    }
}
