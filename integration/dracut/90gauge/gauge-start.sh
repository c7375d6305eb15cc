#!/bin/sh
# dracut pre-trigger hook: starts gauged unless the kernel command line says no.
type getargbool >/dev/null 2>&1 || . /lib/dracut-lib.sh

if getargbool 1 gauge.enable && getargbool 1 plymouth.enable && ! getarg nosplash >/dev/null; then
    if [ -x /usr/bin/gauged ]; then
        mkdir -p /run/gauge
        # Its log lines go to the kernel log (one write per line, one record each), so the
        # journal keeps what happened in the initramfs.
        log=/dev/null
        [ -w /dev/kmsg ] && log=/dev/kmsg
        # (gauge.ask=1, questions asked on the splash, gauged --boot reads itself.)
        /usr/bin/gauged --boot --theme /etc/gauge/gauge.theme --psplash-fifo --plymouth-compat </dev/null >/dev/null 2>"$log" &
    fi
fi
