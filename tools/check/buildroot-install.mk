# A stand-in for the part of Buildroot that installs a package, so gauge.mk's install steps
# run here as Buildroot runs them (tools/check/check-boards, tools/qemu/vm-test):
#   make -f tools/check/buildroot-install.mk CONFIG=.config BR2_EXTERNAL_GAUGE_PATH=integration/buildroot \
#     GAUGE_DIR=BUILD TARGET_DIR=ROOT INIT=SYSV|SYSTEMD BUILD/.stamp_target_installed
# reads the configuration (BR2_...=y, strings quoted), Buildroot's helpers the package
# uses, the external tree's makefiles, then in the package's build directory (the tarball
# unpacked without its top directory: $(@D)) runs GAUGE_INSTALL_TARGET_CMDS and
# GAUGE_INSTALL_INIT_$(INIT). `make ... print-VAR` prints a variable.
include $(CONFIG)
INSTALL = install
qstrip = $(strip $(subst ",,$(1)))
define sep


endef
generic-package =
include $(BR2_EXTERNAL_GAUGE_PATH)/external.mk
$(GAUGE_DIR)/.stamp_target_installed:
	$(GAUGE_INSTALL_TARGET_CMDS)
	$(GAUGE_INSTALL_INIT_$(INIT))
print-%:
	@echo '$($*)'
