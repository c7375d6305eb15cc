# Sourced by tools/qemu/boot-test: the configuration package-offline-update, PackageKit's
# offline update ("Restart & Install" in GNOME Software and KDE Discover), on one disk booted
# three times. Uses boot-test's $work, $results, $image, $kver, $system, in_system, state, check.
#
# The copy of the system (Gauge installed) gets packagekit and pkcon (apt, from the archive),
# three tiny packages made here (gauge-demo-a, -b, -c 1.0, installed) and a file: repository
# holding their 1.1 (the archive's sources set aside: the guest has no network).
#   boot 1 (trigger): a unit runs `pkcon -y update --only-download && pkcon offline-trigger`
#     and restarts. PackageKit needs its D-Bus and polkit for these, so they run in the
#     guest, not in the chroot. Its `pkcon refresh` is refused in a guest without network
#     ("whilst offline"), so apt reads the repository's list in the chroot instead.
#   boot 2 (update): systemd's system-update.target; pk-offline-update installs the updates,
#     reporting through the `plymouth` command, and restarts. A unit of the target writes
#     each change of `gaugectl status --json` to ttyS1, polled 5 times a second (PK-STATUS).
#   boot 3 (normal): the normal boot, to the login prompt and power-off.
# Checked (boot-test-offline-update.py for boot 2's screens): the updates screen from the
# update's start to the restart (its title, the packages and "do not turn off" on its line,
# the package being updated named there by gauged-packagekit.service, only the splash on
# screen), the bar never going back (the screendumps' fill and the
# daemon's target), success at the end, dpkg's 1.1 on the disk after, boot 3's normal splash.
# package-offline-update-fail (not in the default list: three boots more): gauge-demo-b 1.1's
# postinst fails; the failure screen naming it comes before the restart's request
# (PackageKit's ErrorCode, through gauged-packagekit.service), the others are updated.
offline_update() {
  local name=$1 run="$work/run-$1" log="$results/$1" boot t bar
  local fail=${2:-}
  rm -rf "$system" "$run" "$log"
  cp -a "$image/root" "$system"
  system_release=""
  mkdir -p "$run/debs" "$log"
  # The image keeps no package lists: apt reads the archive's first.
  in_system sh -c 'apt-get update -q && apt-get install -y -q --no-install-recommends packagekit packagekit-tools' \
    > "$log/install-packagekit.log" 2>&1 || true
  check "[$name] apt installed packagekit and pkcon" test "$(state packagekit) $(state packagekit-tools)" = "installed installed"
  offline_update_debs "$run" "$fail"
  cp "$run"/debs/*_1.0_all.deb "$system/tmp/"
  in_system sh -c 'dpkg -i /tmp/gauge-demo-*_1.0_all.deb' > "$log/install-demo.log" 2>&1 || true
  mkdir -p "$system/srv/gauge-updates" "$system/etc/apt/boot-test-off"
  cp "$run"/debs/*_1.1_all.deb "$system/srv/gauge-updates/"
  (cd "$system/srv/gauge-updates" && dpkg-scanpackages -m . /dev/null > Packages 2> /dev/null)
  find "$system/etc/apt/sources.list" "$system/etc/apt/sources.list.d" -maxdepth 1 -type f \
    -exec mv -t "$system/etc/apt/boot-test-off" {} + 2> /dev/null || true
  echo "deb [trusted=yes] file:/srv/gauge-updates ./" > "$system/etc/apt/sources.list.d/gauge-updates.list"
  # PackageKit refuses `pkcon refresh` in the guest, which has no network card ("Cannot
  # refresh cache whilst offline", even with a default route on lo or GLib's base network
  # monitor): apt reads the file: repository's list here instead. Downloading from a file:
  # repository fetches nothing, which PackageKit allows offline.
  in_system apt-get update -q > "$log/apt-update.log" 2>&1 || true
  offline_update_units
  in_system systemctl enable boot-test-pk-trigger.service boot-test-pk-watch.service > "$log/enable.log" 2>&1
  in_system systemctl disable boot-test-report.service >> "$log/enable.log" 2>&1
  check "[$name] packagekit's offline-update unit is installed" \
    test -e "$system/usr/lib/systemd/system/packagekit-offline-update.service"
  cp "$system/boot/initrd.img-$kver" "$run/initrd.img"
  mkfs.ext4 -q -F -L root -d "$system" "$run/disk.img" 3G
  rm -rf "$system"
  for boot in trigger update normal; do
    offline_update_boot "$name" "$boot" "$log" "$run"
    # A guest kernel that panicked is the emulator's failure (as for the other
    # configurations: an int3 left by a code patch under TCG), not the update's: its
    # screens and logs kept in BOOT-kernel-panic, the same boot once more.
    if grep -q 'Kernel panic - not syncing' "$log/$boot/serial.log" 2>/dev/null; then
      echo "boot-test: [$name] the guest's kernel panicked in the $boot boot; booting it once more"
      rm -rf "$log/$boot-kernel-panic"
      mv "$log/$boot" "$log/$boot-kernel-panic"
      offline_update_boot "$name" "$boot" "$log" "$run"
    fi
    offline_update_checks "$name" "$boot" "$log/$boot" "$run" "$fail"
  done
  rm -f "$run/disk.img"
}

# offline_update_debs RUN [FAIL]: gauge-demo-a, -b and -c 1.0 and 1.1 built into RUN/debs
# (with FAIL, gauge-demo-b 1.1's postinst fails).
offline_update_debs() {
  local run=$1 fail=${2:-} version p d
  for version in 1.0 1.1; do
    for p in a b c; do
      d="$run/pkg/$p-$version"
      mkdir -p "$d/DEBIAN" "$d/usr/share/gauge-demo"
      echo "$version" > "$d/usr/share/gauge-demo/$p"
      printf 'Package: gauge-demo-%s\nVersion: %s\nArchitecture: all\nMaintainer: Gauge boot test <root@localhost>\nDescription: a package the boot test updates\n' \
        "$p" "$version" > "$d/DEBIAN/control"
      if [ -n "$fail" ] && [ "$p$version" = b1.1 ]; then
        printf '#!/bin/sh\necho "gauge-demo-b: this postinst fails on purpose" >&2\nexit 1\n' > "$d/DEBIAN/postinst"
        chmod 0755 "$d/DEBIAN/postinst"
      fi
      dpkg-deb --root-owner-group -b "$d" "$run/debs/gauge-demo-${p}_${version}_all.deb" > /dev/null
    done
  done
}

# offline_update_boot NAME BOOT LOG RUN: one of the three boots of the disk (panic=1: a
# guest kernel that panics restarts, which ends QEMU, rather than waiting out the timeout).
offline_update_boot() {
  local name=$1 boot=$2 log=$3 run=$4 t
  t=$(date +%s)
  mkdir -p "$log/$boot"
  python3 tools/qemu/boot-test-check.py --name "$name-$boot" --kernel "$image/vmlinuz" --initrd "$run/initrd.img" \
    --disk "$run/disk.img" --append "root=/dev/vda ro console=ttyS0 console=tty0 quiet splash panic=1" --timeout 600 \
    --work "$run/$boot" --results "$log/$boot" -- -vga std > "$log/$boot/checker.txt" 2>&1 || true
  # The checker's own verdicts are about a boot to the login prompt: not these boots' checks.
  rm -f "$log/$boot/failures" "$log/$boot/passed" "$log/$boot/failed"
  echo "boot-test: [$name] $boot boot in $(( $(date +%s) - t )) s"
}

# The guest's side: the trigger's unit (boot 1) and the watch (boot 2).
offline_update_units() {
  cat > "$system/usr/local/sbin/boot-test-pk-trigger" <<'EOF'
#!/bin/sh
exec > /dev/ttyS1 2>&1
echo "GAUGE-STEP pk-trigger $(cut -d' ' -f1 /proc/uptime)"
# (Refused offline, which the guest is: the boot test's apt read the list in the chroot.)
pkcon refresh > /tmp/pk-refresh.log 2>&1
echo "PK-REFRESH exit $? $(tr '\r' '\n' < /tmp/pk-refresh.log | grep -a 'error' | head -1)"
{ pkcon -y update --only-download && pkcon offline-trigger; } > /tmp/pk.log 2>&1
echo "PK-TRIGGER exit $? $(readlink /system-update)"
journalctl -b --no-pager -u packagekit.service | tail -15 | sed 's/^/PK-JOURNAL /'
tr '\r' '\n' < /tmp/pk.log | grep -v '^ *$' | tail -40 | sed 's/^/PK-LOG /'
sed 's/^/PK-PREPARED /' /var/lib/PackageKit/prepared-update
systemctl disable boot-test-pk-trigger.service
systemctl enable boot-test-report.service
echo "GAUGE-STEP reboot $(cut -d' ' -f1 /proc/uptime)"
systemctl --no-block reboot
EOF
  cat > "$system/usr/local/sbin/boot-test-pk-watch" <<'EOF'
#!/bin/sh
exec > /dev/ttyS1 2>&1
echo "GAUGE-STEP system-update $(cut -d' ' -f1 /proc/uptime)"
# Each change (the frame count and animation left out), with the uptime from before it was
# read: the update's end is known to the poll's interval.
last="" journal=""
while :; do
  t=$(cut -d' ' -f1 /proc/uptime)
  s=$(gaugectl --timeout 2 status --json 2>&1 | tr -d '\n' | sed 's/"frames":[0-9]*,//; s/"animating":[a-z]*,//; s/"shown":[0-9.]*,//')
  [ "$s" = "$last" ] || echo "PK-STATUS $t $s"
  # Once the restart is asked for: what PackageKit, its update and Gauge's follower logged.
  case "$journal$s" in '{'*'"title":"Restarting"'*) journal=done; journalctl -b --no-pager -o short-monotonic \
    -u packagekit.service -u packagekit-offline-update.service -u gauged-packagekit.service | tail -40 | sed 's/^/PK-JOURNAL /' ;; esac
  last=$s
  sleep 0.2
done
EOF
  chmod 0755 "$system/usr/local/sbin/boot-test-pk-trigger" "$system/usr/local/sbin/boot-test-pk-watch"
  cat > "$system/etc/systemd/system/boot-test-pk-trigger.service" <<'EOF'
[Unit]
Description=boot-test: PackageKit prepares the offline update
After=multi-user.target
[Service]
Type=simple
ExecStart=/usr/local/sbin/boot-test-pk-trigger
[Install]
WantedBy=multi-user.target
EOF
  cat > "$system/etc/systemd/system/boot-test-pk-watch.service" <<'EOF'
[Unit]
Description=boot-test: what the updates screen shows
DefaultDependencies=no
After=sysinit.target
[Service]
Type=simple
ExecStart=/usr/local/sbin/boot-test-pk-watch
[Install]
WantedBy=system-update.target
EOF
}

# offline_update_checks NAME BOOT RESULTS RUN: the checks of one of the three boots.
offline_update_checks() {
  local name=$1 boot=$2 out=$3 run=$4 fail=$5 bar expected="gauge-demo-a=1.1 gauge-demo-b=1.1 gauge-demo-c=1.1 "
  case $boot in
    trigger)
      check "[$name] pkcon update --only-download and offline-trigger ($(grep '^PK-TRIGGER' "$out/report.log"))" \
        grep -q '^PK-TRIGGER exit 0 /' "$out/report.log"
      check "[$name] PackageKit prepared the three updates" \
        sh -c '[ "$(grep "^PK-PREPARED prepared_ids" "$1" | grep -o "gauge-demo-[abc];1\.1" | sort -u | wc -l)" -eq 3 ]' - "$out/report.log"
      ;;
    update)
      python3 tools/qemu/boot-test-offline-update.py "$out" ${fail:+--fail gauge-demo-b} > "$out/updates.txt" 2>&1 || true
      sed 's/^/  /' "$out/updates.txt"
      check "[$name] the updates screen, its bar and its end (updates.txt)" sh -c '! grep -q "^FAIL" "$1" && grep -q "^PASS" "$1"' - "$out/updates.txt"
      mkdir -p "$run/dpkg"
      debugfs -R "cat /var/lib/dpkg/status" "$run/disk.img" > "$run/dpkg/status" 2> /dev/null
      dpkg-query --admindir="$run/dpkg" -W -f='${Package}=${Version} ' 'gauge-demo-*' > "$out/versions.txt" 2>&1 || true
      # A failed postinst leaves its package unpacked (1.1, not configured): its status says so.
      [ -z "$fail" ] || { expected="gauge-demo-b=half-configured"
        dpkg-query --admindir="$run/dpkg" -W -f='${Package}=${db:Status-Status} ' gauge-demo-b > "$out/versions.txt" 2>&1 || true; }
      check "[$name] dpkg-query after the update: $(cat "$out/versions.txt")" \
        sh -c 'case "$1" in *"$2"*) exit 0 ;; *) exit 1 ;; esac' - "$(cat "$out/versions.txt")" "$expected"
      ;;
    normal)
      bar=$(grep -cE ': (splash|text-over-splash)' "$out/frames.txt" || true)
      check "[$name] after the restart the normal boot's splash ($bar frames with the bar), not the updates screen" \
        sh -c '[ "$1" -gt 0 ] && ! grep -q "Installing updates" "$2"' - "$bar" "$out/report.log"
      check "[$name] the login prompt on tty1 at the end" grep -q '^GAUGE-VT |.*login:' "$out/report.log"
      ;;
  esac
}
