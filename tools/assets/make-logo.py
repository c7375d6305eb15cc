#!/usr/bin/env python3
"""Draws data/gauge-logo.png, the sample theme's logo: a dial with an orange arc and a needle.
Supersampled 4x4 for anti-aliasing; no dependencies beyond the standard library."""
import math, struct, zlib, sys

SIZE, SS = 96, 4
ORANGE, GREY, WHITE = (222, 140, 23), (120, 120, 120), (240, 240, 240)

def sample(x, y):
    cx = cy = SIZE / 2
    dx, dy = x - cx, y - cy
    r = math.hypot(dx, dy)
    a = math.degrees(math.atan2(dy, dx))  # 0 = right, 90 = down
    # Dial arc from 150 deg to 390 deg (through the top), 7 px thick.
    if 33 <= r <= 42:
        t = (a - 150) % 360
        if t <= 240:
            return ORANGE if t <= 160 else GREY
    # Needle pointing at 62% of the arc, and its hub.
    na = math.radians(150 + 240 * 0.62)
    ux, uy = math.cos(na), math.sin(na)
    along = dx * ux + dy * uy
    across = abs(-dx * uy + dy * ux)
    if -4 <= along <= 34 and across <= 3.2 - along * 0.07:
        return WHITE
    if r <= 7:
        return WHITE
    return None

rows = []
for y in range(SIZE):
    row = bytearray()
    for x in range(SIZE):
        acc = [0, 0, 0, 0]
        for sy in range(SS):
            for sx in range(SS):
                c = sample(x + (sx + 0.5) / SS, y + (sy + 0.5) / SS)
                if c:
                    acc[0] += c[0]; acc[1] += c[1]; acc[2] += c[2]; acc[3] += 1
        n = acc[3]
        if n:
            row += bytes([acc[0] // n, acc[1] // n, acc[2] // n, n * 255 // (SS * SS)])
        else:
            row += bytes(4)
    rows.append(row)

def chunk(t, c):
    return struct.pack('>I', len(c)) + t + c + struct.pack('>I', zlib.crc32(t + c) & 0xffffffff)

raw = b''.join(b'\0' + bytes(r) for r in rows)
png = b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', SIZE, SIZE, 8, 6, 0, 0, 0)) \
    + chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b'')
open(sys.argv[1] if len(sys.argv) > 1 else 'data/gauge-logo.png', 'wb').write(png)
