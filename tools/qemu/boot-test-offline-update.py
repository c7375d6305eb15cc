#!/usr/bin/env python3
"""The update boot of boot-test's package-offline-update (see boot-test-offline-update.bash):
reads the checker's frames.txt (each screendump's kind and the bar's fill, on the guest's
clock) and report.log (GAUGE-STEP system-update, when system-update.target's unit started;
PK-STATUS UPTIME JSON, each change of the daemon's `gaugectl status --json`, polled 5 times a
second, with the uptime from before the poll) and prints a
line per check, PASS or FAIL, and the figures.

Usage: boot-test-offline-update.py RESULTS-DIR [--fail PACKAGE]
  --fail  the update must end in failure, the failure's message naming PACKAGE"""
import json
import re
import sys

TITLE = "Installing updates"
WORKING = re.compile(r"\b(Updating|Installing|Unpacking|Preparing) gauge-demo-[abc] 1\.1\b")


def frames(path):
    out = []
    for line in open(path, encoding="utf-8", errors="replace"):
        m = re.match(r"#(\d+) at\s+([\d.]+) s: (\S+)(?: fill (\d+)%)?", line)
        if m:
            out.append((int(m.group(1)), float(m.group(2)), m.group(3), int(m.group(4)) if m.group(4) else None))
    return out


def report(path):
    system_update, statuses = None, []
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        m = re.match(r"GAUGE-STEP system-update ([\d.]+)$", line)
        if m:
            system_update = float(m.group(1))
        m = re.match(r"PK-STATUS ([\d.]+) (\{.*\})$", line)
        if m:
            try:
                statuses.append((float(m.group(1)), json.loads(m.group(2))))
            except ValueError:
                pass
    return system_update, statuses


def check_statuses(check, statuses, updating, first, fail):
    """What the daemon said during the update: the packages on the message line, a target
    that never goes back, and how the update ended."""
    lines = sorted({s.get("message", "") for _, s in updating if s.get("state") != "failure"})
    check(all("Do not turn off the computer." in m for m in lines) and any("gauge-demo-" in m for m in lines),
          f"the message line names the packages and says not to turn off: {lines}")
    # gauged-packagekit.service (gaugectl packagekit): PackageKit's Package signals name the
    # package being worked on, the warning kept.
    working = sorted({m for m in lines if WORKING.search(m) and "Do not turn off the computer." in m})
    check(bool(working), f"the message line named a package being updated, with the warning: {working[:4]}")
    targets = [s.get("target", 0) for _, s in updating]
    check(all(b >= a for a, b in zip(targets, targets[1:])), f"the daemon's target never went back: {targets}")
    after = [s for t, s in statuses if t > first and s.get("title") != TITLE]
    end = after[0] if after else None
    print("figure the end: " + (json.dumps({k: end.get(k) for k in ("title", "state", "target", "message")}, ensure_ascii=False)
                                if end else "not sampled before the restart"))
    if fail:
        failed = [s for t, s in statuses if t > first and s.get("state") == "failure"]
        check(bool(failed) and fail in failed[0].get("message", ""),
              f"the update ended in failure naming {fail}: {failed[0].get('message') if failed else 'no failure seen'}")
        # The failure from PackageKit's ErrorCode, while the title is still the update's:
        # before pk-offline-update's pause and its restart request ("Restarting").
        early = [s for _, s in updating if s.get("state") == "failure"]
        check(bool(early) and fail in early[0].get("message", ""),
              f"the failure naming {fail} shown before the restart's request: "
              + (early[0].get("message", "") if early else "only with the restart"))
    else:
        check(end is None or end.get("state") != "failure", "the update did not end in failure")


