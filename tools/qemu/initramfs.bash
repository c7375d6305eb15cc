# The one initramfs builder of the QEMU harnesses (tools/qemu/vm-test, for x86 and each ARM
# board, and tools/qemu/vm-bench), sourced by them: busybox, gauged with its libraries and
# the files integration/gauge-files lists (the theme, the font), kernel modules with their
# dependencies, packed as the kernel unpacks it (newc cpio, gzip). A harness adds only
# what is its own: its init, its own executables and files, a second archive over the first.
#
#   initramfs_tree TREE BUSYBOX                 the directories and the (static) busybox
#   initramfs_exec TREE FILE DEST [SYSROOT MULTIARCH]
#                                               an executable at DEST with its shared
#                                               libraries: this machine's (ldd), or a
#                                               foreign one's from SYSROOT (readelf, the
#                                               loader linked where the executable names it)
#   initramfs_library TREE PATH [SYSROOT MULTIARCH]
#                                               a library gauged loads at run time, with the
#                                               libraries it needs, as initramfs_exec
#   initramfs_gauge TREE GAUGED [SYSROOT MULTIARCH]
#                                               gauged (gaugectl and plymouth links to it), the
#                                               libraries it loads and the data files, from
#                                               integration/gauge-files
#   initramfs_modules TREE ROOT KVER MODULE...  the modules and theirs from ROOT's modules of
#                                               KVER, decompressed (busybox insmod) into
#                                               TREE/lib/modules/gauge; prints their names,
#                                               comma-separated, in load order
#   initramfs_pack TREE OUT [BASE]              TREE packed into OUT; with BASE, OUT is BASE
#                                               with TREE's archive after it (the kernel
#                                               unpacks the second over the first)
# Runs from the top of the repository, under `set -euo pipefail`.

initramfs_tree() {
  local tree=$1 busybox=$2
  mkdir -p "$tree"/{bin,sbin,usr/bin,proc,sys,dev,run,tmp,lib/modules/gauge}
  cp "$busybox" "$tree/bin/busybox"
}

