#!/bin/sh
# dracut emergency hook: the splash goes before the emergency shell, so its messages and
# prompt show. gaugectl returns once the console is back.
gaugectl=${GAUGECTL:-/usr/bin/gaugectl}
if [ -x "$gaugectl" ]; then
    "$gaugectl" --no-wait --timeout 5 quit >/dev/null 2>&1 || :
fi
