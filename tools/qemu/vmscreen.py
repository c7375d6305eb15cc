"""What the harnesses read on QEMU's screens (tools/qemu/vm-test-check.py,
tools/qemu/boot-test-check.py, tools/qemu/vm-bench-boot.py): the `screendump` PPMs, the
default theme's bar geometry and colours, a text console's letters. QEMU itself is
tools/qemu/qemu.py's. Standard library only.
"""
import gzip
import struct
import zlib

# Default theme (Sources/GaugeRender/Theme.swift, Layout.swift) at scale 1.
BAR_FRACTION, BAR_MIN, BAR_MAX, BAR_HEIGHT, BAR_CENTER = 0.5, 200, 1200, 24, 5 / 6
BLACK_MAX = 24          # a background pixel: every channel at most this
GREY = 130              # track (0.51, 0.51, 0.51)


def swift_round(v):
    return int(v + 0.5) if v >= 0 else -int(-v + 0.5)


class Image:
    """An 8-bit binary PPM (P6), as QEMU's screendump writes it."""

    def __init__(self, path):
        with open(path, "rb") as f:
            data = f.read()
        fields, pos = [], 0
        while len(fields) < 4:
            while data[pos:pos + 1].isspace():
                pos += 1
            if data[pos:pos + 1] == b"#":
                pos = data.index(b"\n", pos)
                continue
            end = pos
            while not data[end:end + 1].isspace():
                end += 1
            fields.append(data[pos:end])
            pos = end
        if fields[0] != b"P6" or fields[3] != b"255":
            raise ValueError(f"{path}: not an 8-bit P6 PPM")
        self.width, self.height = int(fields[1]), int(fields[2])
        self.pixels = data[pos + 1:pos + 1 + self.width * self.height * 3]
        if len(self.pixels) != self.width * self.height * 3:
            raise ValueError(f"{path}: short PPM")
        self.path = path

    def at(self, x, y):
        i = (y * self.width + x) * 3
        return self.pixels[i], self.pixels[i + 1], self.pixels[i + 2]

    def turned(self, degrees):
        """This picture turned clockwise by 90, 180 or 270 degrees (how a panel mounted
        sideways shows its scan-out to the person holding the device)."""
        w, h, px = self.width, self.height, self.pixels
        if degrees == 180:
            rows = [b"".join(px[(y * w + x) * 3:(y * w + x) * 3 + 3] for x in range(w - 1, -1, -1)) for y in range(h - 1, -1, -1)]
            nw, nh = w, h
        elif degrees in (90, 270):
            # Clockwise: the new row j is old column j read bottom to top; 270: column
            # w-1-j read top to bottom.
            if degrees == 90:
                rows = [b"".join(px[(y * w + j) * 3:(y * w + j) * 3 + 3] for y in range(h - 1, -1, -1)) for j in range(w)]
            else:
                rows = [b"".join(px[(y * w + w - 1 - j) * 3:(y * w + w - 1 - j) * 3 + 3] for y in range(h)) for j in range(w)]
            nw, nh = h, w
        else:
            return self
        turned = object.__new__(Image)
        turned.width, turned.height, turned.pixels, turned.path = nw, nh, b"".join(rows), self.path
        return turned

    def save_png(self, path):
        rows = b"".join(b"\0" + self.pixels[y * self.width * 3:(y + 1) * self.width * 3] for y in range(self.height))

        def chunk(kind, body):
            return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        with open(path, "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0))
                    + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b""))


def bar_rect(w, h, scale=1):
    """The bar's (x, y, width, height) on a w×h screen (Layout's plain style)."""
    bw = swift_round(min(max(w * BAR_FRACTION, BAR_MIN * scale), BAR_MAX * scale, w))
    bh = min(BAR_HEIGHT * scale, h)
    below = 16 * scale + -int(-16 * scale * 1.3 // 1)   # text gap + one message line
    y = max(0, min(swift_round(h * BAR_CENTER) - bh // 2, h - bh - below))
    return (w - bw) // 2, y, bw, bh


def is_black(p):
    return max(p) <= BLACK_MAX


def is_grey(p):
    return max(p) - min(p) <= 16 and GREY - 40 <= sum(p) / 3 <= GREY + 30


def is_orange(p):
    r, g, b = p
    # (0.87, 0.55, 0.09) = (222, 140, 23), lighter to darker, stripes white at 20%.
    return r >= 150 and r > g + 30 and g > b + 40 and b <= 120


class ConsoleFont:
    """A PSF1 console font as one integer per glyph, for reading a text console's screen.
    console-data's iso01.f16 has the kernel's built-in VGA 8x16 glyphs for ASCII (read back
    letter for letter from a Debian 12 guest's console; its default8x16 differs in a few)."""

    DEFAULT = "/usr/share/consolefonts/iso01.f16.psf.gz"

    def __init__(self, path=DEFAULT):
        with gzip.open(path, "rb") as f:
            data = f.read()
        if data[:2] != b"\x36\x04":
            raise ValueError(f"{path}: not a PSF1 font")
        self.height = data[3]
        count = 512 if data[2] & 1 else 256
        glyphs = data[4:4 + count * self.height]
        # Printable ASCII sits at its own code in the VGA layout.
        self.glyphs = [(chr(code), int.from_bytes(glyphs[code * self.height:(code + 1) * self.height], "big"))
                       for code in range(0x21, 0x7F)]

    def read(self, img, lit=80):
        """The text on a console screen drawn with this font in 8-pixel cells, one string a
        row (trailing blanks dropped); a cell that matches no glyph well reads '?'."""
        rows = []
        height = self.height
        for top in range(0, img.height - height + 1, height):
            line = []
            for left in range(0, img.width - 7, 8):
                bits = 0
                for y in range(top, top + height):
                    start = (y * img.width + left) * 3
                    row = img.pixels[start:start + 24]
                    byte = 0
                    for x in range(8):
                        byte = byte << 1 | (1 if max(row[x * 3:x * 3 + 3]) > lit else 0)
                    bits = bits << 8 | byte
                if bits == 0:
                    line.append(" ")
                    continue
                best, distance = "?", 8 * height
                for char, glyph in self.glyphs:
                    d = bin(bits ^ glyph).count("1")
                    if d < distance:
                        best, distance = char, d
                line.append(best if distance <= height else "?")
            rows.append("".join(line).rstrip())
        return rows
