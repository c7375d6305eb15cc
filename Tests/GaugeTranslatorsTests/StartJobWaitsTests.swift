import GaugeTranslators
import Testing

@Suite struct StartJobWaitsTests {
    private let second: UInt64 = 1_000_000_000

    private func job(_ id: UInt32, _ state: String, type: String = "start") -> StartJobWaits.ListedJob {
        StartJobWaits.ListedJob(id: id, unit: "unit\(id).service", type: type, state: state, unitPath: "/u/\(id)")
    }

    @Test func durationsReadAsSystemdSaysThem() {
        #expect(StartJobWaits.duration(0) == "0 s")
        #expect(StartJobWaits.duration(45.9) == "45 s")
        #expect(StartJobWaits.duration(90) == "1 min 30 s")
        #expect(StartJobWaits.duration(120) == "2 min")
        #expect(StartJobWaits.duration(3903) == "1 h 5 min 3 s")
        #expect(StartJobWaits.duration(-3) == "0 s")
        #expect(
            StartJobWaits.message(description: "/dev/disk/by-uuid/1234", waited: 65, limit: 90)
                == "Waiting for /dev/disk/by-uuid/1234 (1 min 5 s of 1 min 30 s)")
        #expect(StartJobWaits.message(description: "Foo", waited: 61, limit: nil) == "Waiting for Foo (1 min 1 s)")
    }

    @Test func listJobsTextParsesAndSkipsWhatIsNotALine() {
        let jobs = StartJobWaits.ListedJob.parse("7\tdev-sda.device\tstart\trunning\t/u/7\nnot a job\n8\ta\tstop\twaiting\t/u/8\n")
        #expect(jobs == [
            StartJobWaits.ListedJob(id: 7, unit: "dev-sda.device", type: "start", state: "running", unitPath: "/u/7"),
            StartJobWaits.ListedJob(id: 8, unit: "a", type: "stop", state: "waiting", unitPath: "/u/8"),
        ])
    }

    /// Nothing is looked at before the oldest job reaches the notice; then only a running
    /// start job is named, the oldest first, looked at again each second while one is;
    /// a job that waited for others counts from when it began to run.
    @Test func onlyARunningStartJobPastTheNoticeIsNamed() {
        var waits = StartJobWaits(noticeAfter: 60)
        waits.listed([job(1, "running"), job(2, "waiting")], createdBy: 10 * second)
        waits.added(3, at: 20 * second)
        #expect(waits.nextCheck() == 70 * second)
        let now = 70 * second
        let overdue = waits.overdue([job(3, "running"), job(2, "waiting"), job(1, "running")], at: now)
        #expect(overdue.map(\.id) == [1], "job 3 is 50 s old, job 2 only waits")
        #expect(waits.oldest(of: overdue, at: now)?.id == 1)
        waits.show(1, at: now)
        #expect(waits.waited(1, at: now) == 60)
        #expect(waits.nextCheck() == 71 * second)
        // Job 1 ends: the message goes; job 2, which waited until now, began at 70 s at the
        // earliest and job 3 at 20 s.
        let removedShown = waits.removed(1)
        #expect(removedShown)
        #expect(waits.nextCheck() == 80 * second)
        let later = waits.overdue([job(2, "running"), job(3, "running")], at: 80 * second)
        #expect(later.map(\.id) == [3])
        // Job 3's unit began to run at 30 s (it waited before): 50 s, not overdue yet.
        waits.began(3, at: 30 * second)
        #expect(waits.oldest(of: later, at: 80 * second) == nil)
        waits.show(nil, at: 80 * second)
        #expect(waits.nextCheck() == 90 * second, "the next look when job 3 reaches the notice, not each second")
        let removedOther = waits.removed(3)
        #expect(!removedOther, "not the one shown")
    }

    @Test func aStopJobGaugesOwnUnitsOrNoNoticeAreNeverNamed() {
        var waits = StartJobWaits(noticeAfter: 1)
        let failureScreen = StartJobWaits.ListedJob(
            id: 2, unit: "gauged-boot-failed@emergency.service", type: "start", state: "running", unitPath: "/u/2")
        waits.listed([job(1, "running", type: "stop"), failureScreen], createdBy: 0)
        #expect(waits.overdue([job(1, "running", type: "stop"), failureScreen], at: 5 * second).isEmpty)
        #expect(StartJobWaits.endsTheBoot("emergency.target") && StartJobWaits.endsTheBoot("rescue.target"))
        #expect(StartJobWaits.endsTheBoot("dracut-emergency.service"), "dracut's systemd initrd gives up")
        #expect(!StartJobWaits.endsTheBoot("local-fs.target") && !StartJobWaits.endsTheBoot("emergency.service"))
        let never = StartJobWaits(noticeAfter: 0)
        #expect(never.nextCheck() == nil)
    }

    /// Only what systemd sends as a step (services, mounts, swaps) is described, never
    /// one of Gauge's own units.
    @Test func onlySystemdsStepsAreDescribed() {
        for unit in ["systemd-journald.service", "boot.mount", "dev-sda2.swap"] { #expect(StartJobWaits.isStep(unit), "\(unit)") }
        for unit in ["local-fs.target", "dev-sda.device", "dbus.socket", "gauged.service", "gauged-waits.service"] {
            #expect(!StartJobWaits.isStep(unit), "\(unit)")
        }
    }

    @Test func gaugesHandlerNamesTheUnitItHandles() {
        #expect(StartJobWaits.failedUnit(handledBy: "gauged-unit-failed@example.service.service") == "example.service")
        #expect(StartJobWaits.failedUnit(handledBy: "gauged-unit-failed@data.mount.service") == "data.mount")
        #expect(StartJobWaits.failedUnit(handledBy: "gauged-unit-failed@.service") == nil)
        #expect(StartJobWaits.failedUnit(handledBy: "gauged-boot-failed@emergency.service") == nil)
        #expect(StartJobWaits.failedUnit(handledBy: "example.service") == nil)
    }
}