def check_update_screens(check, shots, statuses, updating, start, first):
    """The screens from system-update.target's start to the update's end (the last poll
    that still found the updates screen: pk-offline-update asked for the restart after
    it), all the splash; those screens returned."""
    restart = max(t for t, _ in updating)
    stop = restart
    failed_at = next((t for t, s in statuses if t > first and s.get("state") == "failure"), None)
    asked = next((t for t, s in statuses if t > first and s.get("title") != TITLE), None)
    if failed_at is not None:
        # The failure's colours are no running bar: the splash is checked up to them.
        print("figure the failure first shown " + (f"{asked - failed_at:.1f} s before the restart's request"
                                                    if asked is not None and failed_at < asked else
                                                    f"with the restart's request, {failed_at - restart:.1f} s after the update's last poll"))
        stop = min(stop, failed_at)
    during = [f for f in shots if start <= f[1] < stop]
    other = [f for f in during if f[2] not in ("splash", "failure", "success")]
    check(bool(during) and not other,
          f"{len(during)} screens from system-update.target to the update's end, all the splash"
          + (f"; not: {[(f[0], f[1], f[2]) for f in other[:6]]}" if other else ""))
    return during


def check_restart(check, shots, updating):
    """The restart: the restart's own daemon (gauged-reboot.service, `--replace`) holds
    the cards open, asks the boot's daemon to quit leaving its frame and takes over, so
    the updates screen (in its end's colours) goes straight to the restart's, no console
    between (measured 5-14 screendumps, 1.7-4.6 s, while a unit quit the old daemon before
    the new one started). One black screen at most is allowed for a mode set; every other
    screen from the restart's request to the machine's reset is Gauge's."""
    restart = max(t for t, _ in updating)
    rest = [f for f in shots if f[1] >= restart]
    # The updates screen (the splash, or in its end's colours), then the restart's.
    shown = ("splash", "failure", "success")
    between = [f for f in rest if f[2] not in shown]
    print(f"figure the restart's hand-over: {len(between)} of {len(rest)} screens without the splash"
          + (f", {between[-1][1] - between[0][1] + 0.33:.1f} s ({between[0][2]})" if between else ""))
    check(bool(rest) and len(between) <= 1 and all(f[2] == "black" for f in between),
          f"from the update's end to the machine's reset no console ({[(f[0], f[2]) for f in between]})")


def check_update_bar(check, shots, during, start, first):
    """The update's bar starts where the boot's ends: at 0, animated down from the boot's
    value (the daemon's status is sampled once a second), so it starts at the lowest fill
    shown around the title's first status; from there it never goes back."""
    barred = [f for f in during if f[3] is not None]
    window = [f for f in barred if first - 1.5 <= f[1] <= first + 2.0]
    low = min((f[3] for f in window), default=0)
    begin = max((f[0] for f in window if f[3] == low), default=None)
    shown = [f for f in barred if begin is not None and f[0] >= begin]
    fills = [f[3] for f in shown]
    back = [(a, b) for a, b in zip(shown, shown[1:]) if b[3] < a[3] - 1]
    check(bool(fills) and not back,
          f"the bar never went back on screen over {len(fills)} screens"
          + (f"; back at {[(a[0], a[3], b[0], b[3]) for a, b in back[:4]]}" if back else ""))
    print(f"figure sampled fill (%): {fills[::max(1, len(fills) // 24)]}")
    shot = next((f for f in shots if f[1] >= first), None)
    print(f"figure system-update.target to the daemon's '{TITLE}': {first - start:.2f} s; "
          f"to the first screen after it: {(shot[1] - start) if shot else float('nan'):.2f} s; "
          f"the update screen for {(during[-1][1] - first) if during else 0:.1f} s")


def main():
    results = sys.argv[1]
    fail = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--fail" else None
    checks = []

    def check(ok, text):
        checks.append(ok)
        print(f"{'PASS' if ok else 'FAIL'} {text}")

    shots = frames(f"{results}/frames.txt")
    start, statuses = report(f"{results}/report.log")
    check(start is not None, f"system-update.target started ({start} s)")
    updating = [(t, s) for t, s in statuses if s.get("title") == TITLE]
    check(bool(updating), f"the daemon's title was '{TITLE}' ({len(updating)} of {len(statuses)} statuses)")
    if start is None or not updating:
        print("FAIL no updates screen to check")
        return 1
    first = updating[0][0]
    check_statuses(check, statuses, updating, first, fail)
    during = check_update_screens(check, shots, statuses, updating, start, first)
    check_restart(check, shots, updating)
    check_update_bar(check, shots, during, start, first)
    print("PASS" if all(checks) else "FAIL")
    return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
