SUMMARY = "Gauge boot progress screen, in psplash's place"
DESCRIPTION = "One daemon for the boot screen and its progress on DRM or fbdev: \
               psplash's FIFO (psplash-write), Plymouth's protocol and systemd's jobs, \
               its logo and theme files under /etc/gauge and /usr/share/gauge."
SECTION = "base"
LICENSE = "Apache-2.0"
LIC_FILES_CHKSUM = "file://LICENSE;md5=3b83ef96387f14655fc854ddc3c6bd57"

# The release's tarball for the target's architecture, built by the Gauge project
# (tools/release) with its own executable: no Embedded Swift toolchain is needed here.
# glibc 2.36 or newer; armhf is ARMv7 with hard float (callconvention-hard).
GAUGE_ARCH = "${@{'x86_64': 'amd64', 'aarch64': 'arm64', 'arm': 'armhf'}.get(d.getVar('TARGET_ARCH'), 'unsupported')}"
COMPATIBLE_HOST = "(x86_64|aarch64|arm).*-linux(-gnueabi)?$"

# Where the release folder is: set it in local.conf or a distro configuration to a
# mirror of your own (the sums below hold for any copy of the same release).
GAUGE_RELEASE_URL ?= "https://gauge.example.org/releases/${PV}"
SRC_URI = "${GAUGE_RELEASE_URL}/gauge-${PV}-${GAUGE_ARCH}.tar.gz;name=${GAUGE_ARCH}"
# SRC_URI[ARCH.sha256sum] for amd64, arm64 and armhf: written by the release.
require gauge-checksums.inc

# UNPACKDIR is Yocto 5.1's; scarthgap unpacks into WORKDIR.
UNPACKDIR ??= "${WORKDIR}"
S = "${UNPACKDIR}/gauge-${PV}-${GAUGE_ARCH}"

# A bbappend replaces the theme or the logo with its own file: FILESEXTRAPATHS:prepend
# := "${THISDIR}/files:", SRC_URI += "file://my.theme file://my-logo.png",
# GAUGE_THEME = "my.theme", GAUGE_LOGO = "my-logo.png" (README).
GAUGE_THEME ?= ""
GAUGE_LOGO ?= ""

inherit update-rc.d systemd update-alternatives

do_configure[noexec] = "1"
do_compile[noexec] = "1"

# What tools/install installs (the tarball's root/), and the init script.
do_install() {
    cp -R --no-dereference --preserve=mode,links ${S}/root/. ${D}/
    install -D -m 0755 ${S}/sysvinit/gauge ${D}${sysconfdir}/init.d/gauge
    if [ "${systemd_system_unitdir}" != "${nonarch_libdir}/systemd/system" ]; then
        install -d ${D}${systemd_system_unitdir}
        cp -R --no-dereference --preserve=mode,links ${D}${nonarch_libdir}/systemd/system/. ${D}${systemd_system_unitdir}/
        rm -r ${D}${nonarch_libdir}/systemd
    fi
    if [ -n "${GAUGE_THEME}" ]; then
        install -m 0644 ${UNPACKDIR}/${GAUGE_THEME} ${D}${sysconfdir}/gauge/gauge.theme
    fi
    if [ -n "${GAUGE_LOGO}" ]; then
        install -m 0644 ${UNPACKDIR}/${GAUGE_LOGO} ${D}${datadir}/gauge/logo.png
    fi
}

INITSCRIPT_NAME = "gauge"
INITSCRIPT_PARAMS = "start 05 S ."

SYSTEMD_SERVICE:${PN} = "gauged.service gauged-quit.service gauged-poweroff.service gauged-reboot.service \
                         gauged-halt.service gauged-kexec.service gauged-ask-password.path gauged-jobs.service gauged-waits.service \
                         gauged-packagekit.service"

# psplash's commands, at a higher priority than psplash's own: every caller of
# psplash-write (sysvinit's rc among them) drives gauged.
ALTERNATIVE:${PN} = "psplash psplash-write"
ALTERNATIVE_LINK_NAME[psplash] = "${bindir}/psplash"
ALTERNATIVE_LINK_NAME[psplash-write] = "${bindir}/psplash-write"
ALTERNATIVE_PRIORITY = "200"

PACKAGES =+ "${PN}-dracut ${PN}-initramfs-tools"
FILES:${PN}-dracut += "${nonarch_libdir}/dracut"
FILES:${PN}-initramfs-tools += "${datadir}/initramfs-tools"
FILES:${PN} += "${systemd_system_unitdir} ${datadir}/bash-completion"
# The C libraries gauged loads at its start (dlopen, so that gaugectl starts without them):
# none of the executable's NEEDED entries, so the shlib dependencies do not name them.
RDEPENDS:${PN} = "freetype libdrm libpng libudev pixman"
RDEPENDS:${PN}-dracut = "${PN} bash"
RDEPENDS:${PN}-initramfs-tools = "${PN}"

# SPLASH = "gauge" in an image installs this package in psplash's place; the plymouth
# command is gauged's too.
RPROVIDES:${PN} = "psplash"
RCONFLICTS:${PN} = "psplash plymouth"
RREPLACES:${PN} = "psplash"
CONFFILES:${PN} = "${sysconfdir}/gauge/gauge.theme"

# A prebuilt executable, stripped by the release: nothing to strip or split here.
INHIBIT_PACKAGE_STRIP = "1"
INHIBIT_PACKAGE_DEBUG_SPLIT = "1"
