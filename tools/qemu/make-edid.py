#!/usr/bin/env python3
"""Writes a 128-byte EDID 1.4 block for one mode and one physical size, for the kernel to
load in place of what a (virtual) monitor reports (`drm.edid_firmware=CONNECTOR:edid/FILE`,
the file under /lib/firmware/edid/ in the initramfs). tools/qemu/vm-test uses it to give a VM
head the size of a small dense panel, so the daemon's `scale = auto` must pick scale 2.

Usage: tools/qemu/make-edid.py WIDTH HEIGHT WIDTH_MM HEIGHT_MM > FILE
The mode's detailed timing (the preferred mode) uses CVT reduced-blanking margins at 60 Hz;
the size goes in both the basic size (cm) and the detailed timing (mm).
Standard library only.
"""
import struct
import sys


def detailed_timing(width, height, width_mm, height_mm):
    hblank, hfront, hsync = 160, 48, 32
    vblank, vfront, vsync = 31, 3, 5
    clock = round((width + hblank) * (height + vblank) * 60 / 10000)   # in 10 kHz
    return bytes([
        clock & 0xFF, clock >> 8,
        width & 0xFF, hblank & 0xFF, (width >> 8) << 4 | hblank >> 8,
        height & 0xFF, vblank & 0xFF, (height >> 8) << 4 | vblank >> 8,
        hfront & 0xFF, hsync & 0xFF, (vfront & 0xF) << 4 | (vsync & 0xF),
        (hfront >> 8) << 6 | (hsync >> 8) << 4 | (vfront >> 4) << 2 | vsync >> 4,
        width_mm & 0xFF, height_mm & 0xFF, (width_mm >> 8) << 4 | height_mm >> 8,
        0, 0,
        0x1E,   # digital separate sync, both polarities positive
    ])


def text_descriptor(tag, text):
    body = text.encode("ascii")[:13]
    if len(body) < 13:
        body += b"\n" + b" " * (12 - len(body))
    return bytes([0, 0, 0, tag, 0]) + body


def edid(width, height, width_mm, height_mm):
    maker = (ord("G") - 64) << 10 | (ord("A") - 64) << 5 | (ord("U") - 64)
    block = b"\x00\xff\xff\xff\xff\xff\xff\x00"
    block += struct.pack(">H", maker) + struct.pack("<HI", 1, 1)
    block += bytes([1, 2026 - 1990, 1, 4])          # week, year; EDID 1.4
    block += bytes([0x80, round(width_mm / 10), round(height_mm / 10), 120, 0x06])
    block += bytes([0xEE, 0x91, 0xA3, 0x54, 0x4C, 0x99, 0x26, 0x0F, 0x50, 0x54])   # sRGB primaries
    block += bytes(3) + b"\x01\x01" * 8              # no established or standard timings
    block += detailed_timing(width, height, width_mm, height_mm)
    block += text_descriptor(0xFC, "Gauge panel")
    block += text_descriptor(0xFE, f"{width_mm}x{height_mm} mm")
    block += bytes([0, 0, 0, 0x10, 0]) + bytes(13)
    block += b"\x00"                                  # no extensions
    assert len(block) == 127
    return block + bytes([-sum(block) & 0xFF])


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.split("\n\n")[1])
    width, height, width_mm, height_mm = (int(a) for a in sys.argv[1:])
    sys.stdout.buffer.write(edid(width, height, width_mm, height_mm))


if __name__ == "__main__":
    main()
