#ifndef CGAUGEBUS_H
#define CGAUGEBUS_H
/*
 * Reading D-Bus properties through sd-bus (libsystemd), for gaugectl's progress sources
 * (systemd, RAUC, fwupd). libsystemd is loaded with dlopen the first time it is needed,
 * so the gauge executable does not depend on it (nor on what it pulls in): gauged and
 * every other gaugectl command run where it is absent, and an initramfs image holds it
 * only if it wants these sources. All D-Bus encoding is sd-bus's.
 *
 * Every call returns 0 or a negative errno; on failure `message` (of `size` bytes) holds
 * why, from the D-Bus error when there is one.
 */
#include <stddef.h>
#include <stdint.h>

typedef struct gauge_bus gauge_bus;

/* Connects to the bus at `address` (a D-Bus address), or to the system bus when it is
 * NULL (which honours $DBUS_SYSTEM_BUS_ADDRESS). `timeout_usec`: the limit of each call
 * (0: sd-bus's default of 25 s). */
int gauge_bus_open(const char *address, uint64_t timeout_usec, gauge_bus **bus, char *message, size_t size);

void gauge_bus_close(gauge_bus *bus);

/* Property getters, one per D-Bus type. */
int gauge_bus_get_double(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                         const char *member, double *value, char *message, size_t size);
int gauge_bus_get_uint32(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                         const char *member, uint32_t *value, char *message, size_t size);
/* `value` is set to a string the caller frees with free(). */
int gauge_bus_get_string(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                         const char *member, char **value, char *message, size_t size);
/* A `(isi)` property (RAUC's Progress: percentage, message, nesting depth); `text` as
 * in gauge_bus_get_string. */
int gauge_bus_get_isi(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                      const char *member, int32_t *first, char **text, int32_t *second, char *message, size_t size);

#endif
