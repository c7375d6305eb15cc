"""The one place Gauge's harnesses start QEMU (tools/qemu/vm-test-check.py,
tools/qemu/boot-test-check.py, tools/qemu/vm-bench-boot.py): the command line (board,
firmware and disks through the caller's options, memory, CPUs, kernel, initrd and command
line, serial ports, a control channel, the monitor), the process, its sockets, the monitor
(screendump, per head too; sendkey) and the serial logs. Software emulation only (TCG),
no window. Standard library only.
"""
import os
import socket
import subprocess
import time

from vmscreen import Image


class Board:
    """A kind of machine: the QEMU executable and its options, and how many serial ports
    it has (a board with one gets the control channel on a virtio console, hvc0)."""

    def __init__(self, executable, options, serial_ports):
        self.executable = executable
        self.options = options
        self.serial_ports = serial_ports


# Every kind of machine the harnesses boot, by the name their --machine option takes:
# adding one is one entry here.
BOARDS = {
    "pc": Board("qemu-system-x86_64", ["-machine", "pc"], 2),
    "virt-arm64": Board("qemu-system-aarch64", ["-machine", "virt", "-cpu", "cortex-a57"], 1),
    # Debian's armmp kernel has no LPAE: the board's PCI windows below 4 GiB.
    "virt-armhf": Board("qemu-system-arm", ["-machine", "virt,highmem=off", "-cpu", "cortex-a15"], 1),
    # Versatile Express with a Cortex-A9 tile: its PL111 CLCD raises a vblank interrupt
    # from a 60 Hz timer; four PL011 ports (the control channel on the second, ttyAMA1).
    # Its device tree comes with the kernel (-dtb among the caller's options); the
    # board's AC97 codec gets no host audio.
    "vexpress-a9": Board("qemu-system-arm", ["-machine", "vexpress-a9", "-audiodev", "none,id=silent"], 4),
}


class Monitor:
    """QEMU's human monitor on a Unix socket (`-monitor unix:PATH,server=on,wait=off`)."""

    def __init__(self, path):
        self.socket = socket.socket(socket.AF_UNIX)
        self.socket.connect(path)
        self.read()

    def read(self):
        data = b""
        self.socket.settimeout(30)
        while not data.endswith(b"(qemu) "):
            chunk = self.socket.recv(4096)
            if not chunk:
                raise RuntimeError("monitor closed")
            data += chunk
        return data

    def command(self, text):
        self.socket.sendall(text.encode() + b"\n")
        return self.read()

    def sendkey(self, name):
        """One key (QEMU's key names: `a`, `shift-2`, `ret`, `esc` ...) on the VM's keyboard."""
        return self.command(f"sendkey {name}")

    def screendump(self, path, device=None, head=None):
        """The screen now, as an Image (waits until QEMU has written the whole file); with
        `device` (a -device id) and `head`, that head of that display device."""
        if os.path.exists(path):
            os.unlink(path)
        self.command(f"screendump {path}" + (f" {device} {head}" if device is not None else ""))
        deadline = time.time() + 10
        while time.time() < deadline:
            if os.path.exists(path) and os.path.getsize(path) > 20:
                try:
                    return Image(path)
                except (ValueError, IndexError):
                    pass
            time.sleep(0.02)
        raise RuntimeError(f"screendump {path} did not appear")


class SerialLog:
    """A serial port QEMU writes to a file (`-serial file:PATH`), read line by line."""

    def __init__(self, path):
        self.path = path
        self.offset = 0
        self.pending = b""

    def lines(self):
        """New complete lines of the log."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        self.offset += len(data)
        self.pending += data
        *complete, self.pending = self.pending.split(b"\n")
        return [line.decode("utf-8", "replace").rstrip("\r") for line in complete]


class Qemu:
    """One QEMU run: started by the constructor, which returns once its monitor (and its
    control channel) answer.

    work       directory for the sockets (mon.sock, ctl.sock) and QEMU's own output (qemu.out)
    board      a BOARDS name
    serial     files the serial ports write to, first port first
    control    a channel to the guest (`self.control`, a connected socket): the port after
               the `serial` files, or a virtio console (hvc0) on a board with one serial port
    disks      raw images, as virtio disks in this order (vda, vdb ...)
    nic        False: no network card (QEMU's default card otherwise)
    options    the rest of the command line (firmware, display device, more drives ...)
    """

    def __init__(self, work, kernel, initrd, append, board="pc", memory=512, smp=None, serial=(),
                 control=False, disks=(), nic=True, options=()):
        kind = BOARDS[board]
        if len(serial) + (control and kind.serial_ports > 1) > kind.serial_ports:
            raise ValueError(f"{board} has {kind.serial_ports} serial port(s)")
        mon, ctl = os.path.join(work, "mon.sock"), os.path.join(work, "ctl.sock")
        command = [kind.executable] + kind.options + ["-accel", "tcg"]
        command += ["-smp", str(smp)] if smp else []
        command += ["-m", str(memory), "-display", "none"] + ([] if nic else ["-nic", "none"])
        command += ["-no-reboot", "-kernel", kernel, "-initrd", initrd, "-append", append]
        for disk in disks:
            command += ["-drive", f"file={disk},format=raw,if=virtio"]
        command += ["-monitor", f"unix:{mon},server=on,wait=off"]
        if control:
            command += ["-chardev", f"socket,id=ctl,path={ctl},server=on,wait=off"]
        for path in serial:
            command += ["-serial", f"file:{path}"]
        if control:
            command += (["-serial", "chardev:ctl"] if kind.serial_ports > 1
                        else ["-device", "virtio-serial-pci", "-device", "virtconsole,chardev=ctl"])
        self.command = command + list(options)
        self.output = os.path.join(work, "qemu.out")
        self.started = time.monotonic()
        self.process = subprocess.Popen(self.command, stdout=open(self.output, "wb"), stderr=subprocess.STDOUT)
        self.wait_for_sockets([mon, ctl] if control else [mon])
        self.monitor = Monitor(mon)
        self.control = None
        if control:
            self.control = socket.socket(socket.AF_UNIX)
            self.control.connect(ctl)

    def wait_for_sockets(self, paths, seconds=20):
        """Waits until QEMU has created its listening sockets."""
        deadline = time.time() + seconds
        while not all(os.path.exists(p) for p in paths):
            if time.time() > deadline or self.process.poll() is not None:
                raise RuntimeError("QEMU did not start: " + open(self.output, errors="replace").read())
            time.sleep(0.05)

    def running(self):
        return self.process.poll() is None

    def wait(self, seconds=None):
        """Waits until QEMU exits (the guest powered off); after `seconds`, stops it.
        True if it exited by itself."""
        try:
            self.process.wait(seconds)
            return True
        except subprocess.TimeoutExpired:
            self.stop()
            return False

    def stop(self):
        """Ends a QEMU still running: `quit` on the monitor, killed after 5 s."""
        if self.process.poll() is None:
            try:
                self.monitor.socket.sendall(b"quit\n")
                self.process.wait(5)
            except Exception:
                self.process.kill()
                self.process.wait()
