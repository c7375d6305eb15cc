#!/usr/bin/env python3
"""Boots one tools/qemu/vm-test configuration under QEMU and checks the screens.

The guest's init prints `GAUGE-STEP <name>` on the first serial port and waits for a line
on the second; this script watches the serial log, takes the screen with the monitor's
`screendump` (PPM), checks it against the default theme's layout and colours, and then
answers. Failed checks keep the screens (PPM and PNG) and the serial log under --results.
Standard library only.
"""
import argparse
import os
import re
import shutil
import sys
import time

from qemu import BOARDS, Qemu, SerialLog
from vmscreen import bar_rect, is_black, is_grey, is_orange, swift_round


class Checker:
    def __init__(self, name):
        self.name = name
        self.failures = []

    def expect(self, ok, what):
        if not ok:
            self.failures.append(what)
        return ok

    def share(self, img, rect, test):
        x0, y0, w, h = rect
        hits = total = 0
        for y in range(y0, y0 + h):
            for x in range(x0, x0 + w):
                total += 1
                hits += test(img.at(x, y))
        return hits / total if total else 1.0

    def background(self, img, step, scale=1):
        """Everything outside the bar (and a 4 px margin for its shadow) is black:
        background colour right, and no console text over the splash."""
        bx, by, bw, bh = bar_rect(img.width, img.height, scale)
        bad = []
        for y in range(0, img.height, 2):
            inside_rows = by - 4 <= y < by + bh + 4
            for x in range(0, img.width, 2):
                if inside_rows and bx - 4 <= x < bx + bw + 4:
                    continue
                if not is_black(img.at(x, y)):
                    bad.append((x, y))
        self.expect(not bad, f"{step}: {len(bad)} non-black pixels outside the bar (console text?), first at {bad[:3]}")

    def bar(self, img, step, percent, scale=1):
        bx, by, bw, bh = bar_rect(img.width, img.height, scale)
        fw = swift_round(bw * percent / 100)
        mid = (by + 6, 12)
        if fw > 100:
            share = self.share(img, (bx + 14, mid[0], fw - 90, mid[1]), is_orange)
            self.expect(share >= 0.95, f"{step}: fill at {bx + 14}..{bx + fw - 76} only {share:.0%} orange")
            # Gradient: the top of the fill lighter than its bottom.
            cx = bx + fw // 3
            top = sum(img.at(cx, by + 4)) + sum(img.at(cx + 4, by + 4))
            bottom = sum(img.at(cx, by + bh - 5)) + sum(img.at(cx + 4, by + bh - 5))
            self.expect(top != bottom, f"{step}: fill has no vertical gradient at x={cx}")
            # Label: dark glyph pixels (black at 60%) near the right end of the fill.
            dark = self.share(img, (bx + fw - 60 * scale, by + 4, 54 * scale, bh - 8), lambda p: p[0] < 130)
            self.expect(dark >= 0.05, f"{step}: no label in the fill's right end ({dark:.1%} dark)")
        if bw - fw > 40:
            start = bx + fw + (50 if fw < 40 else 12)
            share = self.share(img, (start, mid[0], bx + bw - 14 - start, mid[1]), is_grey)
            self.expect(share >= 0.95, f"{step}: track at {start}..{bx + bw - 14} only {share:.0%} grey")
        if fw < 40:
            # Label beside an empty fill, on the track.
            dark = self.share(img, (bx + 4, by + 4, 50 * scale, bh - 8), lambda p: not is_grey(p))
            self.expect(dark >= 0.05, f"{step}: no label at the bar's left end ({dark:.1%} not grey)")

    def fill_height(self, img, step, percent, scale):
        """The fill is as tall as the bar at `scale` (24 px at scale 1, less its rounded
        lighter and darker edges): the orange run in the fill's column a third along."""
        bx, by, bw, bh = bar_rect(img.width, img.height, scale)
        x = bx + swift_round(bw * percent / 100) // 3
        run = sum(1 for y in range(max(0, by - bh), min(img.height, by + 2 * bh)) if is_orange(img.at(x, y)))
        self.expect(abs(run - bh) <= bh // 8 + 1, f"{step}: the fill is {run} px tall at x={x}, expected {bh} (scale {scale})")

    def stripes_move(self, a, b, step, percent, scale=1):
        """Two screens 0.5 s apart differ, and only inside the fill."""
        bx, by, bw, bh = bar_rect(a.width, a.height, scale)
        fw = swift_round(bw * percent / 100)
        inside = outside = 0
        for y in range(a.height):
            row_a = a.pixels[y * a.width * 3:(y + 1) * a.width * 3]
            row_b = b.pixels[y * a.width * 3:(y + 1) * a.width * 3]
            if row_a == row_b:
                continue
            for x in range(a.width):
                if row_a[x * 3:x * 3 + 3] != row_b[x * 3:x * 3 + 3]:
                    if bx <= x < bx + fw and by <= y < by + bh:
                        inside += 1
                    else:
                        outside += 1
        self.expect(inside > 50, f"{step}: stripes did not move ({inside} pixels changed in the fill)")
        self.expect(outside == 0, f"{step}: {outside} pixels changed outside the fill")

    def console_back(self, img, step):
        bx, by, bw, bh = bar_rect(img.width, img.height)
        orange = self.share(img, (bx, by, bw, bh), is_orange)
        self.expect(orange < 0.05, f"{step}: the bar is still on screen ({orange:.0%} orange)")
        lit = sum(1 for y in range(0, img.height, 2) for x in range(0, img.width, 2) if not is_black(img.at(x, y)))
        self.expect(lit > 200, f"{step}: no console text on screen ({lit} lit pixels sampled)")


# The display manager's picture (tools/qemu/vm-drm-client.c draws 0x2040c0).
CLIENT_COLOUR = (0x20, 0x40, 0xC0)


def client_share(img):
    """The share of the screen in the display manager's colour."""
    return img.pixels.count(bytes(CLIENT_COLOUR)) / (img.width * img.height)


def count_bullets(img):
    """The orange dots in the screen's row that has the most, the bar's own rows left out:
    the question's field, wherever the layout puts it."""
    bx, by, bw, bh = bar_rect(img.width, img.height)
    best = 0
    for y in range(img.height):
        if by - bh <= y < by + 2 * bh:
            continue
        runs, inside = 0, False
        for x in range(bx, bx + bw):
            orange = is_orange(img.at(x, y))
            if orange and not inside:
                runs += 1
            inside = orange
        best = max(best, runs)
    return best


def details_text(img):
    """Pixels of text in the message colour (0.8 = 204 grey, lighter or darker at glyph
    edges) in the details view's place: the top left of the screen, above where the
    title or logo would be."""
    bx, by, bw, bh = bar_rect(img.width, img.height)
    def grey_text(p):
        return max(p) - min(p) <= 4 and 150 <= p[0] <= 215
    return sum(1 for y in range(0, by // 2) for x in range(0, img.width // 2) if grey_text(img.at(x, y)))


def message_text(img):
    """Light pixels in the message's place: the band under the bar, across the screen."""
    bx, by, bw, bh = bar_rect(img.width, img.height)
    return sum(1 for y in range(by + bh + 4, min(img.height, by + bh + 48))
               for x in range(0, img.width, 2) if min(img.at(x, y)) >= 120)


def logo_pixels(img):
    """Pixels that are not the background above the bar, where the logo is."""
    bx, by, bw, bh = bar_rect(img.width, img.height)
    return sum(1 for y in range(0, by - 8, 2) for x in range(0, img.width, 2) if not is_black(img.at(x, y)))


def fill_share(img):
    """How much of the bar is filled: the orange pixels along its middle row."""
    bx, by, bw, bh = bar_rect(img.width, img.height)
    return sum(1 for x in range(bx, bx + bw) if is_orange(img.at(x, by + bh // 2))) / bw


def check_jobs_step(check, img, step):
    """`sd-jobs` (buildroot-systemd-*): the screen as systemd's jobs left it, before any
    script wrote progress: the boot estimate gauged-jobs.service feeds has filled part
    of the bar (still easing towards systemd's share, so a share rather than an exact
    value; the guest checks the target), the logo above it, no message under it."""
    share = fill_share(img)
    check.expect(0.03 <= share < 0.95, f"{step}: {share:.0%} of the bar filled by systemd's jobs")
    logo = logo_pixels(img)
    check.expect(logo >= 200, f"{step}: {logo} pixels of logo above the bar")
    text = message_text(img)
    check.expect(text == 0, f"{step}: {text} light pixels under the bar before any MSG")
    print(f"  [{check.name}] {step}: {share:.1%} of the bar filled")


def check_rc_step(check, img, step):
    """A step of the rc-style script (buildroot-*): `rcN` after psplash-write "PROGRESS N",
    `rcN-msg` once a "MSG" was written too (the message stays, as psplash's does). The bar
    at N %, the theme's logo file above it (the root's /usr/share/gauge/logo.png), and
    text under the bar once a MSG was written, none before."""
    percent = int(step[2:].split("-")[0])
    check.bar(img, step, percent)
    logo = logo_pixels(img)
    check.expect(logo >= 200, f"{step}: {logo} pixels of logo above the bar")
    text = message_text(img)
    if step.endswith("-msg"):
        check.expect(text >= 40, f"{step}: {text} pixels of the message under the bar")
    else:
        check.expect(text == 0, f"{step}: {text} light pixels under the bar before any MSG")


class VM:
    def __init__(self, args, work):
        self.work = work
        self.upright = args.upright
        # (device, head, scale) for each head checked; none: the one screen at scale 1.
        self.heads = [(d, int(h), int(s)) for d, h, s in (spec.split(":") for spec in args.head)]
        self.serial = os.path.join(work, "serial.log")
        # The answers go on the second serial port, or a virtio console (hvc0) on a board
        # with one.
        self.qemu = Qemu(work, args.kernel, args.initrd, args.append, board=args.machine, serial=[self.serial],
                         control=True, options=args.qemu)
        self.monitor, self.control = self.qemu.monitor, self.qemu.control
        self.log = SerialLog(self.serial)

    def screendump(self, path):
        # As the person holding a device with a panel mounted sideways sees it.
        if self.heads:
            device, head, _ = self.heads[0]
            return self.monitor.screendump(path, device, head).turned(self.upright)
        return self.monitor.screendump(path).turned(self.upright)

    def screens(self, path):
        """(image, scale) for every head checked; the first is `screendump`'s."""
        if not self.heads:
            return [(self.screendump(path), 1)]
        return [(self.monitor.screendump(path[:-4] + f"-{device}-{head}.ppm", device, head).turned(self.upright), scale)
                for device, head, scale in self.heads]

    def lines(self):
        return self.log.lines()

    def answer(self):
        self.control.sendall(b"go\n")

    def stop(self):
        self.qemu.stop()


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--kernel", required=True)
    parser.add_argument("--initrd", required=True)
    parser.add_argument("--append", required=True)
    parser.add_argument("--expect", required=True, help='"drm XRGB8888": display kind and format in the log')
    parser.add_argument("--machine", default="pc", choices=sorted(BOARDS),
                        help="the board (tools/qemu/qemu.py's BOARDS): pc: qemu-system-x86_64; "
                             "virt-arm64: qemu-system-aarch64 -M virt; virt-armhf: qemu-system-arm -M virt; "
                             "vexpress-a9: qemu-system-arm -M vexpress-a9")
    parser.add_argument("--work", required=True)
    parser.add_argument("--results", required=True)
    parser.add_argument("--timeout", type=float, default=180)
    parser.add_argument("--expect-log", action="append", default=[], help="text some line of the daemon's log holds")
    parser.add_argument("--early-splash", action="store_true", help="the splash is up at 30%% before the late modules load")
    parser.add_argument("--early-heads", type=int, default=0,
                        help="with --early-splash: only this many heads (the first) show it before the late modules "
                             "load, the others come with them (0: every head)")
    parser.add_argument("--keys", default="s e c r e t",
                        help="the monitor's sendkey names typed at the password question")
    parser.add_argument("--typed", default="secret", help="the text those keys type in the guest's layout")
    parser.add_argument("--upright", type=int, default=0, choices=[0, 90, 180, 270],
                        help="turn each screendump clockwise by this much before checking: the panel is mounted turned")
    parser.add_argument("--head", action="append", default=[], metavar="DEVICE:HEAD:SCALE",
                        help="check this head of this display device (screendump's device and head), drawn at "
                             "this scale; the splash steps check every head, the others the first")
    parser.add_argument("--steps", help="the steps the guest must announce, comma-separated (default: the init's)")
    parser.add_argument("qemu", nargs="*")
    return parser.parse_args()


class Run:
    """One guest's run: the guest's lines read as they come, each step's screens checked
    (a method per step), then what the whole run must show."""

    def __init__(self, args):
        self.args, self.name = args, args.name
        self.check = Checker(args.name)
        self.started = time.time()
        self.vm = VM(args, args.work)
        self.shots = []
        self.steps = []
        self.summary = None
        self.logged = []
        # Screens sampled between the "early" and "moved" steps: splash or not.
        self.sampling = None
        # Screens sampled between the "deactivated" and "client" steps: what each was.
        self.handover = None
        self.done = False
        self.answers = []
        self.asked = None

    def follow(self):
        """Reads the guest's lines until it is done (or QEMU exits, or the time is up),
        sampling the screen while nothing comes."""
        args, check, vm = self.args, self.check, self.vm
        while not self.done:
            if time.time() - self.started > args.timeout:
                check.expect(False, f"timed out after {args.timeout:.0f} s (steps seen: {self.steps})")
                break
            new = vm.lines()
            if not new and self.handover is not None:
                self.sample_handover()
                continue
            if not new and self.sampling is not None:
                self.sample_driver_load()
                continue
            if not new:
                if not vm.qemu.running():
                    new = vm.lines()
                    if not new:
                        check.expect(False, f"QEMU exited early (steps seen: {self.steps})")
                        break
                time.sleep(0.05)
                continue
            for line in new:
                self.read(line)

    def sample_handover(self):
        """From deactivate to the display manager's first frame: nothing else may show."""
        shot = self.vm.screendump(os.path.join(self.args.work, f"handover-{len(self.handover)}.ppm"))
        bx, by, bw, bh = bar_rect(shot.width, shot.height)
        if client_share(shot) >= 0.99:
            seen = "client"
        elif self.check.share(shot, (bx + 14, by + 6, bw - 90, 12), is_orange) >= 0.9:
            seen = "splash"
        else:
            seen = "other"
            self.shots.append(shot)
        self.handover.append((time.time(), seen))

    def sample_driver_load(self):
        """While the driver loads: is the splash (the bar's fill at 30 %) on screen?"""
        shot = self.vm.screendump(os.path.join(self.args.work, f"handover-{len(self.sampling)}.ppm"))
        bx, by, bw, bh = bar_rect(shot.width, shot.height)
        fw = swift_round(bw * 0.3)
        self.sampling.append((time.time(), self.check.share(shot, (bx + 14, by + 6, fw - 28, 12), is_orange) >= 0.9))

    def read(self, line):
        """One line from the guest: its log, notes, answers, end, and steps."""
        check = self.check
        if line.startswith("GAUGE-INFO "):
            print(f"  [{self.name}] {line}")
        if line.startswith("GAUGE-LOG ") or line.startswith("GAUGE-NOTE "):
            print(f"  [{self.name}] {line}")
            # A note is something the guest could not do: the run fails.
            check.expect(not line.startswith("GAUGE-NOTE "), line)
            # The Embedded Swift build's placeholder for a value it cannot print.
            check.expect("cannot print value" not in line, line)
            if line.startswith("GAUGE-LOG "):
                self.logged.append(line)
            # The last display named is the one the daemon ended up on.
            if "display: " in line:
                self.summary = line.split("display: ", 1)[1]
        if line.startswith("GAUGE-ANSWER "):
            self.answers.append(line)
        if line.startswith("GAUGE-DONE"):
            self.done = True
        if line.startswith("GAUGE-STEP "):
            self.step(line.split()[1])

    def step(self, step):
        """One step of the guest's: its screens checked, then the guest answered."""
        self.steps.append(step)
        if self.sampling is not None:
            self.report_driver_load()
            self.sampling = None
        taken = time.time()
        screens = self.vm.screens(os.path.join(self.args.work, f"{step}.ppm"))
        shot = screens[0][0]
        self.shots += [image for image, _ in screens]
        if step == "early" and not self.args.early_splash:
            pass
        elif step == "early" and self.args.early_heads:
            self.check_splash(step, screens[:self.args.early_heads], taken)
        elif step.startswith("p") or step in ("shown", "moved", "early"):
            self.check_splash(step, screens, taken)
        elif step.startswith("rc"):
            check_rc_step(self.check, shot, step)
        elif step == "sd-jobs":
            check_jobs_step(self.check, shot, step)
        elif step in ("after-quit", "hidden"):
            self.check.console_back(shot, step)
        elif step == "ask":
            self.check_ask(step)
        elif step == "typed":
            self.check_typed()
        elif step == "details":
            self.check_details(shot)
        elif step == "deactivated":
            self.check_deactivated(shot, step)
        elif step in ("client", "handed-over"):
            self.check_client(shot, step)
        elif step == "retained":
            self.check_retained(shot, step)
        self.vm.answer()
        if step == "early" and self.args.early_splash:
            self.sampling = []
        if step == "deactivated":
            self.handover = []
        elif step == "client" and self.handover is not None:
            self.check_handover()
            self.handover = None

    def report_driver_load(self):
        """The longest stretch of sampled screens without the splash (printed, not
        checked: it depends on how fast the host emulates the driver's start)."""
        sampling = self.sampling
        longest, since = 0.0, None
        for t, splash in sampling:
            if not splash and since is None:
                since = t
            elif splash and since is not None:
                longest, since = max(longest, t - since), None
        if since is not None:
            longest = max(longest, sampling[-1][0] - since)
        missing = sum(1 for _, splash in sampling if not splash)
        print(f"  [{self.name}] while the driver loaded: {missing} of {len(sampling)} screens sampled over "
              f"{sampling[-1][0] - sampling[0][0]:.2f} s lacked the splash; longest stretch {longest:.2f} s")

    def check_splash(self, step, screens, taken):
        """The splash at the step's value on every head, and its stripes moving."""
        check = self.check
        percent = {"shown": 50, "moved": 30, "early": 30}.get(step) or int(step[1:])
        for index, (image, scale) in enumerate(screens):
            where = step if len(screens) == 1 else f"{step} head {index} ({image.width}x{image.height})"
            check.background(image, where, scale)
            check.bar(image, where, percent, scale)
            if len(screens) > 1 and percent > 0:
                check.fill_height(image, where, percent, scale)
        if percent > 0:
            # 0.5 s from the start of one dump to the next: 5/8 of a stripe
            # period (0.8 s), so the stripes must have moved.
            time.sleep(max(0.0, taken + 0.5 - time.time()))
            later = self.vm.screens(os.path.join(self.args.work, f"{step}-later.ppm"))
            self.shots += [image for image, _ in later]
            for index, ((image, scale), (after, _)) in enumerate(zip(screens, later)):
                where = step if len(screens) == 1 else f"{step} head {index}"
                check.stripes_move(image, after, where, percent, scale)

    def bullets_after(self, keys, want, name):
        """Types `keys`, then waits up to 30 s for `want` bullets on the screen; the last
        screen and the bullets on it."""
        for key in keys:
            self.vm.monitor.sendkey(key)
        deadline, bullets = time.time() + 30, 0
        while time.time() < deadline:
            shot = self.vm.screendump(os.path.join(self.args.work, name))
            bullets = count_bullets(shot)
            if bullets == want:
                break
            time.sleep(0.2)
        self.shots.append(shot)
        return shot, bullets

    def check_ask(self, step):
        """One bullet per key under the bar, then Enter."""
        typed = self.args.typed
        shot, bullets = self.bullets_after(self.args.keys.split(), len(typed), "ask-typed.ppm")
        self.check.expect(bullets == len(typed), f"ask: {bullets} bullets on screen for {len(typed)} keys")
        self.check.bar(shot, step, 100)
        self.vm.monitor.sendkey("ret")
        self.asked = typed

    def check_typed(self):
        """A question the splash is about to be taken from: three keys typed on it, shown
        as three bullets (then the guest hides or deactivates)."""
        _, bullets = self.bullets_after(("a", "b", "c"), 3, "typed.ppm")
        self.check.expect(bullets == 3, f"typed: {bullets} bullets on screen for 3 keys")

    def check_details(self, shot):
        """Nothing asked: Escape shows the messages so far at the top, Escape again takes
        them away; the bar stays."""
        check = self.check
        check.expect(details_text(shot) == 0, "details: text at the top before Escape")
        for want, what in ((True, "shown"), (False, "hidden")):
            self.vm.monitor.sendkey("esc")
            deadline = time.time() + 30
            while time.time() < deadline:
                shot = self.vm.screendump(os.path.join(self.args.work, f"details-{what}.ppm"))
                if (details_text(shot) > 100) == want:
                    break
                time.sleep(0.2)
            self.shots.append(shot)
            check.expect((details_text(shot) > 100) == want,
                         f"details: {details_text(shot)} pixels of text at the top after Escape, expected {what}")
            check.bar(shot, f"details-{what}", 100)

    def check_deactivated(self, shot, step):
        """The display manager holds the card but has not drawn: the splash's last frame
        stays (no black, no console)."""
        self.check.background(shot, step)
        self.check.bar(shot, step, 100)

    def check_client(self, shot, step):
        """The display manager's picture, whole, and after quit --retain-splash still (the
        console did not come back over it)."""
        share = client_share(shot)
        self.check.expect(share >= 0.99, f"{step}: {share:.1%} of the screen is the display manager's colour")

    def check_retained(self, shot, step):
        """gauged has exited: the 100 % frame stays, still and untouched by the console
        text written since."""
        self.check.background(shot, step)
        self.check.bar(shot, step, 100)

    def check_handover(self):
        """Every screen between the splash's last frame and the client's first."""
        handover = self.handover
        others = [t for t, kind in handover if kind not in ("splash", "client")]
        print(f"  [{self.name}] hand-over: {len(handover)} screens sampled, "
              f"{sum(1 for _, k in handover if k == 'splash')} the splash, "
              f"{sum(1 for _, k in handover if k == 'client')} the client's, {len(others)} neither")
        self.check.expect(handover and not others,
                          f"hand-over: {len(others)} of {len(handover)} screens were neither the splash nor the client's")

    def check_display(self):
        """The display the daemon logged last, and the log lines asked for."""
        args, check, summary = self.args, self.check, self.summary
        kind, fmt, *extra = args.expect.split()
        if summary is None:
            check.expect(False, "the daemon logged no display")
        else:
            check.expect(summary.startswith(kind) and f" {fmt} " in summary + " "
                         and all(word in summary for word in extra),
                         f"display is \"{summary}\", expected {args.expect}")
        for text in args.expect_log:
            check.expect(any(text in line for line in self.logged), f"the daemon's log has no line with \"{text}\"")

    def taken_by(self):
        """The command that takes a question from the splash: root's hide-splash where no
        VT can ask it (keys from input devices), a display manager's deactivate; or None."""
        append = self.args.append
        manager = "gauge.handover=1" in append
        retained = "gauge.quit=retain" in append
        return ("deactivate" if manager else "quit --retain-splash" if retained
                else "hide-splash" if "gauge.keys=input" in append else None)

    def check_steps(self):
        """The steps the guest went through, in order, for its kernel command line."""
        append = self.args.append
        last = ("retained" if "gauge.quit=retain" in append
                else "handed-over" if "gauge.handover=1" in append else "after-quit")
        first = ["early", "moved"] if "gauge.late-modules=" in append else []
        # Escape's details view is read from the VT only (input devices are read only while
        # something is asked).
        details = [] if "gauge.keys=input" in append else ["details"]
        manager = "gauge.handover=1" in append
        retained = "gauge.quit=retain" in append
        ask = (["typed", "deactivated", "client"] if manager else ["typed"] if retained
               else ["ask"] + details + (["typed"] if self.taken_by() else []) if "gauge.ask=1" in append
               else ["details"] if "gauge.escape=1" in append else [])
        expected = first + ["p0", "p50", "hidden", "shown", "p100"] + ask + [last]
        if self.args.steps:
            expected = self.args.steps.split(",")
        self.check.expect(self.steps == expected, f"steps seen: {self.steps}")

    def check_answers(self):
        """The asker told at once: no answer (Plymouth's client exits 1), within a second
        of the command that took the splash away."""
        if "gauge.ask=1" not in self.args.append:
            return
        answers, asked, check, taken = self.answers, self.asked, self.check, self.taken_by()
        manager = "gauge.handover=1" in self.args.append
        retained = "gauge.quit=retain" in self.args.append
        told = [re.fullmatch(r"GAUGE-ANSWER \[\] status (\d+) after (.+) in (\d+) ms", a) for a in answers]
        wanted = ([] if manager or retained else [f"GAUGE-ANSWER [{asked}] status 0"])
        got = answers[:len(wanted)]
        check.expect(got == wanted and (taken is None) == (len(answers) == len(wanted)),
                     f"the asker printed {answers}, typed {asked}")
        if taken is not None and len(answers) == len(wanted) + 1:
            m = told[-1]
            check.expect(m is not None and m.group(1) != "0" and m.group(2) == taken and int(m.group(3)) < 1000,
                         f"after {taken} the asker is told no answer within 1 s: {answers[-1]}")
            if m is not None:
                print(f"  [{self.name}] {taken} while asked: the asker told in {m.group(3)} ms (status {m.group(1)})")

    def report(self):
        """The verdict: on failure the screens and the serial log kept under --results."""
        args, shots = self.args, self.shots
        elapsed = time.time() - self.started
        if self.check.failures:
            os.makedirs(args.results, exist_ok=True)
            for shot in shots:
                base = os.path.join(args.results, os.path.basename(shot.path)[:-4])
                shutil.copy(shot.path, base + ".ppm")
                shot.save_png(base + ".png")
            shutil.copy(self.vm.serial, os.path.join(args.results, "serial.log"))
            for failure in self.check.failures:
                print(f"  [{self.name}] FAIL {failure}")
            print(f"  [{self.name}] failed after {elapsed:.1f} s; screens in {args.results}")
            return 1
        size = f"{shots[0].width}x{shots[0].height}" if shots else "?"
        # gauged's own figure: exec -> its first frame on the device.
        first = next((line.split("first frame on ", 1)[1] for line in self.logged if "first frame on " in line), None)
        print(f"  [{self.name}] passed in {elapsed:.1f} s ({size}, {self.summary}){'; ' + first if first else ''}")
        if first:
            with open(os.path.join(args.work, "first-frame"), "w") as out:
                out.write(first.split(" ms after exec", 1)[0].rsplit(" ", 1)[-1] + "\n")
        return 0


def main():
    args = parse_args()
    os.makedirs(args.work, exist_ok=True)
    run = Run(args)
    try:
        run.follow()
        run.check_display()
        run.check_steps()
        run.check_answers()
    finally:
        run.vm.stop()
    return run.report()


if __name__ == "__main__":
    sys.exit(main())
