#!/bin/bash
# dracut module: gauged (gaugectl is a link to it), its libraries, the theme, its logo and
# fonts, and hooks that start gauged before udev triggers and move it into the real root
# before the switch (or, in a systemd initramfs, the units that do it). Install the
# directory as /usr/lib/dracut/modules.d/90gauge. The list of files comes from gauge-files,
# the one place it is kept.

check() {
    require_binaries "${GAUGE_BINDIR:-/usr/bin}/gauged" || return 1
    # Only when asked for (dracut --add gauge, or add_dracutmodules+=" gauge ").
    return 255
}

depends() {
    echo drm
}

installkernel() {
    # The keyboards as input devices (evdev, which udev loads for them): Escape on the
    # splash and the failure screen's keys, before the root file system is there.
    hostonly='' instmods evdev
}

# A library gauged loads at run time and the libraries it needs: dracut resolves those of
# executables only, and no executable needs these (trixie's FreeType needs libbz2, which
# nothing else in an initrd brings).
inst_loaded_library() {
    local dependency
    inst_binary "$1" || return 1
    for dependency in $(ldd "$1" 2>/dev/null | sed -n 's|.*=> \(/[^ ]*\) .*|\1|p'); do
        inst_binary "$dependency" || return 1
    done
}

install() {
    local list kind path target gaugectl="" output
    list=$("${GAUGE_FILES:-/usr/share/gauge/gauge-files}") || return 1
    while read -r kind path target; do
        case "$kind" in
        exec) inst_binary "$path" || return 1 ;;
        needed) inst_loaded_library "$path" || return 1 ;;
        library) inst_loaded_library "$path" || dwarn "gauge: cannot add $path: the failure screen shows no QR code" ;;
        link)
            mkdir -p "$initdir${path%/*}" && ln -sfn "$target" "$initdir$path" || return 1
            [[ $path != */gaugectl ]] || gaugectl=$path ;;
        file)
            # A font: copied by the system's own gaugectl without what gauged never reads
            # of it (`gaugectl copy-font`), else as it is (and one already there is kept).
            if [[ $path == *.[tT][tT][fF] || $path == *.[oO][tT][fF] ]] && [[ -x $gaugectl && ! -e $initdir$path ]] &&
                mkdir -p "$initdir${path%/*}" && output=$("$gaugectl" copy-font "$path" "$initdir$path"); then
                dinfo "gauge: $output"
            else
                inst_simple "$path"
            fi ;;
        esac
    done <<<"$list"
    # The console keymap as gauged reads it where keys come from /dev/input (no VT).
    "${GAUGE_FILES:-/usr/share/gauge/gauge-files}" --write-keymap "$initdir/etc/gauge/keymap.bmap" ||
        dwarn "gauge: keys typed into questions will be read in the US layout"
    # The last boot's history (gauged --boot); the real root's, newer, is read after the switch.
    if [ -f /var/lib/gauge/boot-duration ]; then inst_simple /var/lib/gauge/boot-duration; fi

    if dracut_module_included "systemd"; then
        # gauged.service starts the daemon (its argv[0] gets '@' in an initrd, so
        # systemd leaves it running at switch-root); gauged-switch-root.service moves it
        # into /sysroot first; the emergency shell quits it to get the console.
        inst_multiple -o "$systemdsystemunitdir/gauged.service" "$systemdsystemunitdir/gauged-switch-root.service" \
            "$systemdsystemunitdir/emergency.service.d/gauge.conf" "$systemdsystemunitdir/rescue.service.d/gauge.conf"
        $SYSTEMCTL -q --root "$initdir" add-wants sysinit.target gauged.service 2>/dev/null || :
        # The initrd's daemon lives on across switch-root, in the namespaces it started
        # in: a mount namespace of its own would keep the real root as the initrd mounted
        # it (read-only: no boot history, no socket removed). This drop-in, in the initrd
        # only, leaves that one out; gauged.service started in the real root keeps it.
        mkdir -p "$initdir$systemdsystemunitdir/gauged.service.d" &&
            printf '%s\n' '[Service]' 'PrivateMounts=no' 'ProtectKernelTunables=no' 'ProtectKernelModules=no' \
                'ProtectKernelLogs=no' 'ProtectControlGroups=no' 'ProtectProc=default' \
                >"$initdir$systemdsystemunitdir/gauged.service.d/initrd.conf"
        $SYSTEMCTL -q --root "$initdir" add-wants initrd-switch-root.target gauged-switch-root.service 2>/dev/null || :
        # The initrd's jobs followed too (gauged-waits.service, which gauged.service starts
        # once its daemon is ready): what the boot waits for, the steps' descriptions, and
        # a failed boot's first words the moment systemd queues dracut's emergency shell,
        # before the failure screen's own unit has started. Its client loads libsystemd for
        # sd-bus. It ends before the switch, where the real root's own follows on.
        if inst_multiple -o "$systemdsystemunitdir/gauged-waits.service" && inst_libdir_file "libsystemd.so.0*"; then
            mkdir -p "$initdir$systemdsystemunitdir/gauged-waits.service.d" &&
                printf '%s\n' '[Unit]' 'Conflicts=initrd-switch-root.target' 'Before=initrd-switch-root.target' \
                    >"$initdir$systemdsystemunitdir/gauged-waits.service.d/initrd.conf"
        else
            dwarn "gauge: the initrd's jobs are not followed (no gauged-waits.service or libsystemd)"
        fi
        # systemd's password requests (an encrypted root's passphrase) reach the splash
        # while a gauged --ask (gauge.ask=1) runs, through systemd's own Plymouth agent.
        inst_multiple -o "$systemdsystemunitdir/gauged-ask-password.path" "$systemdsystemunitdir/gauged-ask-password.service" \
            systemd-tty-ask-password-agent
        $SYSTEMCTL -q --root "$initdir" add-wants sysinit.target gauged-ask-password.path 2>/dev/null || :
        # A failed boot's screen (gauged-boot-failed@.service runs /usr/share/gauge/boot-failed)
        # before systemd's emergency shell and before dracut's own, which its initqueue starts
        # when the root never came: both begin by ending the splash. The script needs awk
        # besides what dracut puts in.
        if inst_multiple -o "$systemdsystemunitdir/gauged-boot-failed@.service" /usr/share/gauge/boot-failed awk; then
            local unit
            for unit in emergency.target dracut-emergency.service; do
                mkdir -p "$initdir$systemdsystemunitdir/$unit.wants" &&
                    ln -sfn ../gauged-boot-failed@.service \
                        "$initdir$systemdsystemunitdir/$unit.wants/gauged-boot-failed@${unit%.*}.service"
            done
        fi
        # Not the screen of a unit that fails while the boot goes on (gauged-unit-failed@ and
        # the top-level drop-ins service.d/, mount.d/ that start it): an initrd unit the boot
        # needs fails into the emergency shell, whose screen is above, and the switch to the
        # real root would stop a handler still waiting for its key.
    else
        inst_hook pre-trigger 10 "$moddir/gauge-start.sh"
        inst_hook pre-pivot 90 "$moddir/gauge-newroot.sh"
    fi
    # dracut's emergency shell, with or without systemd, runs the emergency hooks first.
    inst_hook emergency 50 "$moddir/gauge-emergency.sh"
}
