#!/bin/sh
# dracut pre-pivot hook: gauged moves its root to the real root at $NEWROOT before the
# switch, so it carries on there as the one daemon of the boot.
gaugectl=${GAUGECTL:-/usr/bin/gaugectl}
if [ -x "$gaugectl" ]; then
    "$gaugectl" --no-wait --timeout 2 newroot "${NEWROOT:-/sysroot}" >/dev/null 2>&1 || :
fi
