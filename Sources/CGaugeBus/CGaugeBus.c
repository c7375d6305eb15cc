#include "CGaugeBus.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

/* The sd-bus functions used, found in libsystemd.so.0 at run time. */
static struct {
    int (*bus_new)(sd_bus **);
    int (*set_address)(sd_bus *, const char *);
    int (*set_bus_client)(sd_bus *, int);
    int (*start)(sd_bus *);
    int (*open_system)(sd_bus **);
    int (*set_method_call_timeout)(sd_bus *, uint64_t);
    sd_bus *(*flush_close_unref)(sd_bus *);
    int (*get_property)(sd_bus *, const char *, const char *, const char *, const char *, sd_bus_error *,
                        sd_bus_message **, const char *);
    int (*get_property_trivial)(sd_bus *, const char *, const char *, const char *, const char *, sd_bus_error *,
                                char, void *);
    int (*get_property_string)(sd_bus *, const char *, const char *, const char *, const char *, sd_bus_error *,
                               char **);
    int (*message_read)(sd_bus_message *, const char *, ...);
    sd_bus_message *(*message_unref)(sd_bus_message *);
    void (*error_free)(sd_bus_error *);
} sd;

static const char *load_failure;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        load_failure = "cannot load libsystemd.so.0 (the D-Bus sources need sd-bus)";
        return;
    }
#define FIND(field, symbol)                                                                                        \
    do {                                                                                                           \
        *(void **)(&sd.field) = dlsym(library, symbol);                                                            \
        if (!sd.field) {                                                                                           \
            load_failure = "libsystemd.so.0 lacks " symbol;                                                        \
            return;                                                                                                \
        }                                                                                                          \
    } while (0)
    FIND(bus_new, "sd_bus_new");
    FIND(set_address, "sd_bus_set_address");
    FIND(set_bus_client, "sd_bus_set_bus_client");
    FIND(start, "sd_bus_start");
    FIND(open_system, "sd_bus_open_system");
    FIND(flush_close_unref, "sd_bus_flush_close_unref");
    FIND(get_property, "sd_bus_get_property");
    FIND(get_property_trivial, "sd_bus_get_property_trivial");
    FIND(get_property_string, "sd_bus_get_property_string");
    FIND(message_read, "sd_bus_message_read");
    FIND(message_unref, "sd_bus_message_unref");
    FIND(error_free, "sd_bus_error_free");
#undef FIND
    /* Optional (systemd 240 and later). */
    *(void **)(&sd.set_method_call_timeout) = dlsym(library, "sd_bus_set_method_call_timeout");
}

static int loaded(char *message, size_t size) {
    pthread_once(&load_once, load);
    if (load_failure) {
        snprintf(message, size, "%s", load_failure);
        return -ENOSYS;
    }
    return 0;
}

static int failed(int result, sd_bus_error *error, const char *doing, char *message, size_t size) {
    if (error && error->message)
        snprintf(message, size, "%s: %s", doing, error->message);
    else
        snprintf(message, size, "%s: %s", doing, strerror(result < 0 ? -result : result));
    if (error) sd.error_free(error);
    return result < 0 ? result : -EIO;
}

int gauge_bus_open(const char *address, uint64_t timeout_usec, gauge_bus **out, char *message, size_t size) {
    int result = loaded(message, size);
    if (result < 0) return result;
    sd_bus *bus = NULL;
    if (address) {
        result = sd.bus_new(&bus);
        if (result >= 0) result = sd.set_address(bus, address);
        if (result >= 0) result = sd.set_bus_client(bus, 1);
        if (result >= 0) result = sd.start(bus);
    } else {
        result = sd.open_system(&bus);
    }
    if (result < 0) {
        if (bus) sd.flush_close_unref(bus);
        return failed(result, NULL, address ? "cannot connect to the bus" : "cannot connect to the system bus",
                      message, size);
    }
    if (timeout_usec > 0 && sd.set_method_call_timeout) sd.set_method_call_timeout(bus, timeout_usec);
    *out = (gauge_bus *)bus;
    return 0;
}

void gauge_bus_close(gauge_bus *bus) {
    if (bus && sd.flush_close_unref) sd.flush_close_unref((sd_bus *)bus);
}

static int trivial(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                   const char *member, char type, void *value, char *message, size_t size) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int result = sd.get_property_trivial((sd_bus *)bus, destination, path, interface, member, &error, type, value);
    if (result < 0) return failed(result, &error, member, message, size);
    return 0;
}

int gauge_bus_get_double(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                         const char *member, double *value, char *message, size_t size) {
    return trivial(bus, destination, path, interface, member, 'd', value, message, size);
}

int gauge_bus_get_uint32(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                         const char *member, uint32_t *value, char *message, size_t size) {
    return trivial(bus, destination, path, interface, member, 'u', value, message, size);
}

int gauge_bus_get_string(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                         const char *member, char **value, char *message, size_t size) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int result = sd.get_property_string((sd_bus *)bus, destination, path, interface, member, &error, value);
    if (result < 0) return failed(result, &error, member, message, size);
    return 0;
}

int gauge_bus_get_isi(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                      const char *member, int32_t *first, char **text, int32_t *second, char *message, size_t size) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    int result = sd.get_property((sd_bus *)bus, destination, path, interface, member, &error, &reply, "(isi)");
    if (result < 0) return failed(result, &error, member, message, size);
    const char *borrowed = NULL;
    result = sd.message_read(reply, "(isi)", first, &borrowed, second);
    if (result >= 0) {
        *text = strdup(borrowed ? borrowed : "");
        if (!*text) result = -ENOMEM;
    }
    sd.message_unref(reply);
    if (result < 0) return failed(result, NULL, member, message, size);
    return 0;
}
