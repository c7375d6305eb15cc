################################################################################
#
# gauge
#
################################################################################

# The release's prebuilt tarball for the target's architecture (gauge.hash: the release's
# sums; Buildroot strips its top directory).
GAUGE_VERSION = 0.1.0
ifeq ($(BR2_aarch64),y)
GAUGE_ARCH = arm64
else ifeq ($(BR2_arm),y)
GAUGE_ARCH = armhf
else
GAUGE_ARCH = amd64
endif
GAUGE_SOURCE = gauge-$(GAUGE_VERSION)-$(GAUGE_ARCH).tar.gz
GAUGE_SITE = $(call qstrip,$(BR2_PACKAGE_GAUGE_SITE))
GAUGE_LICENSE = Apache-2.0
GAUGE_LICENSE_FILES = LICENSE
GAUGE_DEPENDENCIES = libdrm pixman freetype libpng udev

GAUGE_THEME = $(call qstrip,$(BR2_PACKAGE_GAUGE_THEME))
GAUGE_LOGO = $(call qstrip,$(BR2_PACKAGE_GAUGE_LOGO))

# What tools/install installs (the tarball's root/): the executable and its links,
# psplash's two commands, the units, the theme, the logo and the rest.
define GAUGE_INSTALL_TARGET_CMDS
	cp -R --no-dereference --preserve=mode,links $(@D)/root/. $(TARGET_DIR)/
	$(if $(BR2_PACKAGE_DEJAVU),printf 'font = %s\nbold_font = %s\n' \
		/usr/share/fonts/dejavu/DejaVuSans.ttf /usr/share/fonts/dejavu/DejaVuSans-Bold.ttf \
		>> $(TARGET_DIR)/etc/gauge/gauge.theme)
	$(if $(GAUGE_THEME),$(INSTALL) -m 0644 $(GAUGE_THEME) $(TARGET_DIR)/etc/gauge/gauge.theme)
	$(if $(GAUGE_LOGO),$(INSTALL) -m 0644 $(GAUGE_LOGO) $(TARGET_DIR)/usr/share/gauge/logo.png)
endef

# Busybox's or sysvinit's rcS runs it early, before the scripts that call psplash-write.
define GAUGE_INSTALL_INIT_SYSV
	$(INSTALL) -D -m 0755 $(@D)/sysvinit/gauge $(TARGET_DIR)/etc/init.d/S02gauge
endef

# The units are installed with the rest; enabled as `systemctl enable` would.
define GAUGE_INSTALL_INIT_SYSTEMD
	mkdir -p $(TARGET_DIR)/etc/systemd/system/sysinit.target.wants \
		$(TARGET_DIR)/etc/systemd/system/multi-user.target.wants
	$(foreach unit,gauged.service gauged-ask-password.path gauged-jobs.service gauged-waits.service, \
		ln -sf /usr/lib/systemd/system/$(unit) $(TARGET_DIR)/etc/systemd/system/sysinit.target.wants/$(unit)$(sep))
	ln -sf /usr/lib/systemd/system/gauged-quit.service \
		$(TARGET_DIR)/etc/systemd/system/multi-user.target.wants/gauged-quit.service
	mkdir -p $(TARGET_DIR)/etc/systemd/system/system-update.target.wants
	ln -sf /usr/lib/systemd/system/gauged-packagekit.service \
		$(TARGET_DIR)/etc/systemd/system/system-update.target.wants/gauged-packagekit.service
	$(foreach target,poweroff reboot halt kexec, \
		mkdir -p $(TARGET_DIR)/etc/systemd/system/$(target).target.wants$(sep) \
		ln -sf /usr/lib/systemd/system/gauged-$(target).service \
			$(TARGET_DIR)/etc/systemd/system/$(target).target.wants/gauged-$(target).service$(sep))
endef

$(eval $(generic-package))
