#!/usr/bin/env python3
"""Boots one tools/qemu/vm-bench configuration under QEMU (tools/qemu/qemu.py) and keeps a
screen of each scenario: at each `BENCH-SHOT NAME` line on the guest's serial port, the
screen as OUT/NAME.png, to see that each daemon shows what it should. Returns when the
guest has powered off, or stops it after --timeout seconds. Whether the guest finished
(BENCH-DONE) is for vm-bench to read in the serial log. Standard library only.

Usage: tools/qemu/vm-bench-boot.py --kernel K --initrd I --append A --serial LOG --work DIR
       --out DIR [--timeout S] -- QEMU-OPTION...
"""
import argparse
import os
import sys
import time

from qemu import Qemu, SerialLog


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernel", required=True)
    parser.add_argument("--initrd", required=True)
    parser.add_argument("--append", required=True)
    parser.add_argument("--serial", required=True, help="the file the serial port writes to")
    parser.add_argument("--work", required=True, help="QEMU's sockets and output")
    parser.add_argument("--out", required=True, help="where the screens go")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("qemu", nargs="*")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    deadline = time.monotonic() + args.timeout
    vm = Qemu(args.work, args.kernel, args.initrd, args.append, serial=[args.serial], options=args.qemu)
    log = SerialLog(args.serial)
    done = False
    try:
        while not done and vm.running() and time.monotonic() < deadline:
            for line in log.lines():
                if line.startswith("BENCH-SHOT "):
                    name = line.split()[1]
                    shot = os.path.join(args.out, f"{name}.ppm")
                    try:
                        vm.monitor.screendump(shot).save_png(os.path.join(args.out, f"{name}.png"))
                        os.unlink(shot)
                    except (RuntimeError, OSError) as error:
                        print(f"vm-bench: no screen of {name}: {error}", file=sys.stderr)
                done = done or line.startswith("BENCH-DONE")
            time.sleep(0.2)
        vm.wait(max(0.0, deadline - time.monotonic()))
    finally:
        vm.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