initramfs_exec() {
  local tree=$1 file=$2 dest=$3 sysroot=${4:-} multiarch=${5:-} lib interp
  mkdir -p "$tree$(dirname "$dest")"
  cp -L "$file" "$tree$dest"
  if [ -z "$sysroot" ]; then
    ldd "$file" | grep -o '/[^ ]*' | while read -r lib; do
      mkdir -p "$tree$(dirname "$lib")"
      cp -L "$lib" "$tree$lib"
    done
    return
  fi
  initramfs_needed "$tree" "$tree$dest" "$sysroot" "$multiarch"
  interp=$(readelf -l "$file" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
  [ -e "$tree/lib/$multiarch/$(basename "$interp")" ] || { echo "initramfs: no $interp for $multiarch" >&2; return 1; }
  mkdir -p "$tree$(dirname "$interp")"
  ln -sfn "$multiarch/$(basename "$interp")" "$tree$interp"
}

# The libraries ELF (in TREE) needs, and theirs, from SYSROOT into TREE/lib/MULTIARCH.
initramfs_needed() {
  local tree=$1 sysroot=$3 multiarch=$4 elf lib pending
  mkdir -p "$tree/lib/$multiarch"
  pending=("$2")
  while [ ${#pending[@]} -gt 0 ]; do
    elf=${pending[0]}
    pending=("${pending[@]:1}")
    for lib in $(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      [ -e "$tree/lib/$multiarch/$lib" ] && continue
      cp -L "$sysroot/usr/lib/$multiarch/$lib" "$tree/lib/$multiarch/$lib"
      pending+=("$tree/lib/$multiarch/$lib")
    done
  done
}

# A library gauged loads at run time (PATH, as integration/gauge-files lists it) with the
# libraries it needs: this machine's, or the sysroot's of that name for another architecture.
initramfs_library() {
  local tree=$1 path=$2 sysroot=${3:-} multiarch=${4:-} lib
  if [ -z "$sysroot" ]; then
    for lib in "$path" $(ldd "$path" | grep -o '/[^ ]*'); do
      mkdir -p "$tree$(dirname "$lib")"
      cp -L "$lib" "$tree$lib"
    done
    return
  fi
  [ -e "$sysroot/usr/lib/$multiarch/$(basename "$path")" ] || {
    echo "initramfs: no $(basename "$path") in $sysroot for $multiarch" >&2; return 1; }
  mkdir -p "$tree/lib/$multiarch"
  cp -L "$sysroot/usr/lib/$multiarch/$(basename "$path")" "$tree/lib/$multiarch/"
  initramfs_needed "$tree" "$tree/lib/$multiarch/$(basename "$path")" "$sysroot" "$multiarch"
}

initramfs_gauge() {
  local tree=$1 gauged=$2 sysroot=${3:-} multiarch=${4:-} staged kind path target
  # Gauge's files from the one list the initramfs hooks use: binaries with their shared
  # libraries, the libraries gauged loads (with theirs), then data files.
  staged=$(mktemp -d)
  cp "$gauged" "$staged/gauged"
  GAUGE_BINDIR="$staged" integration/gauge-files | while read -r kind path target; do
    case "$kind" in
      exec) initramfs_exec "$tree" "$path" "/usr/bin/$(basename "$path")" "$sysroot" "$multiarch" ;;
      needed) initramfs_library "$tree" "$path" "$sysroot" "$multiarch" ;;
      link) ln -sfn "$target" "$tree/usr/bin/$(basename "$path")" ;;
      file) mkdir -p "$tree$(dirname "$path")"; cp -L "$path" "$tree$path" ;;
      # libqrencode, loaded at run time, needing only the C library gauged brings: this
      # machine's, or the sysroot's of that name for another architecture, where it has one.
      library)
        if [ -z "$sysroot" ]; then
          mkdir -p "$tree$(dirname "$path")"; cp -L "$path" "$tree$path"
        elif [ -e "$sysroot/usr/lib/$multiarch/$(basename "$path")" ]; then
          mkdir -p "$tree/lib/$multiarch"; cp -L "$sysroot/usr/lib/$multiarch/$(basename "$path")" "$tree/lib/$multiarch/"
        fi ;;
      *) echo "initramfs: unknown line from integration/gauge-files: $kind $path" >&2; exit 1 ;;
    esac
  done
  rm -rf "$staged"
  [ -x "$tree/usr/bin/gauged" ] && [ -L "$tree/usr/bin/gaugectl" ] && [ -L "$tree/usr/bin/plymouth" ] \
    && [ -f "$tree/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf" ] || {
    echo "initramfs: integration/gauge-files did not list gauged, gaugectl, plymouth and the font" >&2; return 1; }
}

initramfs_modules() {
  local into=$1 from=$2 version=$3 path name target
  shift 3
  modprobe -a --show-depends -d "$from" -S "$version" "$@" | awk '$1 == "insmod" { print $2 }' | while read -r path; do
    name=$(basename "$path"); name=${name%.xz}; name=${name%.zst}; name=${name%.gz}; name=${name%.ko}
    target="$into/lib/modules/gauge/$name.ko"
    if [ ! -e "$target" ]; then
      case "$path" in
        *.xz) xz -dc "$path" > "$target" ;;
        *.zst) zstd -qdc "$path" > "$target" ;;
        *.gz) gzip -dc "$path" > "$target" ;;
        *) cp "$path" "$target" ;;
      esac
    fi
    echo "$name"
  done | awk '!seen[$0]++' | paste -sd, -
}

initramfs_pack() {
  local tree=$1 out=$2 base=${3:-}
  (cd "$tree" && find . | cpio -o -H newc --quiet | gzip -1) > "$out.part"
  if [ -n "$base" ]; then
    cat "$base" "$out.part" > "$out"
    rm "$out.part"
  else
    mv "$out.part" "$out"
  fi
}
