#!/usr/bin/env python3
"""Boots one tools/qemu/boot-test configuration under QEMU, samples the screen from power-on to
power-off and checks the boot splash against what the guest reports on ttyS1.

The screen is taken with the monitor's `screendump` ten times a second until the first
splash frame (and on a boot made to fail, its failure screen), then about three times a
second. Each frame is classified by its pixels (default theme,
Sources/GaugeRender/Layout.swift: an orange fill on a grey track, centred in the lower
third): `splash` (the bar, nothing else above the logo), `text-over-splash` (the bar with
console text above it), `failure` and `success` (the bar in the failure or success
colour), `black`, or `console` (anything else lit: firmware, kernel or login text). The bar's value is the
fill's right end (running or begin colour) found in the bar's middle rows.

The guest's test units print lines on ttyS1 that carry its uptime (`GAUGE-STEP name
UPTIME`, `GAUGE-PROBE uptime UPTIME`): they map host time onto the guest's monotonic
clock, so frames line up with the journal (`journalctl -o short-monotonic`). Frames,
figures and failures are written under --results (PNG of every frame the checks name).

With --ask-passphrase the boot asks for an encrypted volume's passphrase on the splash:
once a frame shows the question's field (empty), the passphrase is typed with the
monitor's `sendkey`, and Enter once the field holds one bullet per key.

With --root-passphrase the root file system is encrypted and unlocked in the initramfs:
--question-on says where the question must show. `console`: once the console replaces
the splash (the daemon gives it the screen) and its text, read with the console's font,
ends in the prompt, a wrong passphrase and Enter are typed; once the retry's prompt is
on screen, the right one. `splash`: the same into the splash's field, each once the field
shows empty. Neither may ever be echoed, logged or shown.
Standard library only.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

from qemu import Qemu, SerialLog
from vmscreen import ConsoleFont, Image, bar_rect, is_grey, is_orange, swift_round

INTERVAL = 0.33       # seconds between screendumps
# A DRM driver's registration in the kernel's log; its name is the group.
DRM_INITIALIZED = r"\[drm\] Initialized (\S+)"
HANDOVER_LIMIT = 2.0  # seconds from a DRM driver replacing efifb to the splash on its card (TCG)
EARLY_INTERVAL = 0.1  # until the first splash frame, and a failing boot's failure screen (figures)
# The power-off splash within a frame or two of sampling after what no screen can skip
# (section 7): the first 12 screendumps after `systemctl poweroff` (4 s). Debian 12 took
# 1.14-1.37 s (frames 4-5) booted alone, and 2.20-3.60 s (frames 7-11) at the end of the
# whole test command, where gauged took 0.85-2.78 s from exec to its first frame against
# 0.35-0.47 s alone (the same executable: most likely the time went in reading it, its
# libraries and fonts from the guest's disk, whose image the host no longer held in memory;
# the journal's longest silence before that frame was gauged's own start, 1.99 s). That the
# screen waits for nothing is checked apart: its unit starts before the getty's stop ends.
POWEROFF_FRAMES = 12
# systemd 255 and later start every service through systemd-executor, one exec more
# between the unit's start and gauged's: under emulation Debian 13 (systemd 257) took
# 0.65 s from the power-off unit's start to gauged's exec, Debian 12 (systemd 252) 0.26 s,
# the same package on an idle host (most of it, likely, that exec); Plymouth's unit pays it alike.
# The splash came 1.54-1.73 s after `systemctl poweroff` there on an idle host (frames 5-6),
# 2.72-3.19 s (frames 9-10) with the host loaded by a second test; one screendump more than
# POWEROFF_FRAMES for that exec: 13 (4.3 s).
POWEROFF_FRAMES_EXECUTOR = 13
# On a root encrypted with LUKS the guest decrypts every page it reads with software AES on
# the emulated CPU; while the shutdown closes its volumes, every process reading the root
# waits, systemd's own jobs too (section 7): there, 15 screendumps (5 s).
POWEROFF_FRAMES_ENCRYPTED = 15
# A black screendump this close to the kernel's "reboot: Power down" (by the frames' clock,
# whose screendump midpoints and ttyS1 offset are good to about 0.1 s) was taken after the
# kernel's devices shut down (section 7). Under one interval, so it excuses one frame at most
# before the print.
POWER_DOWN_MARGIN = 0.25
POOL_MARGIN = 0.5     # gauged started this long before the kernel's random pool was ready
GETTY_BAR = 0.70      # the bar's value at least when the getty comes, a first boot's too
# A byte at most this is dark (the background is black; every channel of a lit pixel is
# above it in at least one channel).
DARK = bytes(0 if v <= 24 else 1 for v in range(256))


# A passphrase prompt on the console: cryptsetup's askpass ("Please unlock disk NAME:"),
# systemd's console agent ("Please enter passphrase for disk NAME:").
PROMPT = re.compile(r"unlock disk|passphrase for disk")


def is_fill(p):
    """The fill: orange while running, light orange in the begin state (begin_color
    (0.95, 0.78, 0.45) = (242, 199, 115), with the gradient and the white stripes)."""
    r, g, b = p
    return is_orange(p) or (r >= 190 and r > g + 20 and g > b + 40 and b <= 190)


class Frame:
    def __init__(self, index, host, path, img):
        self.index, self.host, self.path = index, host, path
        self.width, self.height = img.width, img.height
        self.guest = None
        self.kind, self.fill, self.scale = classify(img)
        # A question's field on the splash (the default theme's look), read once per frame.
        self.entry = entry_field(img) if self.kind == "splash" else None
        self.question = self.entry is not None and self.scale == 1

    def label(self):
        fill = f" fill {self.fill:.0%}" if self.fill is not None else ""
        question = " question" if self.question else ""
        at = f"{self.guest:6.2f} s" if self.guest is not None else f"host {self.host:6.2f} s"
        return f"#{self.index} at {at}: {self.kind}{fill}{question} ({self.width}x{self.height})"


def lit_count(img, y0, y1):
    """Lit channel bytes in rows y0..y1 (C speed: translate, then count)."""
    row = img.width * 3
    return img.pixels[y0 * row:y1 * row].translate(DARK).count(1)


def lit_in(img, x0, y0, x1, y1):
    """Lit channel bytes in the rectangle x0..x1, y0..y1."""
    x0, x1 = max(0, x0), min(img.width, x1)
    return sum(img.pixels[(y * img.width + x0) * 3:(y * img.width + x1) * 3].translate(DARK).count(1)
               for y in range(max(0, y0), min(img.height, y1)))


def title_and_message(img, scale):
    """Lit bytes of the title's line just above the bar, and of the message's two lines
    below it, across the bar's width (the default theme: title 20 px bold, message 16 px)."""
    bx, by, bw, bh = bar_rect(img.width, img.height, scale)
    title = lit_in(img, bx, by - 40 * scale, bx + bw, by - 4 * scale)
    message = lit_in(img, bx, by + bh + 4 * scale, bx + bw, by + bh + 52 * scale)
    return title, message


