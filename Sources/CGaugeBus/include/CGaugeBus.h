#ifndef CGAUGEBUS_H
#define CGAUGEBUS_H
/*
 * Reading D-Bus properties through sd-bus (libsystemd), for gaugectl's progress sources
 * (systemd, RAUC, fwupd). libsystemd is loaded with dlopen the first time it is needed,
 * so the gauge executable does not depend on it (nor on what it pulls in): gauged and
 * every other gaugectl command run where it is absent, and an initramfs image holds it
 * only if it wants these sources. All D-Bus encoding is sd-bus's.
 *
 * Every call returns 0 or a negative errno (unless it says otherwise); on failure `message`
 * (of `size` bytes) holds why, from the D-Bus error when there is one.
 *
 * Signals: a caller subscribes with match rules, puts gauge_bus_fd in its own poll loop
 * (with gauge_bus_events and gauge_bus_timeout), and when it wakes takes what came with
 * gauge_bus_next_signal until that returns 0. Property getters may be called in between:
 * signals that arrive while one waits for its reply are kept, in order.
 */
#include <stddef.h>
#include <stdint.h>

typedef struct gauge_bus gauge_bus;

/* Connects to the bus at `address` (a D-Bus address), or to the system bus when it is
 * NULL (which honours $DBUS_SYSTEM_BUS_ADDRESS). `direct`: `address` is a peer, not a bus
 * (systemd's own socket, /run/systemd/private, as systemctl uses it): no Hello, no bus
 * name. `timeout_usec`: the limit of each call (0: sd-bus's default of 25 s). */
int gauge_bus_open(const char *address, int direct, uint64_t timeout_usec, gauge_bus **bus, char *message,
                   size_t size);

void gauge_bus_close(gauge_bus *bus);

/* Property getters, one per D-Bus type. While one waits for its reply, the signals that
 * arrive go to the queue of gauge_bus_subscribe (bounded), not into sd-bus's own. */
int gauge_bus_get_double(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                         const char *member, double *value, char *message, size_t size);
int gauge_bus_get_uint32(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                         const char *member, uint32_t *value, char *message, size_t size);
int gauge_bus_get_uint64(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                         const char *member, uint64_t *value, char *message, size_t size);
/* `value` is set to a string the caller frees with free(). */
int gauge_bus_get_string(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                         const char *member, char **value, char *message, size_t size);
/* A `(isi)` property (RAUC's Progress: percentage, message, nesting depth); `text` as
 * in gauge_bus_get_string. */
int gauge_bus_get_isi(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                      const char *member, int32_t *first, char **text, int32_t *second, char *message, size_t size);

/* Calls method `member`, which takes no argument, and waits for its reply (whose values
 * are not read), keeping the signals that arrive meanwhile as a property read does. */
int gauge_bus_call(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                   const char *member, char *message, size_t size);

/* systemd's jobs (its Manager's ListJobs), a line each: "ID\tUNIT\tTYPE\tSTATE\tUNIT_PATH\n";
 * with units, its loaded units (ListUnits) instead: "UNIT\tDESCRIPTION\n" (tabs and line
 * breaks in the description made spaces). *text is set to a string the caller frees with
 * free(). */
int gauge_bus_list(gauge_bus *bus, int units, char **text, char *message, size_t size);

/* Adds a match rule (D-Bus match syntax); the signals it matches are queued for
 * gauge_bus_next_signal (up to 16; the rest are dropped and reported). */
int gauge_bus_subscribe(gauge_bus *bus, const char *rule, char *message, size_t size);

/* What to poll for, as sd_bus_get_fd, sd_bus_get_events and sd_bus_get_timeout
 * (`usec`: an absolute CLOCK_MONOTONIC time, UINT64_MAX for none). */
int gauge_bus_fd(gauge_bus *bus);
int gauge_bus_events(gauge_bus *bus);
int gauge_bus_timeout(gauge_bus *bus, uint64_t *usec);

/* Reads and dispatches what the connection has, without blocking, and makes the next
 * queued signal the current one: returns 1 with its interface and member (valid until the
 * next call), 0 when there is none, 2 (with `message`) when some were dropped because the
 * queue was full, < 0 when the connection failed. */
int gauge_bus_next_signal(gauge_bus *bus, const char **interface, const char **member, char *message, size_t size);

/* The current signal's first argument, an int32 (RAUC's Completed). 0 or a negative errno. */
int gauge_bus_signal_int32(gauge_bus *bus, int32_t *value);

/* The current signal as systemd's JobNew (`uos`: id, job, unit) or JobRemoved (`uoss`: the
 * same and the result): the id, and the unit and (when `result` is not NULL) the result
 * set to copies the caller frees with free() (*result NULL for JobNew). 0 or < 0. */
int gauge_bus_signal_job(gauge_bus *bus, uint32_t *id, char **unit, char **result);

/* The current signal's first two arguments, a uint32 and a string (PackageKit's Package:
 * info, package id; its ErrorCode: code, details), the string set to a copy the caller
 * frees with free(). 0 or < 0. */
int gauge_bus_signal_us(gauge_bus *bus, uint32_t *number, char **text);

/* systemd's object path of `unit` (JobNew names the unit, not its object): sd-bus's
 * escaping under /org/freedesktop/systemd1/unit, as systemd makes it; a string the caller
 * frees with free(), NULL before a connection was opened or without memory. */
char *gauge_bus_unit_path(const char *unit);

/* An entry of the current signal's a{sv} argument (the first argument, or the second after
 * a string, as in PropertiesChanged's changed properties): 1 read, 0 absent or of another
 * type, < 0 malformed. Strings are set to a copy the caller frees with free(). */
int gauge_bus_signal_string(gauge_bus *bus, const char *key, char **value);
int gauge_bus_signal_uint32(gauge_bus *bus, const char *key, uint32_t *value);
int gauge_bus_signal_isi(gauge_bus *bus, const char *key, int32_t *first, char **text, int32_t *second);

#endif
