#!/bin/sh
# dracut pre-trigger hook: starts gauged unless the kernel command line says no.
type getargbool >/dev/null 2>&1 || . /lib/dracut-lib.sh

if getargbool 1 gauge.enable && getargbool 1 plymouth.enable && ! getarg nosplash >/dev/null; then
    if [ -x /usr/bin/gauged ]; then
        mkdir -p /run/gauge
        /usr/bin/gauged --theme /etc/gauge/gauge.theme --psplash-fifo --plymouth-compat </dev/null >/dev/null 2>&1 &
    fi
fi