def bar_row(img, scale):
    """The bar's middle row, every other pixel (its rounded ends left out), or [] where no
    bar fits."""
    bx, by, bw, bh = bar_rect(img.width, img.height, scale)
    if by + bh > img.height or bw < 60:
        return []
    return [img.at(x, by + bh // 2) for x in range(bx + 14, bx + bw - 14, 2)]


def bar_found(img, scale, fill=is_fill):
    """The share of the bar's middle row that is track or fill (`fill`: is_fill, the
    running states' colours)."""
    row = bar_row(img, scale)
    return sum(1 for p in row if fill(p) or is_grey(p)) / len(row) if row else 0.0


def fill_fraction(img, scale):
    """Where the orange fill ends, as a fraction of the bar's width (0 with no fill)."""
    bx, by, bw, bh = bar_rect(img.width, img.height, scale)
    right = None
    for y in (by + bh // 2 - 4, by + bh // 2, by + bh // 2 + 4):
        for x in range(bx + bw - 1, bx - 1, -1):
            if is_fill(img.at(x, y)):
                right = x if right is None else max(right, x)
                break
    return 0.0 if right is None else (right - bx + 1) / bw


def is_red(p):
    """The failure colour (0.86, 0.24, 0.20) = (219, 61, 51), lighter and darker in the
    bar's gradient and stripes."""
    r, g, b = p
    return r >= 150 and r > g + 70 and abs(g - b) <= 40


def is_green(p):
    """The success colour (0.30, 0.69, 0.31) = (77, 176, 79), lighter and darker in the
    bar's gradient and stripes."""
    r, g, b = p
    return g >= 120 and g > r + 50 and g > b + 50


def failure_shown(img, scale):
    """The failure screen: the bar's middle row all track or red fill, and above the bar
    the box's band in the failure colour (a row red across an eighth of the width or more:
    the box is as wide as its longest line)."""
    if bar_found(img, scale, is_red) < 0.8 or not any(is_red(p) for p in bar_row(img, scale)):
        return False
    by = bar_rect(img.width, img.height, scale)[1]
    for y in range(0, by, 2):
        if sum(1 for x in range(0, img.width, 4) if is_red(img.at(x, y))) * 4 >= max(100, img.width // 8):
            return True
    return False


def classify(img):
    """(kind, fill fraction or None, scale or None) of one screen."""
    for scale in (1, 2):
        if failure_shown(img, scale):
            return "failure", None, scale
        # The splash in the failure state (an update's failure, before its restart): the
        # bar in the failure colour, no box.
        if bar_found(img, scale, is_red) >= 0.8 and any(is_red(p) for p in bar_row(img, scale)):
            return "failure", None, scale
        # The splash in the success state (an update done, before its restart).
        if bar_found(img, scale, is_green) >= 0.8 and any(is_green(p) for p in bar_row(img, scale)):
            return "success", None, scale
        if bar_found(img, scale) >= 0.8:
            # Nothing but background above the logo (console text starts at the top).
            logo_top = int(img.height * 0.4) - 48 * scale - 8
            stray = lit_count(img, 0, max(0, logo_top))
            kind = "splash" if stray == 0 else "text-over-splash"
            return kind, fill_fraction(img, scale), scale
    # One colour all over that is not black: a display manager's stand-in's picture.
    samples = {img.at(img.width * i // 6, img.height * j // 6) for i in range(1, 6) for j in range(1, 6)}
    if len(samples) == 1 and max(next(iter(samples))) >= 32:
        return "picture", None, None
    return ("black" if lit_count(img, 0, img.height) < 30 else "console"), None, None


def is_field(p):
    """The question's field: a dark grey (0.18 = 45, the default theme's entry colour)."""
    return max(p) - min(p) <= 8 and 32 <= p[0] <= 64


def entry_field(img):
    """The question on screen, or None: (field top, field bottom, bullets in it, lit
    bytes of the prompt above it). The field is found by its rows, wherever it is laid
    out (below the message, or above the title when there is no room below); the
    bullets are the orange dots in its rows."""
    bx, by, bw, bh = bar_rect(img.width, img.height)
    rows = []
    samples = [bx + bw * i // 16 for i in range(1, 16)]
    for y in range(0, img.height, 2):
        if sum(1 for x in samples if is_field(img.at(x, y))) >= 10:
            rows.append(y)
    if not rows:
        return None
    top, bottom = rows[0], rows[-1]
    bullets = 0
    for y in range(top, bottom + 1):
        runs, inside = 0, False
        for x in range(bx, bx + bw):
            orange = is_orange(img.at(x, y))
            runs += orange and not inside
            inside = orange
        bullets = max(bullets, runs)
    # The prompt: a line of text just above the field (message size 16, a gap of 8).
    prompt = lit_count(img, max(0, top - 30), max(0, top - 2))
    return top, bottom, bullets, prompt


# sulogin's prompt: "Give root password for maintenance", or "Press Enter for system
# maintenance" where root has no password to give.
SULOGIN = re.compile(r"root password for maintenance|Enter for system maintenance")


def read_qr(path):
    """The text of the QR code in the screendump at `path` (zbarimg, QR codes only), as a
    list of lines; None when there is none or zbarimg cannot run."""
    try:
        done = subprocess.run(["zbarimg", "--raw", "-q", "-Sdisable", "-Sqrcode.enable", path],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0 or not done.stdout:
        return None
    return done.stdout.decode("utf-8", "replace").rstrip("\n").split("\n")


def sendkey_name(char):
    """QEMU's `sendkey` name for a letter, digit, space or hyphen (capitals with Shift)."""
    return {" ": "spc", "-": "minus"}.get(char) or (f"shift-{char.lower()}" if char.isupper() else char)


def shows_text(img, rows, lines):
    """Whether every non-blank line of the VT's text has lit pixels in its character cell
    row, across the columns it uses (the screen shows what the console holds)."""
    if not rows or not lines:
        return False
    cell_h = img.height // rows
    cols = max(len(line) for line in lines) or 1
    cell_w = img.width // cols
    for r, line in enumerate(lines[:rows]):
        if not line.strip():
            continue
        first, last = len(line) - len(line.lstrip()), len(line.rstrip())
        x0, x1 = first * cell_w, last * cell_w
        y0 = r * cell_h
        lit = 0
        for y in range(y0, min(y0 + cell_h, img.height)):
            lit += img.pixels[(y * img.width + x0) * 3:(y * img.width + x1) * 3].translate(DARK).count(1)
        if lit == 0:
            return False
    return True


class Boot:
    def __init__(self, args):
        self.args = args
        self.frames_dir = os.path.join(args.work, "frames")
        os.makedirs(self.frames_dir, exist_ok=True)
        self.serial_path = os.path.join(args.work, "serial.log")
        self.report_path = os.path.join(args.work, "report.log")
        # An oops under TCG's code patching (an int3 or a BUG in text_poke, in a process's
        # context) kills that process and leaves its locks held: the boot hangs with nothing
        # on a `quiet` console. As a panic it ends the boot at once, named (`kernel_panicked`).
        self.qemu = Qemu(args.work, args.kernel, args.initrd, f"{args.append} oops=panic", memory=1024, smp=args.smp,
                         serial=[self.serial_path, self.report_path], disks=[args.disk], nic=False, options=args.qemu)
        self.started, self.process, self.monitor = self.qemu.started, self.qemu.process, self.qemu.monitor
        self.serial = SerialLog(self.report_path)
        # The kernel console, read as the boot goes for a panic (`kernel_panicked`), and
        # the host seconds the panic ended at.
        self.console = SerialLog(self.serial_path)
        self.panicked_at = None
        self.frames = []
        self.splash_seen = False
        self.lines = []       # (host seconds, text), appended by the reader thread only
        # The passphrase to type, and what happened: the frame that showed the empty field,
        # host seconds the keys were sent, the most bullets seen, the frame with all of
        # them, host seconds Enter was sent.
        self.passphrase = args.ask_passphrase
        self.asked = self.typed_at = self.full = self.entered_at = None
        self.most_bullets = 0
        # The encrypted root: the passphrases, where the question shows, how far the
        # checker got (0 waiting, 1 wrong typed, 2 wrong entered, 3 right typed, 4 done),
        # the frames it acted on and when (host seconds).
        self.root_pass = args.root_passphrase
        self.wrong_pass = args.wrong_passphrase
        self.question_on = args.question_on
        self.unlock_state = 0
        self.unlock_frames = {}
        self.unlock_times = {}
        self.unlock_bullets = []
        # The console's text on the frames read while the question waited (frame index ->
        # rows), read with the console font.
        self.console_text = {}
        self.font = ConsoleFont() if (self.root_pass and self.question_on == "console") or args.way_out else None
        # A failed boot's way out (--way-out): the frames and host seconds of each step.
        self.way = {}
        self.finished = threading.Event()
        self.reader = threading.Thread(target=self.read_serial, daemon=True)
        self.reader.start()

    def now(self):
        return time.monotonic() - self.started

    def run(self):
        """Samples until QEMU exits (power-off), the guest's kernel has panicked or the time
        is up; True if it exited."""
        while self.process.poll() is None:
            if self.now() > self.args.timeout:
                return False
            if self.kernel_panicked():
                self.panicked_at = self.now()
                return False
            begin = self.now()
            path = os.path.join(self.frames_dir, f"{len(self.frames):04d}.ppm")
            try:
                img = self.monitor.screendump(path)
            except (RuntimeError, OSError):
                # QEMU powering off closes the monitor a moment before it exits.
                try:
                    self.process.wait(5)
                    break
                except subprocess.TimeoutExpired:
                    raise
            taken = (begin + self.now()) / 2
            self.frames.append(Frame(len(self.frames), taken, path, img))
            self.splash_seen = self.splash_seen or self.frames[-1].kind == "splash"
            if self.passphrase and self.splash_seen and self.entered_at is None:
                self.answer(img, self.frames[-1])
            # After the right passphrase too, for a few seconds: what is on screen then is
            # read for leaks.
            if self.root_pass and self.splash_seen and (
                    self.unlock_state < 4 or self.now() - self.unlock_times.get("right", -10.0) < 5):
                self.unlock(img, self.frames[-1])
            if self.args.give_up_passphrase and self.splash_seen and "failure" not in self.way:
                self.give_up(img, self.frames[-1])
            if self.args.way_out:
                self.leave_failure(img, self.frames[-1])
            # As often as before the splash while a failing boot's screen is awaited: its
            # time from the failure (1 s at most) is a figure.
            awaited = not self.splash_seen or (self.args.way_out and "failure" not in self.way)
            time.sleep(max(0.0, begin + (EARLY_INTERVAL if awaited else INTERVAL) - self.now()))
        self.process.wait()
        return True

    def answer(self, img, frame):
        """Types the passphrase once the field shows, empty; Enter once it holds one
        bullet per key (or 30 s after typing, so the boot goes on to fail its checks)."""
        entry = entry_field(img)
        if self.typed_at is None:
            if entry is not None and entry[2] == 0:
                self.asked = frame
                for char in self.passphrase:
                    self.monitor.sendkey(sendkey_name(char))
                self.typed_at = self.now()
            return
        bullets = entry[2] if entry is not None else 0
        self.most_bullets = max(self.most_bullets, bullets)
        if bullets == len(self.passphrase) or self.now() - self.typed_at > 30:
            if bullets == len(self.passphrase):
                self.full = frame
            self.monitor.sendkey("ret")
            self.entered_at = self.now()

    def leave_failure(self, img, frame):
        """A failed boot's way out: once the failure screen has shown for 6 s (a person reads
        it first; an emulated boot has the keyboard read only seconds after it fails) and its
        QR code has said the same for 1 s (40 s at most), and with --key-after once the
        guest's probe has reported, its key (Enter, or R); after Enter, Enter at sulogin's prompt (root has no password here),
        then `poweroff` at the shell's prompt, each once the console shows it; at the
        initramfs's `(initramfs)` prompt, `poweroff -f`."""
        way, now = self.way, self.now()
        if "key" not in way:
            if frame.kind == "failure":
                way.setdefault("failure", frame)
                if now - way["failure"].host >= 6.0:
                    # What its QR code says, read from this frame by a real decoder first.
                    # The code comes with the first detail line, which the screen's script
                    # sends before it waits for the key (on a loaded host up to 10 s after
                    # the screen): a key pressed before that wait is no answer.
                    qr = read_qr(frame.path)
                    if qr and len(qr) >= 3 and qr != way.get("qr-text"):
                        # Read again until it holds still for 1 s: the lines come in over
                        # frames (one request each).
                        way["qr-seen"], way["qr-text"] = now, qr
                    reported = not self.args.key_after or any(
                        line.startswith(self.args.key_after) for _, line in list(self.lines))
                    if not reported and now - way["failure"].host < 60.0:
                        return
                    if now - way.get("qr-seen", now) >= 1.0 or now - way["failure"].host >= 40.0:
                        way["qr"] = qr
                        way["key"], way["key-frame"] = now, frame
                        # --way-out wait: a machine without a keyboard; the theme's
                        # failure_timeout decides.
                        if self.args.way_out != "wait":
                            self.monitor.sendkey("ret" if self.args.way_out == "enter" else "r")
            return
        if self.args.way_out != "enter" or frame.kind != "console" or "shell" in way or now - way.get("read", -9) < 1:
            return
        way["read"] = now
        rows = self.font.read(img)
        self.console_text[frame.index] = rows
        way.setdefault("console", frame)
        last = next((r for r in reversed(rows) if r.strip()), "")
        if "prompt" not in way and last.strip().startswith("(initramfs)"):
            # initramfs-tools' shell: no password asked; busybox powers off at once with -f.
            way["prompt"] = way["shell"] = frame
            self.type("poweroff -f", enter=True)
        elif "prompt" not in way and any(SULOGIN.search(r) for r in rows):
            way["prompt"] = frame
            self.monitor.sendkey("ret")
        elif "prompt" in way and last.rstrip().endswith("#"):
            way["shell"] = frame
            self.type("poweroff", enter=True)

    def give_up(self, img, frame):
        """A passphrase nobody gets right (--give-up-passphrase): typed at every question
        on the splash, once its field shows empty, Enter once it holds one bullet per key;
        each answer is a "wrong" step (way-out.txt), until the failure screen shows."""
        entry, now = frame.entry, self.now()
        bullets = entry[2] if entry is not None else 0
        typed = self.way.get("typing")
        if typed is None:
            if entry is not None and bullets == 0 and now - self.way.get("entered", -9) >= 1:
                self.type(self.args.give_up_passphrase, enter=False)
                self.way["typing"] = now
        elif bullets == len(self.args.give_up_passphrase) or now - typed > 30:
            self.monitor.sendkey("ret")
            self.way.setdefault("wrong", []).append(frame)
            self.way["entered"] = now
            del self.way["typing"]

    def type(self, text, enter):
        for char in text:
            self.monitor.sendkey(sendkey_name(char))
        if enter:
            self.monitor.sendkey("ret")

    def unlock(self, img, frame):
        """The encrypted root's question: a wrong passphrase once it shows, the right
        one once the retry shows (see the module's notes)."""
        now, state = self.now(), self.unlock_state
        if self.question_on == "console":
            if frame.kind != "console":
                if state == 2 and now - self.unlock_times["wrong"] > 60:
                    self.unlock_state = 4
                return
            rows = self.font.read(img)
            self.console_text[frame.index] = rows
            if state == 4:
                return
            prompts = [r for r in rows if PROMPT.search(r)]
            last = next((r for r in reversed(rows) if r.strip()), "")
            waiting = bool(PROMPT.search(last))
            if state == 0 and waiting:
                self.unlock_frames["asked"], self.unlock_times["asked"] = frame, frame.host
                self.type(self.wrong_pass, enter=True)
                self.unlock_times["wrong"], self.unlock_state = now, 2
                self.prompts_asked = len(prompts)
            elif state == 2 and waiting and len(prompts) > self.prompts_asked:
                self.unlock_frames["retry"] = frame
                self.type(self.root_pass, enter=True)
                self.unlock_times["right"], self.unlock_state = now, 4
            elif state == 2 and now - self.unlock_times["wrong"] > 60:
                self.unlock_state = 4
            return
        if state == 4:
            return
        entry = frame.entry
        bullets = entry[2] if entry is not None else 0
        if state in (1, 3):
            self.unlock_bullets.append(bullets)
        if state == 0 and entry is not None and bullets == 0:
            self.unlock_frames["asked"], self.unlock_times["asked"] = frame, frame.host
            self.type(self.wrong_pass, enter=False)
            self.unlock_times["typed"], self.unlock_state = now, 1
        elif state == 1 and (bullets == len(self.wrong_pass) or now - self.unlock_times["typed"] > 30):
            self.unlock_frames["wrong-full"] = frame
            self.monitor.sendkey("ret")
            self.unlock_times["wrong"], self.unlock_state = now, 2
        elif state == 2 and now - self.unlock_times["wrong"] >= 2 and entry is not None and bullets == 0:
            self.unlock_frames["retry"] = frame
            self.type(self.root_pass, enter=False)
            self.unlock_times["typed"], self.unlock_state = now, 3
        elif state == 2 and now - self.unlock_times["wrong"] > 60:
            self.unlock_state = 4
        elif state == 3 and (bullets == len(self.root_pass) or now - self.unlock_times["typed"] > 30):
            self.unlock_frames["right-full"] = frame
            self.monitor.sendkey("ret")
            self.unlock_times["right"], self.unlock_state = now, 4

    def kernel_panicked(self):
        """Whether the guest's kernel console has ended a panic: nothing comes after it, so
        the boot stops there rather than at the timeout (under TCG the emulator at times
        crashes the kernel; boot-test boots such a configuration once more)."""
        return any("end Kernel panic - not syncing" in line for line in self.console.lines())

    def read_serial(self):
        """Reads the report port every 10 ms: a line's arrival time maps host time onto
        the guest's clock, so it must not wait for the next screendump. OVMF writes its
        screen-clearing escapes to the serial ports without a newline, so the guest's
        first report line may follow them: a line is taken from its GAUGE- marker on."""
        def clean(line):
            at = line.find("GAUGE-")
            return line[at:] if at > 0 else line
        while not self.finished.is_set():
            for line in self.serial.lines():
                self.lines.append((self.now(), clean(line)))
            time.sleep(0.01)
        for line in self.serial.lines():
            self.lines.append((self.now(), clean(line)))

    def stop(self):
        self.finished.set()
        self.reader.join(5)
        self.qemu.stop()


class Report:
    """Checks with their evidence, figures, and the frames worth keeping."""

    def __init__(self, name):
        self.name = name
        self.checks = []          # (passed, title, detail)
        self.figures = []         # (title, text)
        self.keep = {}            # frame index -> why

    def check(self, passed, title, detail):
        self.checks.append((bool(passed), title, detail))

    def figure(self, title, text):
        self.figures.append((title, text))

    def evidence(self, frame, why):
        if frame is not None:
            self.keep.setdefault(frame.index, why)


def poweroff_times(lines):
    """From the shutdown's journal (boot-test-poweroff-probe): when logind passed
    `systemctl poweroff` on, the power-off screen's unit started, gauged was executed and
    drew its first frame, and the getty's stop began and ended (guest seconds, None for
    what the journal lacks); empty without the journal."""
    log = [text[len("GAUGE-OFFLOG "):] for _, text in lines if text.startswith("GAUGE-OFFLOG ")]
    if not log:
        return {}

    def at(pattern):
        return next((monotonic(j) for j in log if re.search(pattern, j) and monotonic(j) is not None), None)

    first = next((j for j in log if re.search(r"first frame on .* ms after exec", j)), None)
    frame_at = monotonic(first) if first else None
    exec_ms = re.search(r"([\d.]+) ms after exec", first) if first else None
    return {"logind asks systemd": at(r"The system will power off now"),
            "unit starts": at(r"Starting gauged-(poweroff|reboot|halt|kexec)\.service"),
            "gauged exec": frame_at - float(exec_ms.group(1)) / 1000 if frame_at and exec_ms else None,
            "first frame": frame_at,
            "getty stopping": at(r"Stopping getty@tty1\.service"),
            "getty stopped": at(r"Stopped getty@tty1\.service")}


def poweroff_silence(lines):
    """The longest gap between two lines of the shutdown's journal from logind's power-off
    to gauged's first frame, and what came after it: how long the guest as a whole, not
    only the screen, made no progress."""
    log = [text[len("GAUGE-OFFLOG "):] for _, text in lines if text.startswith("GAUGE-OFFLOG ")]
    start = next((i for i, j in enumerate(log) if "The system will power off now" in j), None)
    end = next((i for i, j in enumerate(log) if re.search(r"first frame on .* ms after exec", j)), None)
    if start is None or end is None or end <= start:
        return "no shutdown journal"
    times = [(monotonic(j), j) for j in log[start:end + 1] if monotonic(j) is not None]
    gap, after = max(((b[0] - a[0], b[1]) for a, b in zip(times, times[1:])), default=(0.0, ""))
    return f"{gap:.2f} s, before: {after.split(': ', 1)[-1][:100]}"


def monotonic(line):
    """The seconds of a `journalctl -o short-monotonic` line, or None."""
    m = re.match(r"\[\s*(\d+\.\d+)\]", line)
    return float(m.group(1)) if m else None


def systemd_version(journal):
    """The real root's systemd's version, from its first journal line (0 when not found)."""
    for line in journal:
        found = re.search(r"systemd\[1\]: systemd (\d+)", line)
        if found:
            return int(found.group(1))
    return 0


def post_mortem(boot, report):
    """Where a boot that never powered off stopped, as figures in the test's own output (a
    CI log keeps no results directory): the last screens, what the checker typed and saw,
    and the kernel console's last lines, any passphrase masked."""
    for f in boot.frames[-4:]:
        report.figure("stopped: screen", f.label())
    if boot.passphrase:
        report.figure("stopped: the data volume's question",
                      f"asked {'frame #%d' % boot.asked.index if boot.asked else 'never'}, keys sent at "
                      f"{boot.typed_at}, most bullets {boot.most_bullets}, Enter at {boot.entered_at}")
    if boot.root_pass:
        times = ", ".join(f"{k} {v:.1f} s" for k, v in sorted(boot.unlock_times.items(), key=lambda kv: kv[1]))
        frames = ", ".join(f"{k} #{f.index}" for k, f in boot.unlock_frames.items())
        report.figure("stopped: the root's question",
                      f"state {boot.unlock_state} (0 waiting, 1 wrong typed, 2 wrong entered, 3 right typed, "
                      f"4 done); host times: {times or 'none'}; frames: {frames or 'none'}; "
                      f"bullets seen: {boot.unlock_bullets[-12:]}")
    secrets = [w for w in (boot.passphrase, boot.root_pass, boot.wrong_pass) if w]
    try:
        with open(boot.serial_path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError as error:
        text = f"(no kernel console log: {error})"
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\r", "", text)
    for word in secrets:
        text = text.replace(word, "*" * len(word))
    for line in [l for l in text.split("\n") if l.strip()][-25:]:
        report.figure("stopped: kernel console", line[:200])


def kernel_power_down(serial_path):
    """The guest time of the kernel's "reboot: Power down" on its console, or None."""
    try:
        with open(serial_path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    found = re.findall(r"\[\s*(\d+\.\d+)\] reboot: Power down", text)
    return float(found[-1]) if found else None


class Analysis:
    """What the checks of one boot share: the guest's lines and frames on the guest's clock,
    the journal's times of the boot's landmarks, and what one check finds that a later one
    reads (each check function sets its own)."""


def timeline(boot):
    """The guest's clock put on every frame (host time -> guest uptime: the smallest delay
    over the lines that carry an uptime), and the boot's landmarks in the journal."""
    lines = boot.lines
    frames = boot.frames

    offsets = []
    for host, text in lines:
        m = re.match(r"GAUGE-(?:STEP \S+|PROBE uptime) (\d+\.\d+)$", text)
        if m:
            offsets.append(host - float(m.group(1)))
    synced = bool(offsets)
    offset = min(offsets) if offsets else 0.0
    for f in frames:
        f.guest = f.host - offset if synced else None

    def guest_of_step(name):
        for host, text in lines:
            parts = text.split()
            if len(parts) == 3 and parts[0] == "GAUGE-STEP" and parts[1] == name:
                return float(parts[2])
        return None

    journal = [text[len("GAUGE-JOURNAL "):] for _, text in lines if text.startswith("GAUGE-JOURNAL ")]
    gauged_log = [text[len("GAUGE-GAUGED "):] for _, text in lines if text.startswith("GAUGE-GAUGED ")]

    def journal_time(pattern, last=False):
        hits = [monotonic(j) for j in journal if re.search(pattern, j) and monotonic(j) is not None]
        return (hits[-1] if last else hits[0]) if hits else None

    # The kernel's records keep the time each line was written; the journal stamps what
    # the initramfs wrote to the kernel's log (gauged started by initramfs-tools, the
    # kernel's own lines) when it read them, after switch_root. Where a line is in both,
    # the kernel's time counts.
    kernel = [text[len("GAUGE-DMESG "):] for _, text in lines if text.startswith("GAUGE-DMESG ")]

    def event_time(pattern):
        hits = [monotonic(k) for k in kernel if re.search(pattern, k) and monotonic(k) is not None]
        return hits[0] if hits else journal_time(pattern)

    root_start = journal_time(r"systemd\[1\]: systemd .* running in system mode", last=True)
    getty = journal_time(r"Started getty@tty1\.service")
    # gauged can log the quit before journald stamps systemd's "Starting" line.
    quit_start = min((t for t in (journal_time(r"Starting gauged-quit\.service"),
                                  journal_time(r"gauged(\[\d+\])?: quit requested")) if t is not None),
                     default=None)
    quit_end = journal_time(r"Finished gauged-quit\.service")
    crng = event_time(r"crng init done")
    # The DRM driver the boot's card has (bochs-drm, virtio_gpu), named by its registration.
    drm_ready = event_time(DRM_INITIALIZED)
    drm_driver = next((m.group(1) for line in kernel + journal for m in [re.search(DRM_INITIALIZED, line)] if m), None)
    left_efifb = event_time(r"gauged: left fbdev /dev/fb0 EFI VGA")
    step_console, step_status = guest_of_step("console"), guest_of_step("status")
    step_after, step_poweroff = guest_of_step("after-status"), guest_of_step("poweroff")
    a = Analysis()
    for name in ("lines", "frames", "offsets", "synced", "offset", "guest_of_step", "journal", "gauged_log",
                 "journal_time", "kernel", "event_time", "root_start", "getty", "quit_start", "quit_end", "crng", "drm_ready", "drm_driver", "left_efifb",
                 "step_console", "step_status", "step_after", "step_poweroff"):
        setattr(a, name, locals()[name])
    return a


def check_reached(a, boot, exited, report):
    """The boot reached power-off, the guest reported its time and the journal names the
    real root and the getty; False when the rest cannot be judged."""
    offsets, synced, root_start, getty = a.offsets, a.synced, a.root_start, a.getty
    stopped = (f"the guest's kernel panicked (stopped at {boot.panicked_at:.0f} s)" if boot.panicked_at is not None
               else f"QEMU still running after {boot.args.timeout:.0f} s")
    report.check(exited, "the boot reaches power-off", "QEMU exited" if exited else stopped)
    if not exited:
        post_mortem(boot, report)
    report.check(synced, "the guest reported on ttyS1 (time base)",
                 f"{len(offsets)} timed lines" if synced else "no GAUGE-STEP/GAUGE-PROBE line with an uptime on ttyS1")
    report.check(getty is not None and root_start is not None, "the journal names switch_root and the getty",
                 f"systemd in the real root at {root_start} s, getty@tty1 started at {getty} s")
    return synced and getty is not None


def check_early(a, boot, report):
    """The boot's splash frames (until the getty or gauged-quit); the first of them must be
    in the initramfs."""
    frames, journal_time = a.frames, a.journal_time
    root_start, getty, quit_start = a.root_start, a.getty, a.quit_start
    boot_frames = [f for f in frames if f.guest is not None and f.guest >= 0]
    # The boot's splash ends at the getty, or when gauged takes gauged-quit's request, which
    # goes just before it: gaugectl's start can take seconds on a loaded host, during which
    # the splash still shows (a DRM driver registered then still gets it), less a sampling
    # margin for the screendump's own time.
    quit_taken = journal_time(r"gauged(\[\d+\])?: quit requested")
    splash_end = max(quit_start, quit_taken - 0.2) if quit_taken is not None and quit_start is not None else quit_start
    until = min(getty, splash_end) if splash_end is not None else getty
    splash = [f for f in boot_frames if f.kind == "splash" and f.guest <= until]
    first = splash[0] if splash else None

    # 1. Early: the first splash frame is in the initramfs.
    report.figure("kernel start to first splash frame", f"{first.guest:.2f} s" if first else "never")
    report.evidence(first, "first splash frame")
    report.check(first is not None and root_start is not None and first.guest < root_start,
                 "the splash shows in the initramfs",
                 f"first splash frame at {first.guest:.2f} s, real root's systemd at {root_start:.2f} s"
                 if first else f"no splash frame before {until:.2f} s in {len(boot_frames)} frames "
                 f"({', '.join(sorted({f.kind for f in boot_frames if f.guest <= until}))})")
    a.boot_frames = boot_frames
    a.first = first
    a.until = until


def check_unbroken(a, boot, report):
    frames, offset, event_time = a.frames, a.offset, a.event_time
    drm_ready, first, boot_frames, until, left_efifb = a.drm_ready, a.first, a.boot_frames, a.until, a.left_efifb
    # 2. Unbroken until the getty (or gauged-quit): at most one frame without the splash
    # (a mode set), and that one black. A DRM driver that replaces the firmware's
    # framebuffer during the boot (uefi-late-drm) blanks the screen with its own mode set
    # before gauged can open the new card: black frames are allowed from the driver's
    # probe (gauged leaving efifb, or the driver's registration) until gauged shows its first
    # frame on the card, and that hand-over must end within HANDOVER_LIMIT seconds.
    during = [f for f in boot_frames if first and first.guest <= f.guest <= until]
    on_card = event_time(r"gauged: display: drm ")
    handover = None
    if drm_ready is not None and first is not None and first.guest < drm_ready <= until:
        start = min(drm_ready, left_efifb) if left_efifb is not None else drm_ready
        shown = next((f.guest for f in during if f.kind == "splash" and on_card is not None and f.guest > on_card), None)
        handover = (start, shown)
        blank = [f for f in during if f.kind == "black" and start <= f.guest and (shown is None or f.guest < shown)]
        # A driver that registers less than HANDOVER_LIMIT before the boot's splash ends
        # (udev loads it late in the boot, on a loaded host as late as the getty) leaves the
        # splash too little time to be seen on the card: that boot ends on the console, and
        # only a splash shown there late counts against it.
        cut_short = shown is None and until - start < HANDOVER_LIMIT
        report.figure("DRM driver hand-over (efifb left to the splash on the card)",
                      f"{shown - start:.2f} s, {len(blank)} black frames" if shown is not None
                      else f"the boot's splash ended {until - start:.2f} s after the driver took efifb, before a frame on the card"
                      if cut_short else "the splash never came back on the card")
        report.check(cut_short or (shown is not None and shown - start <= HANDOVER_LIMIT),
                     f"the splash is back within {HANDOVER_LIMIT:.1f} s when the DRM driver replaces efifb",
                     f"efifb left at {left_efifb} s, driver registered at {drm_ready:.2f} s, "
                     f"gauged on the card at {on_card} s, first splash frame after it at {shown} s")
    in_handover = (lambda f: f.kind == "black" and handover is not None and handover[0] <= f.guest
                   and (handover[1] is None or f.guest < handover[1]))
    # The encrypted root's question on the console: from its first frame until the splash
    # is back after the right passphrase (the daemon's grace, two seconds, and a margin).
    # It starts with the console frames that lead up to the prompt (the console may get
    # the screen a moment before the asker has printed it).
    unlocking = None
    if boot.root_pass and boot.question_on == "console" and "asked" in boot.unlock_frames:
        right = boot.unlock_times.get("right")
        start = boot.unlock_frames["asked"].index
        while start > 0 and frames[start - 1].kind == "console":
            start -= 1
        unlocking = (frames[start].host - offset - 0.1, (right - offset + 5.0) if right else float("inf"))
    in_question = (lambda f: unlocking is not None and unlocking[0] <= f.guest <= unlocking[1])
    gaps = [f for f in during if f.kind != "splash" and not in_handover(f) and not in_question(f)]
    for f in gaps[:6]:
        report.evidence(f, f"no splash during the boot: {f.kind}")
    report.figure("frames without the splash during the boot",
                  f"{len(gaps)} of {len(during)} ({', '.join(f.label() for f in gaps[:4])}{' ...' if len(gaps) > 4 else ''})")
    report.check(first is not None and len(during) > 1 and len(gaps) <= 1 and all(f.kind == "black" for f in gaps),
                 "the splash stays on screen from its first frame until the getty",
                 f"{len(gaps)} of {len(during)} frames between {first.guest if first else 0:.2f} s and "
                 f"{until:.2f} s without it: {[f.label() for f in gaps[:4]]}")
    a.during = during


def check_bar(a, boot, report):
    getty, quit_start, until, during = a.getty, a.quit_start, a.until, a.during
    # 3. The bar advances, never goes back, and is past half-way at the getty.
    values = [(f, f.fill) for f in during if f.kind == "splash"]
    back = [(a, b) for (a, va), (b, vb) in zip(values, values[1:]) if vb < va - 3 / 512]
    for a, b in back[:2]:
        report.evidence(a, "bar before it went back")
        report.evidence(b, "bar went back")
    report.check(values and not back, "the bar never goes back",
                 f"{len(back)} steps back, first {back[0][0].label()} -> {back[0][1].label()}" if back
                 else f"{len(values)} splash frames")
    at_getty = values[-1] if values else None
    if at_getty:
        report.evidence(at_getty[0], "the bar when the getty started")
    report.figure("bar's value when the getty appeared",
                  f"{at_getty[1]:.0%} ({at_getty[0].label()})" if at_getty else "no splash")
    report.check(values and values[-1][1] > values[0][1] + 0.02, "the bar advances during the boot",
                 f"from {values[0][1]:.0%} to {values[-1][1]:.0%}" if values else "no splash")
    report.check(at_getty is not None and at_getty[1] >= GETTY_BAR and until - at_getty[0].guest < 1.0,
                 f"the bar is at {GETTY_BAR:.0%} or more when the getty appears",
                 f"{at_getty[1]:.0%} at {at_getty[0].guest:.2f} s (getty at {getty:.2f} s, gauged-quit at {quit_start} s)"
                 if at_getty else "no splash")


def check_leaving(a, boot, report):
    lines, getty, quit_start = a.lines, a.getty, a.quit_start
    quit_end, step_console, step_status, boot_frames = a.quit_end, a.step_console, a.step_status, a.boot_frames
    # 4. Leaving: the login console comes back after gauged-quit and stays. "Back" means
    # the screen shows what tty1 holds (its text from /dev/vcs1, the login prompt in it).
    vt = [text[len("GAUGE-VT "):] for _, text in lines if text.startswith("GAUGE-VT ")]
    vt_active = next((v.split()[1] for v in vt if v.startswith("active ")), None)
    vt_rows = next((int(v.split()[1]) for v in vt if v.startswith("size ")), 0)
    vt_text = [v[1:] for v in vt if v.startswith("|")]
    report.check(vt_active == "tty1" and any("login:" in t for t in vt_text),
                 "tty1 is the active VT and holds the login prompt",
                 f"active {vt_active}; tty1 holds {[t.strip() for t in vt_text if t.strip()][:6]}; "
                 f"{[text[len('GAUGE-GETTY '):] for _, text in lines if text.startswith('GAUGE-GETTY ')]}")

    def console_shown(f):
        return f.kind == "console" and shows_text(Image(f.path), vt_rows, vt_text)
    if quit_start is not None:
        text_at = next((f for f in boot_frames if f.guest >= quit_start and f.kind == "console"), None)
        back_at = next((f for f in boot_frames if f.guest >= quit_start and console_shown(f)), None)
        report.evidence(text_at, "text console after gauged-quit")
        report.evidence(back_at, "login prompt on screen after gauged-quit")
        report.figure("gauged-quit to the console being back",
                      (f"text console {text_at.guest - quit_start:.2f} s" if text_at else "no text console")
                      + (f", login prompt shown {back_at.guest - quit_start:.2f} s" if back_at else ", no login prompt")
                      + f" (quit started {quit_start:.2f} s, finished {quit_end} s, getty started {getty:.2f} s)")
    else:
        report.figure("gauged-quit to the console being back", "gauged-quit.service never started")
    end = [f for f in boot_frames if step_console is not None and step_status is not None
           and step_console <= f.guest <= step_status]
    wrong = [f for f in end if not console_shown(f)]
    for f in end[-1:] + wrong[:3]:
        report.evidence(f, "the login console at the end of boot")
    report.check(end and not wrong, "the login console is visible at the end of boot",
                 f"{len(wrong)} of {len(end)} frames after the getty do not show tty1's text: "
                 f"{[f.label() for f in wrong[:4]]}" if end else "no frame between the console and status steps")
    a.console_shown = console_shown
    a.end = end


def check_status_leaves_console(a, boot, report):
    lines, step_status, step_after = a.lines, a.step_status, a.step_after
    boot_frames, console_shown, end = a.boot_frames, a.console_shown, a.end
    # 5. A read-only `gaugectl status` after boot leaves the console alone.
    status_frames = [f for f in boot_frames if step_status is not None and step_after is not None
                     and step_status <= f.guest <= step_after + 0.5]
    for f in [f for f in status_frames if f.kind != "console"][:3]:
        report.evidence(f, "screen after gaugectl status")
    status_lines = [text for _, text in lines if text.startswith("GAUGE-STATUS ")]
    # Alone: the screen stays what it was before (a console missing already fails above).
    before = end[-1] if end else None
    shown_before = before is not None and console_shown(before)
    wrong = [f for f in status_frames if f.kind != "console" or (shown_before and not console_shown(f))]
    report.check(before and status_frames and not wrong, "gaugectl status after boot leaves the console alone",
                 f"{len(wrong)} of {len(status_frames)} frames not the console: {[f.label() for f in wrong[:3]]}; "
                 f"{status_lines[:3]}")
    remaining = [text for _, text in lines if text.startswith("GAUGE-AFTER ") and text != "GAUGE-AFTER done"]
    report.check(any(text == "GAUGE-AFTER done" for _, text in lines) and not remaining,
                 "no gauged remains after boot", f"running: {remaining}" if remaining else "none running")


def check_one_daemon(a, boot, report):
    lines, journal = a.lines, a.journal
    gauged_log, root_start, step_status = a.gauged_log, a.root_start, a.step_status
    # 6. One daemon: exactly one gauged at the end of boot, started in the initramfs, and
    # no second one in the journal.
    probe = [text.split() for _, text in lines if text.startswith("GAUGE-PROBE gauged ")]
    started = [(int(p[2]), int(p[4]) / int(p[6])) for p in probe]
    before_status = [j for j in journal + gauged_log if step_status is None
                     or (monotonic(j) or 0) < step_status]
    pids = {int(m.group(1)) for j in before_status for m in [re.search(r" gauged\[(\d+)\]:", j)] if m}
    pids |= {pid for pid, _ in started}
    clashes = [j for j in before_status if "Address already in use" in j or "already running" in j]
    report.check(len(started) == 1 and root_start is not None and started[0][1] < root_start,
                 "one gauged at the end of boot, the one started in the initramfs",
                 f"gauged processes at the probe: {[' '.join(p[2:]) for p in probe]} "
                 f"(start seconds {[s for _, s in started]}, real root from {root_start} s)")
    report.check(len(pids) <= 1 and not clashes, "the journal shows no second daemon",
                 f"gauged pids in the journal and probe: {sorted(pids)}; {clashes[:2]}")
    # The shipped binary is built with Embedded Swift, which prints a placeholder for a
    # value it cannot describe (an enum without a description) instead of the value.
    unprintable = [j for j in journal if "cannot print value" in j]
    report.check(not unprintable, "every value in the journal's log lines is printed",
                 f"placeholders: {unprintable[:3]}")
    a.started = started


# A unit's name as systemd names a step ("systemd-user-sessions.service"), quoted as
# `gaugectl status` prints the message.
UNIT_NAME = re.compile(r'"[^" /]+\.(service|mount|swap|socket|target|path|timer|device|slice|scope|automount)"')


def check_step_description(a, boot, report):
    # The message line reads as the step's description ("Permit User Sessions"), not its
    # unit's name, once gauged-waits has sent the descriptions (the probe waits for that:
    # under emulation they come 1.7-2.1 s after the follower starts, and until then a step
    # shows its name).
    lines = a.lines
    described = next((text.split()[2] for _, text in lines if text.startswith("GAUGE-PROBE described ")), "0")
    message = next((text.split("message:", 1)[1].strip() for _, text in lines
                    if text.startswith("GAUGE-PROBE status message:")), None)
    if described == "0":
        report.figure("the message line at the end of boot", f"{message} (gauged-waits sent no descriptions: not judged)")
        return
    report.check(message is not None and not UNIT_NAME.fullmatch(message),
                 "the message line at the end of boot reads as a description, not a unit's name",
                 f"message once gauged-waits sent the descriptions: {message}")


def check_display_at_end(a, boot, report):
    lines, drm_ready, boot_frames = a.lines, a.drm_ready, a.boot_frames
    driver = a.drm_driver or "bochs-drm"
    # The display it ends the boot on: the DRM device (bochs-drm, virtio_gpu), not the
    # firmware's framebuffer it may have started on, nor the card's fbdev emulation.
    shown_on = next((text.split("display:", 1)[1].strip() for _, text in lines
                     if text.startswith("GAUGE-PROBE status ") and "display:" in text), None)
    report.figure("display at the end of boot", shown_on or "no daemon answered")
    # When udev loads the driver only after the probe (a slow, loaded host), the firmware's
    # framebuffer is the best device the boot had: that is what the splash must be on then.
    probe_at = next((float(text.split()[2]) for _, text in lines if text.startswith("GAUGE-PROBE uptime ")), None)
    # The screen when the probe ran (the end of boot) is kept whatever the checks say: the
    # package boots, which must not show the splash, are judged by it.
    at_probe = [f for f in boot_frames if probe_at is not None and f.guest < probe_at]
    if at_probe:
        report.keep.setdefault(at_probe[-1].index, "the screen when the probe ran")
    # The status itself is asked once gauged-waits sent the descriptions, up to 10 s later.
    status_at = next((float(text.split()[2]) for _, text in lines if text.startswith("GAUGE-PROBE status-uptime ")), probe_at)
    drm_late = drm_ready is None or (status_at is not None and drm_ready > status_at)
    on_drm = shown_on is not None and shown_on.startswith("drm ") and f" {driver} " in shown_on
    on_efifb = shown_on is not None and shown_on.startswith("fbdev ") and "EFI VGA" in shown_on
    # Between efifb's removal and the card's registration (the driver's probe) there is no
    # device: gauged says none, the screen in graphics mode, waiting for the card. The
    # daemon answers some time after the status is asked (0.01-0.05 s under emulation):
    # efifb may have left in between.
    answered_at = next((float(text.split()[2]) for _, text in lines
                        if text.startswith("GAUGE-PROBE status-answered-uptime ")), status_at)
    left_efifb = a.left_efifb
    between = (shown_on == "none" and left_efifb is not None and answered_at is not None and drm_late
               and left_efifb <= answered_at)
    report.check(on_drm or (drm_late and on_efifb) or between,
                 f"the splash is on the DRM device ({driver}) at the end of boot, or on efifb (or between the two) if {driver} came later",
                 f"gaugectl status says: {shown_on}; {driver} registered at {drm_ready} s, efifb left at {left_efifb} s, "
                 f"the status asked at {status_at} s, answered by {answered_at} s")


def check_poweroff_splash(a, boot, report):
    lines, journal, step_poweroff, boot_frames = a.lines, a.journal, a.step_poweroff, a.boot_frames
    # 7. The splash shows while powering off, titled "Powering off" with no message line
    # (no unit's name), within a frame or two of sampling after what no screen can skip.
    # In emulation `systemctl poweroff` reaches systemd through logind in 0.1-0.25 s,
    # systemd starts the screen's unit 0.3-0.5 s later (its first pass over the shutdown's
    # jobs), and gauged draws 0.35-0.5 s after its exec: 1.0-1.4 s, the 4th or 5th of the
    # screendumps taken every 0.33 s; a few frames more make POWEROFF_FRAMES (12, about
    # 4 s: gauged's own start varies with the host's disk cache, see there). Waiting for the getty's stop (0.9 s) and a shell before gauged, it came on
    # frame 3 to 14 (1.0-4.4 s), or never. Since frame counts follow the host's load, the
    # journal says whether anything waited: the screen's unit must start before the
    # getty's stop ends. Only a splash that comes after the console counts: one left over
    # from before (a daemon that should not be running) proves nothing about power-off.
    # On an encrypted root (the LUKS configurations) the guest decrypts each page read from
    # it with software AES on QEMU's emulated CPU (its AES instructions are not usable with
    # this kernel: the boots hang), and while the shutdown closes the volume every reader
    # of the root stalls together: systemd's journal goes quiet for 0.5-1.1 s, and gauged,
    # read from that root, took 0.25-3.0 s from exec to its first frame (0.25-0.56 s on a
    # plain disk). The journal's longest silence before the first frame is printed; the
    # bound there is POWEROFF_FRAMES_ENCRYPTED.
    bound = (POWEROFF_FRAMES_ENCRYPTED if boot.root_pass
             else POWEROFF_FRAMES_EXECUTOR if systemd_version(journal) >= 255 else POWEROFF_FRAMES)
    off = [f for f in boot_frames if step_poweroff is not None and f.guest >= step_poweroff]
    before_off = [f for f in boot_frames if step_poweroff is not None and f.guest < step_poweroff]
    shown = [f for f in off if f.kind == "splash"]
    first_off = shown[0] if shown else None
    report.evidence(first_off or (off[-1] if off else None), "powering off")
    report.evidence(before_off[-1] if before_off else None, "just before power-off")
    console_before = bool(before_off) and before_off[-1].kind == "console"
    position = off.index(first_off) if first_off else None
    report.figure("`systemctl poweroff` to the splash",
                  f"{first_off.guest - step_poweroff:.2f} s, frame {position + 1} of {len(off)} after it "
                  f"({', '.join(f'{f.guest - step_poweroff:.2f} s {f.kind}' for f in off[:6])})"
                  if first_off else f"never, in {len(off)} frames ({', '.join(sorted({f.kind for f in off}))})")
    timeline = poweroff_times(lines)
    report.figure("power-off, where the time went",
                  ", ".join(f"{name} {t - step_poweroff:+.2f} s" if t is not None and step_poweroff is not None
                            else f"{name} ?" for name, t in timeline.items()) if timeline else "no shutdown journal")
    unit_at, getty_end = timeline.get("unit starts"), timeline.get("getty stopped")
    report.check(unit_at is not None and getty_end is not None and unit_at < getty_end,
                 "the power-off screen's unit starts before the getty's stop ends (it waits for nothing)",
                 f"unit started at {unit_at} s, the getty stopped at {getty_end} s (the shutdown's journal)")
    report.figure("power-off, the journal's longest silence before the first frame", poweroff_silence(lines))
    report.check(first_off is not None and console_before and position < bound,
                 f"the splash shows while powering off, within {bound} screendumps of `systemctl poweroff`"
                 + (" (an encrypted root)" if boot.root_pass else ""),
                 (f"first on frame {position + 1} of {len(off)} after it, {first_off.guest - step_poweroff:.2f} s"
                  if first_off else f"none of {len(off)} frames after `systemctl poweroff` show it "
                  f"({', '.join(sorted({f.kind for f in off}))})")
                 + ("" if console_before else
                    f"; the screen before it was {before_off[-1].label() if before_off else 'not sampled'}, not the console"))
    a.first_off = first_off
    a.off = off
    a.position = position


def check_poweroff_covered(a, boot, report):
    step_poweroff, off, first_off, position = a.step_poweroff, a.off, a.first_off, a.position
    # Not painted over: the getty's stop, beside the screen's start, resets and hangs up
    # its VT and clears it; from its first frame to the power-off every screendump shows
    # the splash. The power goes with the kernel's "reboot: Power down" on its console
    # (serial.log), after its devices' shutdown: bochs-drm's (Debian 13's kernel; not
    # Debian 12's) turns the display off, so a screendump taken in that last moment (between systemd-shutdown's
    # reboot() and QEMU's exit, within POWER_DOWN_MARGIN of the print by the frames'
    # clock) is black by the kernel's doing, not the splash's; any other frame counts.
    power_down = kernel_power_down(boot.serial_path)
    later = off[position:] if first_off else []
    last_moment = [f for f in later if f.kind == "black" and power_down is not None
                   and f.guest >= power_down - POWER_DOWN_MARGIN]
    covered = [f for f in later if f.kind != "splash" and f not in last_moment]
    report.figure("power-off, the kernel's \"reboot: Power down\"",
                  (f"{power_down - step_poweroff:.2f} s after `systemctl poweroff`; the last frame "
                   f"{later[-1].guest - power_down:+.2f} s from it ({later[-1].kind})"
                   + (f"; {len(last_moment)} black frame(s) in the kernel's last moment" if last_moment else ""))
                  if power_down is not None and step_poweroff is not None and later else "not on the kernel console")
    report.evidence(covered[0] if covered else None, "the power-off splash covered")
    report.check(first_off is not None and not covered,
                 "the power-off splash stays until the power goes (the getty's end does not cover it)",
                 f"{len(later) - len(covered)} of {len(later)} screendumps from its first show it"
                 + (f" ({len(last_moment)} black as the kernel powered down)" if last_moment else "")
                 + (f"; {', '.join(f'{f.guest - step_poweroff:.2f} s {f.kind}' for f in covered[:6])}" if covered else ""))


def check_poweroff_words(a, boot, report):
    lines, first_off = a.lines, a.first_off
    # What it says: the daemon's own status during the power-off (a unit after
    # gauged-poweroff.service asks it), and on screen a title line and no message line.
    off_status = next((text[len("GAUGE-OFF status "):] for _, text in lines if text.startswith("GAUGE-OFF status ")), None)
    try:
        said = json.loads(off_status) if off_status else {}
    except ValueError:
        said = {}
    title_lit, message_lit = title_and_message(Image(first_off.path), first_off.scale) if first_off else (0, 0)
    report.check(said.get("title") == "Powering off" and said.get("message") == "" and title_lit > 200 and message_lit == 0,
                 "the power-off screen says \"Powering off\" and names no unit",
                 f"the daemon's status at power-off: title {said.get('title')!r}, message {said.get('message')!r} "
                 f"({off_status if off_status else 'none reported'}); on screen {title_lit} lit bytes in the title's "
                 f"line, {message_lit} in the message's")


def check_random_pool(a, boot, report):
    event_time, crng, started = a.event_time, a.crng, a.started
    # 8. gauged never waits for the kernel's random pool. The guest has no hardware source,
    # so the pool is ready many seconds into the boot, after gauged has started and its
    # display has come: its first frame must not wait for the pool. (A boot whose pool
    # is ready before gauged starts has nothing to show here.)
    # Nor does one whose first display device only came within the margin of the pool:
    # its first frame follows the device, not the pool.
    first_display = event_time(r"gauged(\[\d+\])?: display: ")
    display_early = crng is not None and (first_display is None or first_display < crng - POOL_MARGIN)
    if started and crng is not None and started[0][1] < crng - POOL_MARGIN and display_early:
        first_frame_logged = event_time(r"gauged(\[\d+\])?: first frame on ")
        report.check(first_frame_logged is not None and first_frame_logged < crng,
                     "gauged's first frame does not wait for the kernel's random pool",
                     f"gauged started at {started[0][1]:.2f} s, logged its first frame at "
                     f"{first_frame_logged} s; the pool was ready at {crng:.2f} s")


def figures_in_vm(a, boot, report):
    gauged_log, crng, drm_ready, first, started = a.gauged_log, a.crng, a.drm_ready, a.first, a.started
    # Figures from inside the VM.
    screen_ms = [j for j in gauged_log if re.search(r"\d+(\.\d+)? ?ms", j) and re.search(r"screen|frame", j)]
    exec_to_screen = None
    if started and first and started[0][1] < first.guest:
        exec_to_screen = first.guest - started[0][1]
    report.figure("cold start exec to screen (in the VM)",
                  (f"gauged says: {screen_ms[0]}; " if screen_ms else "gauged logs no figure; ")
                  + (f"process start to first splash frame {exec_to_screen:.2f} s (frames every {EARLY_INTERVAL} s)"
                     if exec_to_screen is not None else "process start unknown")
                  + (f"; kernel random pool ready at {crng:.2f} s" if crng is not None else "")
                  + (f"; {a.drm_driver} registered at {drm_ready:.2f} s" if drm_ready is not None else ""))


def figure_kernel_steps(a, report):
    """Where the time before the first splash frame went, on the kernel's clock (the
    kernel's own records, `dmesg`, which keep the time each line was written; the journal
    stamps what it read from the initramfs when it read it): the console taking the
    firmware's framebuffer (clearing the firmware's picture), the initramfs unpacked,
    /init, a DRM driver registering, gauged's exec and first frame."""
    kernel = [(monotonic(k), k) for k in a.kernel if monotonic(k) is not None]
    if not kernel:
        report.figure("before the splash, on the kernel's clock", "no kernel records (GAUGE-DMESG) on ttyS1")
        return

    def first(pattern):
        return next(((t, m) for t, line in kernel for m in [re.search(pattern, line)] if m), (None, None))

    steps = []
    for name, pattern in (("initramfs unpacked", r"Freeing initrd memory"),
                          ("the console took the framebuffer", r"Console: switching to colour frame buffer device"),
                          ("/init", r"Run /init as init process"),
                          ("DRM driver", DRM_INITIALIZED)):
        t, m = first(pattern)
        if t is not None:
            steps.append((t, f"{name} {m.group(1)}" if m.groups() else name))
    t, m = first(r"gauged: first frame on (.+?) ([0-9.]+) ms after exec")
    if t is not None:
        steps.append((t - float(m.group(2)) / 1000, "gauged exec"))
        steps.append((t, f"gauged's first frame on {m.group(1)}"))
    report.figure("before the splash, on the kernel's clock",
                  ", ".join(f"{name} {t:.2f} s" for t, name in sorted(steps)) or "none of its steps recorded")


def analyse(boot, exited, report):
    a = timeline(boot)
    if not check_reached(a, boot, exited, report):
        return
    check_early(a, boot, report)
    check_unbroken(a, boot, report)
    check_bar(a, boot, report)
    check_leaving(a, boot, report)
    check_status_leaves_console(a, boot, report)
    check_one_daemon(a, boot, report)
    check_display_at_end(a, boot, report)
    check_step_description(a, boot, report)
    check_poweroff_splash(a, boot, report)
    check_poweroff_covered(a, boot, report)
    check_poweroff_words(a, boot, report)

    # UEFI: OVMF shows its logo, and the sample theme keeps it.
    if any("ovmf" in arg.lower() for arg in boot.args.qemu):
        # The console taking a card's fbdev emulation as it registers clears the card's
        # buffer (the kernel, under the fb's lock) until gauged shows its picture again:
        # from the console's line (less the screendumps' time base, 0.2 s) to gauged's.
        takeover = a.event_time(r"fbcon: .* is primary device")
        shown_again = a.event_time(r"gauged: drm .*: picture shown again whole")
        clears = [(takeover - 0.2, shown_again + 0.2)] if takeover is not None and shown_again is not None else []
        analyse_firmware_logo(a.frames, report, a.first, a.until, clears)
    if boot.passphrase:
        analyse_question(boot, report, a.journal, a.lines, a.offset)
    if boot.root_pass:
        analyse_unlock(boot, report, a.lines, a.offset, a.getty)

    check_random_pool(a, boot, report)
    figures_in_vm(a, boot, report)
    figure_kernel_steps(a, report)


def lit_box(img):
    """The bounding box (x, y, w, h) of the lit pixels in the middle half of the screen
    each way (where firmware centres its logo; its text, if any, is at the top), or None."""
    # Rows with a lit byte, then the columns lit in those rows.
    x0, x1, y0, y1 = img.width // 4, img.width * 3 // 4, img.height // 4, img.height * 3 // 4
    row = img.width * 3
    rows = [y for y in range(y0, y1) if img.pixels[y * row + x0 * 3:y * row + x1 * 3].translate(DARK).count(1)]
    if not rows:
        return None
    cols = [x for x in range(x0, x1) if any(max(img.at(x, y)) > 24 for y in range(rows[0], rows[-1] + 1, 1))]
    return (cols[0], rows[0], cols[-1] - cols[0] + 1, rows[-1] - rows[0] + 1) if cols else None


def crop(img, box):
    x, y, w, h = box
    return b"".join(img.pixels[((y + r) * img.width + x) * 3:((y + r) * img.width + x + w) * 3] for r in range(h))


def logo_place(box, width, height):
    """Where the splash puts the firmware's logo on a screen of width x height
    (Sources/GaugeRender/FirmwareLogo.swift): where the firmware drew it on a screen of its
    size, else centred across with its middle at 38.2% of the height."""
    x, y, w, h = box
    if abs(x - (width - w) // 2) <= 1 and y + h <= height:
        return box
    return ((width - w) // 2, max(0, min(height - h, swift_round(height * 0.382) - h // 2)), w, h)


def logo_shown(f, box, logo):
    """Whether frame `f` shows `logo` (the firmware's pixels in `box`) where the splash puts
    it on a screen of its size, and that place."""
    other = Image(f.path)
    place = logo_place(box, other.width, other.height)
    if place[2] > other.width or place[3] > other.height:
        return False, place
    return crop(other, place) == logo, place


def logo_being_written(shown, logo):
    """Whether every pixel of `shown` (a frame's logo rectangle) is `logo`'s or still the
    console's black: nothing else drawn there, the copy of the frame under way."""
    dark = shown.translate(DARK)
    return all(shown[i:i + 3] == logo[i:i + 3] or not any(dark[i:i + 3]) for i in range(0, len(shown), 3))


def sort_splash_frames(splash, box, logo, clears):
    """The splash frames without the firmware's logo, with it moved (a screen of another
    size), without it while the console cleared the card's buffer (`clears`), and the
    first one taken while it was being written: (wrong, moved, cleared, unfinished)."""
    wrong, moved, cleared, unfinished = [], [], [], []
    for i, f in enumerate(splash):
        same, place = logo_shown(f, box, logo)
        if same:
            if place != box:
                moved.append(f)
        elif any(start <= f.guest <= end for start, end in clears):
            cleared.append(f)
        elif (i == 0 and len(splash) > 1 and logo_shown(splash[1], box, logo)[0]
              and logo_being_written(crop(Image(f.path), place), logo)):
            # The first frame on a single-buffered framebuffer (efifb) is copied into it
            # row by row while the emulator's display reads it on another thread: a
            # screendump in that moment may hold the bar's rows and none or only some of
            # the logo's, the others still the console's black. Counted; the next frame
            # must show it whole.
            unfinished.append(f)
        else:
            wrong.append(f)
    return wrong, moved, cleared, unfinished


def analyse_firmware_logo(frames, report, first, until, clears=()):
    """The firmware's logo kept (the sample theme's logo=firmware): its rectangle read from
    the last frame before the kernel starts (OVMF's logo is on screen then), every splash
    frame until the getty shows the same pixels in it, but those within `clears` (the
    console clearing the card's buffer, (from, to) guest seconds), which are counted, and
    the frames between the firmware and the splash that do not (black, or anything else)
    are counted."""
    firmware = [f for f in frames if f.guest is not None and f.guest < 0 and f.kind == "console"]
    shot = firmware[-1] if firmware else None
    img = Image(shot.path) if shot else None
    box = lit_box(img) if img else None
    report.evidence(shot, "the firmware's logo before the kernel")
    report.figure("the firmware's logo", f"{box[2]}x{box[3]} at {box[0]},{box[1]} on {img.width}x{img.height} ({shot.label()})"
                  if box else f"none found in {len(firmware)} frames before the kernel")
    if not box or first is None:
        report.check(False, "the splash keeps the firmware's logo",
                     "no firmware logo before the kernel" if not box else "no splash frame")
        return
    logo = crop(img, box)
    splash = [f for f in frames if f.kind == "splash" and first.guest <= f.guest <= until]
    wrong, moved, cleared, unfinished = sort_splash_frames(splash, box, logo, clears)
    if clears:
        report.figure("splash frames without the logo while the console took the card's fbdev",
                      f"{len(cleared)} ({clears[0][0]:.2f}-{clears[0][1]:.2f} s): {[f.label() for f in cleared[:2]]}")
    if unfinished:
        report.evidence(unfinished[0], "the first splash frame, taken while it was being written")
        report.figure("the first splash frame taken while it was being written (logo rows still black)",
                      unfinished[0].label())
    for f in wrong[:3]:
        report.evidence(f, "the splash without the firmware's logo")
    report.check(splash and not wrong, "every splash frame shows the firmware's logo, pixel for pixel, where the firmware drew it",
                 f"{len(wrong)} of {len(splash)} splash frames differ in the logo's rectangle: {[f.label() for f in wrong[:4]]}")
    # Between: from the last firmware frame to the first splash frame.
    between = [f for f in frames if shot.index < f.index < first.index]
    black = [f for f in between if f.kind == "black"]
    other = [f for f in between if f.kind != "black" and not logo_shown(f, box, logo)[0]]
    for f in (black[:1] + other[:2]):
        report.evidence(f, "between the firmware and the splash")
    span = f"{first.guest - shot.guest:.2f} s" if shot.guest is not None else "?"
    report.figure("firmware logo to the splash",
                  f"{span}, {len(between)} frames between: {len(black)} black, {len(other)} without the logo, "
                  f"{len(between) - len(black) - len(other)} with it"
                  + (f"; {len(moved)} splash frames on a screen of another size, the logo centred there" if moved else ""))


def passphrase_leaks(boot, words):
    """Where any of `words` shows: the serial logs (the kernel console, the report port with
    the whole journal and tty1's text) and the console screens read during the question."""
    leaks = []
    for path in (boot.serial_path, boot.report_path):
        with open(path, "rb") as f:
            data = f.read()
        if any(word.encode() in data for word in words):
            leaks.append(os.path.basename(path))
    for index, rows in boot.console_text.items():
        if any(word in row for word in words for row in rows):
            leaks.append(f"the screen (frame #{index})")
    return leaks


def analyse_question(boot, report, journal, lines, offset):
    """The encrypted volume's passphrase, asked on the splash: prompt and bullets on
    screen, the volume unlocked with what was typed, and the passphrase in no log."""
    passphrase = boot.passphrase
    asked, full = boot.asked, boot.full
    report.evidence(asked, "the passphrase asked on the splash")
    report.evidence(full, "one bullet per typed key")
    entry = entry_field(Image(asked.path)) if asked else None
    report.check(asked is not None and asked.kind == "splash" and entry is not None and entry[3] > 100,
                 "systemd-cryptsetup's passphrase request is asked on the splash (prompt and field)",
                 f"question frame {asked.label()}, field rows and prompt {entry}" if asked
                 else "no frame showed the question's field")
    report.check(full is not None and boot.most_bullets == len(passphrase),
                 "the field shows one bullet per typed key",
                 f"{len(passphrase)} keys typed; most bullets seen {boot.most_bullets}"
                 + (f", all of them in {full.label()}" if full else ""))
    if boot.entered_at is not None:
        # The question leaves the screen once answered (the splash stays).
        after = [f for f in boot.frames if f.host > boot.entered_at][:20]
        gone = next((f for f in after if entry_field(Image(f.path)) is None), None)
        report.evidence(gone, "the question answered")
        report.check(gone is not None and gone.kind == "splash", "the question leaves the splash once answered",
                     f"first frame without the field: {gone.label() if gone else 'none of ' + str(len(after))}")
        report.figure("passphrase question on screen",
                      f"from {asked.host - offset:.2f} s; keys sent at {boot.typed_at - offset:.2f} s, "
                      f"Enter at {boot.entered_at - offset:.2f} s (guest seconds)" if asked else "never")
    luks = [text[len("GAUGE-LUKS "):] for _, text in lines if text.startswith("GAUGE-LUKS ")]
    report.check("unit active" in luks and f"file {boot.args.ask_token}" in luks,
                 "the volume is unlocked during the boot and its file reads back",
                 f"the guest reports {luks}; {[j for j in journal if 'cryptsetup' in j][:4]}")
    # Every log: the kernel console, the report port (whole journal, tty1's text).
    full_journal = sum(1 for _, text in lines if text.startswith("GAUGE-LOG "))
    leaks = passphrase_leaks(boot, [passphrase])
    report.check(full_journal > 100 and not leaks, "the passphrase is in no log (the whole journal, the consoles)",
                 f"{full_journal} journal lines read; the passphrase is in {leaks}")


def check_unlock_prompts(boot, report, asked, retry, where):
    """The root's question and its retry where they must show: the prompt on the console's
    text, or the prompt, field and bullets on the splash."""
    if where == "console":
        asked_text = boot.console_text.get(asked.index, []) if asked else []
        retry_text = boot.console_text.get(retry.index, []) if retry else []
        report.check(asked is not None and any(PROMPT.search(r) for r in asked_text),
                     "the passphrase prompt is on the console as soon as it waits",
                     f"question frame {asked.label() if asked else None} reads {[r for r in asked_text if r.strip()][-3:]}")
        report.check(retry is not None and sum(1 for r in retry_text if PROMPT.search(r)) >= 2,
                     "the retry after a wrong passphrase is asked on the console too",
                     f"retry frame {retry.label() if retry else None} reads {[r for r in retry_text if r.strip()][-4:]}")
    else:
        entry = entry_field(Image(asked.path)) if asked else None
        report.check(asked is not None and entry is not None and entry[3] > 100,
                     "the passphrase prompt and its field are on the splash as soon as it waits",
                     f"question frame {asked.label() if asked else None}, field rows and prompt {entry}")
        report.check(retry is not None, "the retry after a wrong passphrase is asked on the splash",
                     f"retry frame {retry.label() if retry else None}")
        report.check(max(boot.unlock_bullets, default=0) == max(len(boot.wrong_pass), len(boot.root_pass)),
                     "the field shows one bullet per typed key",
                     f"most bullets {max(boot.unlock_bullets, default=0)}, keys {len(boot.wrong_pass)} and {len(boot.root_pass)}")


def analyse_unlock(boot, report, lines, offset, getty):
    """The encrypted root's passphrase: asked where it must be (the console, or the
    splash), visible from the moment it waits until the right one is entered, the retry
    after a wrong one too, the root unlocked, and neither passphrase echoed or logged."""
    frames, times, where = boot.unlock_frames, boot.unlock_times, boot.question_on
    asked, retry = frames.get("asked"), frames.get("retry")
    report.evidence(asked, f"the root's passphrase asked ({where})")
    report.evidence(retry, f"the retry after a wrong passphrase ({where})")
    check_unlock_prompts(boot, report, asked, retry, where)
    right = times.get("right")
    waiting = [f for f in boot.frames if asked is not None and right is not None and asked.host <= f.host <= right]
    hidden = [f for f in waiting if f.kind != ("console" if where == "console" else "splash")]
    if where == "console":
        # Between a wrong answer and the retry nobody asks (the passphrase is being
        # checked): the splash may show then, but not while a prompt waits. A frame without
        # the console is such a gap when the console frame after it holds a new prompt.
        def prompts(f):
            return sum(1 for r in boot.console_text.get(f.index, []) if PROMPT.search(r))
        texts = [f for f in waiting if f.index in boot.console_text]
        hidden = [f for f in hidden
                  if not (any(t.host < f.host for t in texts) and any(t.host > f.host for t in texts)
                          and prompts(next(t for t in texts if t.host > f.host))
                          > prompts([t for t in texts if t.host < f.host][-1]))]
    for f in hidden[:3]:
        report.evidence(f, "the question not on screen")
    report.check(waiting and not hidden, f"the question is on the {where} whenever it waits, until the right passphrase is entered",
                 f"{len(hidden)} of {len(waiting)} frames from the question to the answer are not the {where}: "
                 f"{[f.label() for f in hidden[:4]]}")
    if where == "console" and right is not None:
        back = next((f for f in boot.frames if f.host > right and f.kind == "splash"), None)
        report.evidence(back, "the splash back after the answer")
        report.check(back is not None and (getty is None or back.guest < getty),
                     "the splash comes back once the passphrase is answered",
                     f"first splash frame after the answer: {back.label() if back else None}")
        report.figure("question on the console",
                      f"from {times['asked'] - offset:.2f} s, wrong passphrase at {times['wrong'] - offset:.2f} s, "
                      f"right one at {right - offset:.2f} s, splash back at "
                      f"{back.guest if back else float('nan'):.2f} s (guest seconds)")
    luks = [text[len("GAUGE-LUKS "):] for _, text in lines if text.startswith("GAUGE-LUKS ")]
    report.check("root /dev/mapper/cryptroot" in luks, "the root file system is the unlocked LUKS volume",
                 f"the guest reports {luks}")
    leaks = passphrase_leaks(boot, [boot.root_pass, boot.wrong_pass])
    full_journal = sum(1 for _, text in lines if text.startswith("GAUGE-LOG "))
    report.check(full_journal > 100 and not leaks,
                 "neither passphrase is in any log or on screen (the journal, the consoles, tty1's text, every console frame read)",
                 f"{full_journal} journal lines read; a passphrase is in {leaks}")


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--kernel", required=True)
    parser.add_argument("--initrd", required=True)
    parser.add_argument("--disk", required=True)
    parser.add_argument("--append", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--results", required=True)
    parser.add_argument("--smp", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=240)
    parser.add_argument("--keep-frames", action="store_true", help="keep every screen as PPM in --results/frames")
    parser.add_argument("--ask-passphrase", help="type this when the splash asks for a passphrase")
    parser.add_argument("--ask-token", help="what the unlocked volume's file holds")
    parser.add_argument("--root-passphrase", help="the encrypted root's passphrase, typed when it is asked")
    parser.add_argument("--wrong-passphrase", help="a wrong passphrase, typed first")
    parser.add_argument("--question-on", choices=["console", "splash"], default="console",
                        help="where the root's question must show")
    parser.add_argument("--way-out", choices=["enter", "r", "wait"],
                        help="a failed boot: press this key on the failure screen (then, after Enter, log in at "
                             "sulogin's prompt and power off from the shell); wait: press none, read its QR code")
    parser.add_argument("--key-after", metavar="PREFIX",
                        help="press the --way-out key only once a report line (ttyS1) begins with PREFIX "
                             "(60 s after the failure screen at most): a probe that must report first")
    parser.add_argument("--give-up-passphrase",
                        help="type this (wrong) passphrase at every question on the splash until the failure screen shows")
    parser.add_argument("qemu", nargs="*")
    return parser.parse_args()


def save_evidence(args, boot, report):
    """Every frame a check names as PNG, a timeline of all of them, the serial logs and the
    figures, under --results."""
    for index, why in sorted(report.keep.items()):
        f = boot.frames[index]
        Image(f.path).save_png(os.path.join(args.results, f"{index:04d}.png"))
    with open(os.path.join(args.results, "frames.txt"), "w") as out:
        for f in boot.frames:
            why = report.keep.get(f.index)
            out.write(f.label() + (f"  <- {why}" if why else "") + "\n")
    shutil.copy(boot.serial_path, os.path.join(args.results, "serial.log"))
    shutil.copy(boot.report_path, os.path.join(args.results, "report.log"))
    with open(os.path.join(args.results, "figures.json"), "w") as out:
        json.dump(dict(report.figures), out, indent=1)


def save_way_out(args, boot):
    """A failed boot's way out (--way-out): its steps ("STEP FRAME GUEST-SECONDS", guest time
    where known), the console's text where a step read it, and the failure screen's QR code
    as zbarimg read it, a line each, in way-out.txt."""
    with open(os.path.join(args.results, "way-out.txt"), "w") as out:
        for step in ("failure", "key-frame", "console", "prompt", "shell"):
            f = boot.way.get(step)
            if f is not None:
                out.write(f"{step} {f.index} {f.guest if f.guest is not None else 'host%.2f' % f.host}\n")
        for f in boot.way.get("wrong", []):
            out.write(f"wrong {f.index} {f.guest if f.guest is not None else 'host%.2f' % f.host}\n")
        for step in ("prompt", "shell"):
            f = boot.way.get(step)
            for row in (boot.console_text.get(f.index, []) if f is not None else []):
                if row.strip():
                    out.write(f"text {step} |{row}\n")
        for line in boot.way.get("qr") or []:
            out.write(f"qr |{line}\n")


def verdict(args, report):
    """The figures and checks printed, the counts written for boot-test (passed, failed,
    failures); the number failed."""
    name = args.name
    for title, text in report.figures:
        print(f"  [{name}] {title}: {text}")
    for passed, title, detail in report.checks:
        print(f"  [{name}] {'PASS' if passed else 'FAIL'} {title}" + ("" if passed else f": {detail}"))
    passed = sum(1 for p, _, _ in report.checks if p)
    failed = len(report.checks) - passed
    with open(os.path.join(args.results, "passed"), "w") as out:
        out.write(f"{passed}\n")
    with open(os.path.join(args.results, "failed"), "w") as out:
        out.write(f"{failed}\n")
    if failed:
        with open(os.path.join(args.results, "failures"), "w") as out:
            for passed_, title, detail in report.checks:
                if not passed_:
                    out.write(f"  [{name}] FAIL {title}: {detail[:600]}\n")
            # Where a boot that never powered off stopped, again beside its failures: the
            # end of a CI log is what shows of it.
            for title, text in report.figures:
                if title.startswith("stopped: "):
                    out.write(f"  [{name}] {title}: {text}\n")
    print(f"  [{name}] {passed} passed, {failed} failed; frames and logs in {args.results}")
    return failed


def main():
    args = parse_args()
    os.makedirs(args.work, exist_ok=True)
    os.makedirs(args.results, exist_ok=True)
    report = Report(args.name)
    boot = Boot(args)
    try:
        exited = boot.run()
    finally:
        boot.stop()
    analyse(boot, exited, report)
    save_evidence(args, boot, report)
    if args.way_out:
        save_way_out(args, boot)
    failed = verdict(args, report)
    if args.keep_frames:
        shutil.rmtree(os.path.join(args.results, "frames"), ignore_errors=True)
        shutil.move(boot.frames_dir, os.path.join(args.results, "frames"))
    else:
        shutil.rmtree(boot.frames_dir, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
