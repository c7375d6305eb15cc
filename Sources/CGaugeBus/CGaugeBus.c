#include "CGaugeBus.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
    int (*message_read)(sd_bus_message *, const char *, ...);
    sd_bus_message *(*message_unref)(sd_bus_message *);
    sd_bus_message *(*message_ref)(sd_bus_message *);
    void (*error_free)(sd_bus_error *);
    int (*add_match)(sd_bus *, sd_bus_slot **, const char *, sd_bus_message_handler_t, void *);
    int (*get_fd)(sd_bus *);
    int (*get_events)(sd_bus *);
    int (*get_timeout)(sd_bus *, uint64_t *);
    int (*process)(sd_bus *, sd_bus_message **);
    const char *(*message_get_interface)(sd_bus_message *);
    const char *(*message_get_member)(sd_bus_message *);
    int (*message_rewind)(sd_bus_message *, int);
    int (*message_enter_container)(sd_bus_message *, char, const char *);
    int (*message_exit_container)(sd_bus_message *);
    int (*message_skip)(sd_bus_message *, const char *);
    int (*message_peek_type)(sd_bus_message *, char *, const char **);
    int (*call_method_async)(sd_bus *, sd_bus_slot **, const char *, const char *, const char *, const char *,
                             sd_bus_message_handler_t, void *, const char *, ...);
    int (*wait)(sd_bus *, uint64_t);
    sd_bus_slot *(*slot_unref)(sd_bus_slot *);
    const sd_bus_error *(*message_get_error)(sd_bus_message *);
    int (*path_encode)(const char *, const char *, char **);
} sd;

/* A connection, and the signals its matches caught that the caller has not taken yet.
 * They pile up while a property is read. On a bus, a service flooding it costs at most
 * QUEUE_BUS messages (the rest are dropped and reported as lost, and the caller reads the
 * properties again); on a direct connection (systemd's private socket, where only systemd
 * speaks, in small signals) up to QUEUE_SIZE: its job signals come in bursts of tens
 * during a boot while `systemd --waits` reads descriptions. */
#define QUEUE_SIZE 256
#define QUEUE_BUS 16
struct gauge_bus {
    sd_bus *bus;
    /* The limit of each property read, in microseconds. */
    uint64_t timeout_usec;
    sd_bus_message *queue[QUEUE_SIZE];
    size_t head, count, limit;
    int overflowed;
    sd_bus_message *current;
};

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
    FIND(message_read, "sd_bus_message_read");
    FIND(message_unref, "sd_bus_message_unref");
    FIND(message_ref, "sd_bus_message_ref");
    FIND(error_free, "sd_bus_error_free");
    FIND(add_match, "sd_bus_add_match");
    FIND(get_fd, "sd_bus_get_fd");
    FIND(get_events, "sd_bus_get_events");
    FIND(get_timeout, "sd_bus_get_timeout");
    FIND(process, "sd_bus_process");
    FIND(message_get_interface, "sd_bus_message_get_interface");
    FIND(message_get_member, "sd_bus_message_get_member");
    FIND(message_rewind, "sd_bus_message_rewind");
    FIND(message_enter_container, "sd_bus_message_enter_container");
    FIND(message_exit_container, "sd_bus_message_exit_container");
    FIND(message_skip, "sd_bus_message_skip");
    FIND(message_peek_type, "sd_bus_message_peek_type");
    FIND(call_method_async, "sd_bus_call_method_async");
    FIND(wait, "sd_bus_wait");
    FIND(slot_unref, "sd_bus_slot_unref");
    FIND(message_get_error, "sd_bus_message_get_error");
    FIND(path_encode, "sd_bus_path_encode");
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

int gauge_bus_open(const char *address, int direct, uint64_t timeout_usec, gauge_bus **out, char *message,
                   size_t size) {
    int result = loaded(message, size);
    if (result < 0) return result;
    sd_bus *bus = NULL;
    if (address) {
        result = sd.bus_new(&bus);
        if (result >= 0) result = sd.set_address(bus, address);
        if (result >= 0) result = sd.set_bus_client(bus, !direct);
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
    gauge_bus *wrapper = calloc(1, sizeof *wrapper);
    if (!wrapper) {
        sd.flush_close_unref(bus);
        return failed(-ENOMEM, NULL, "cannot connect to the bus", message, size);
    }
    wrapper->bus = bus;
    wrapper->limit = address && direct ? QUEUE_SIZE : QUEUE_BUS;
    wrapper->timeout_usec = timeout_usec > 0 ? timeout_usec : 25000000;
    *out = wrapper;
    return 0;
}

static void drop_current(gauge_bus *bus) {
    if (bus->current) sd.message_unref(bus->current);
    bus->current = NULL;
}

void gauge_bus_close(gauge_bus *bus) {
    if (!bus) return;
    drop_current(bus);
    for (; bus->count > 0; bus->count--, bus->head = (bus->head + 1) % QUEUE_SIZE)
        sd.message_unref(bus->queue[bus->head]);
    sd.flush_close_unref(bus->bus);
    free(bus);
}

/* A match's handler: keeps the signal for gauge_bus_next_signal. */
static int caught(sd_bus_message *signal, void *userdata, sd_bus_error *error) {
    (void)error;
    gauge_bus *bus = userdata;
    if (bus->count == bus->limit) {
        bus->overflowed = 1;
        return 0;
    }
    bus->queue[(bus->head + bus->count) % QUEUE_SIZE] = sd.message_ref(signal);
    bus->count++;
    return 0;
}

int gauge_bus_subscribe(gauge_bus *bus, const char *rule, char *message, size_t size) {
    int result = sd.add_match(bus->bus, NULL, rule, caught, bus);
    if (result < 0) return failed(result, NULL, "cannot subscribe to the signals", message, size);
    return 0;
}

int gauge_bus_fd(gauge_bus *bus) { return sd.get_fd(bus->bus); }

int gauge_bus_events(gauge_bus *bus) { return sd.get_events(bus->bus); }

int gauge_bus_timeout(gauge_bus *bus, uint64_t *usec) { return sd.get_timeout(bus->bus, usec); }

int gauge_bus_next_signal(gauge_bus *bus, const char **interface, const char **member, char *message, size_t size) {
    drop_current(bus);
    while (bus->count == 0) {
        int result = sd.process(bus->bus, NULL);
        if (result < 0) return failed(result, NULL, "the bus connection failed", message, size);
        if (result == 0) break;
    }
    if (bus->count == 0) {
        if (bus->overflowed) {
            bus->overflowed = 0;
            snprintf(message, size, "signals were lost");
            return 2;
        }
        return 0;
    }
    bus->current = bus->queue[bus->head];
    bus->head = (bus->head + 1) % QUEUE_SIZE;
    bus->count--;
    const char *found = sd.message_get_interface(bus->current);
    *interface = found ? found : "";
    found = sd.message_get_member(bus->current);
    *member = found ? found : "";
    return 1;
}

int gauge_bus_signal_int32(gauge_bus *bus, int32_t *value) {
    if (!bus->current) return -EINVAL;
    int result = sd.message_rewind(bus->current, 1);
    if (result >= 0) result = sd.message_read(bus->current, "i", value);
    return result < 0 ? result : 0;
}

static int copy_text(const char *borrowed, char **text);

char *gauge_bus_unit_path(const char *unit) {
    char *path = NULL;
    return sd.path_encode && sd.path_encode("/org/freedesktop/systemd1/unit", unit, &path) >= 0 ? path : NULL;
}

int gauge_bus_signal_job(gauge_bus *bus, uint32_t *id, char **unit, char **result_text) {
    if (!bus->current) return -EINVAL;
    int result = sd.message_rewind(bus->current, 1);
    const char *job = NULL, *name = NULL, *outcome = NULL;
    if (result >= 0) result = sd.message_read(bus->current, "uos", id, &job, &name);
    if (result < 0) return result;
    if (result_text) {
        char type = 0;
        const char *signature = NULL;
        if (sd.message_peek_type(bus->current, &type, &signature) > 0 && type == 's') {
            result = sd.message_read(bus->current, "s", &outcome);
            if (result < 0) return result;
        }
        *result_text = NULL;
        if (outcome && copy_text(outcome, result_text) < 0) return -ENOMEM;
    }
    if (copy_text(name, unit) < 0) {
        if (result_text) free(*result_text);
        return -ENOMEM;
    }
    return 0;
}

int gauge_bus_signal_us(gauge_bus *bus, uint32_t *number, char **text) {
    if (!bus->current) return -EINVAL;
    const char *borrowed = NULL;
    int result = sd.message_rewind(bus->current, 1);
    if (result >= 0) result = sd.message_read(bus->current, "us", number, &borrowed);
    if (result < 0) return result;
    return copy_text(borrowed, text) < 0 ? -ENOMEM : 0;
}

/* Leaves the current signal inside the variant of `key` in its first a{sv} argument (after
 * a leading string, as in PropertiesChanged), if the variant holds `contents`: 1 found,
 * 0 not there, < 0 malformed. */
static int find_entry(gauge_bus *bus, const char *key, const char *contents) {
    if (!bus->current) return -EINVAL;
    sd_bus_message *m = bus->current;
    int result = sd.message_rewind(m, 1);
    if (result < 0) return result;
    char type = 0;
    const char *signature = NULL;
    result = sd.message_peek_type(m, &type, &signature);
    if (result <= 0) return result;
    if (type == 's') {
        result = sd.message_skip(m, "s");
        if (result < 0) return result;
    }
    result = sd.message_enter_container(m, 'a', "{sv}");
    if (result <= 0) return result;
    while ((result = sd.message_enter_container(m, 'e', "sv")) > 0) {
        const char *name = NULL;
        result = sd.message_read(m, "s", &name);
        if (result < 0) return result;
        if (name && strcmp(name, key) == 0) {
            result = sd.message_peek_type(m, &type, &signature);
            if (result < 0) return result;
            if (signature && strcmp(signature, contents) == 0) {
                result = sd.message_enter_container(m, 'v', contents);
                return result < 0 ? result : 1;
            }
            return 0;
        }
        result = sd.message_skip(m, "v");
        if (result < 0) return result;
        result = sd.message_exit_container(m);
        if (result < 0) return result;
    }
    return result;
}

static int copy_text(const char *borrowed, char **text) {
    *text = strdup(borrowed ? borrowed : "");
    return *text ? 1 : -ENOMEM;
}

int gauge_bus_signal_string(gauge_bus *bus, const char *key, char **value) {
    int result = find_entry(bus, key, "s");
    if (result <= 0) return result;
    const char *borrowed = NULL;
    result = sd.message_read(bus->current, "s", &borrowed);
    return result < 0 ? result : copy_text(borrowed, value);
}

int gauge_bus_signal_uint32(gauge_bus *bus, const char *key, uint32_t *value) {
    int result = find_entry(bus, key, "u");
    if (result <= 0) return result;
    result = sd.message_read(bus->current, "u", value);
    return result < 0 ? result : 1;
}

int gauge_bus_signal_isi(gauge_bus *bus, const char *key, int32_t *first, char **text, int32_t *second) {
    int result = find_entry(bus, key, "(isi)");
    if (result <= 0) return result;
    const char *borrowed = NULL;
    result = sd.message_read(bus->current, "(isi)", first, &borrowed, second);
    return result < 0 ? result : copy_text(borrowed, text);
}

static uint64_t monotonic_usec(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000 + (uint64_t)now.tv_nsec / 1000;
}

/* The reply to a property read, once it came. */
struct pending {
    int done;
    sd_bus_message *reply;
};

static int replied(sd_bus_message *reply, void *userdata, sd_bus_error *error) {
    (void)error;
    struct pending *pending = userdata;
    pending->done = 1;
    pending->reply = sd.message_ref(reply);
    return 0;
}

/* Waits for the reply of a call made with `replied` and `pending` (its slot), processing
 * the connection as for signals, one message at a time, each signal going to the bounded
 * queue above, until the reply comes or the connection's timeout passes. Not sd_bus_call:
 * while it waits for the reply it keeps every other message that arrives in sd-bus's own
 * queue (up to 384k messages: a service sending large signals meanwhile grows the process
 * by hundreds of megabytes). 0 with *reply, or < 0 with `message` (an error reply, a
 * failed or timed-out call). */
static int await_reply(gauge_bus *bus, sd_bus_slot *slot, struct pending *pending, const char *member,
                       sd_bus_message **reply, char *message, size_t size) {
    int result = 0;
    uint64_t deadline = monotonic_usec() + bus->timeout_usec;
    while (!pending->done) {
        result = sd.process(bus->bus, NULL);
        if (result < 0) break;
        if (result > 0) continue;
        uint64_t now = monotonic_usec();
        if (now >= deadline) {
            result = -ETIMEDOUT;
            break;
        }
        result = sd.wait(bus->bus, deadline - now);
        if (result < 0) break;
    }
    sd.slot_unref(slot);
    if (!pending->done) return failed(result, NULL, member, message, size);
    const sd_bus_error *error = sd.message_get_error(pending->reply);
    if (error) {
        snprintf(message, size, "%s: %s", member, error->message ? error->message : (error->name ? error->name : "error"));
        sd.message_unref(pending->reply);
        return -EIO;
    }
    *reply = pending->reply;
    return 0;
}

int gauge_bus_call(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                   const char *member, char *message, size_t size) {
    struct pending pending = {0, NULL};
    sd_bus_slot *slot = NULL;
    int result = sd.call_method_async(bus->bus, &slot, destination, path, interface, member, replied, &pending, "");
    if (result < 0) return failed(result, NULL, member, message, size);
    sd_bus_message *reply = NULL;
    result = await_reply(bus, slot, &pending, member, &reply, message, size);
    if (result < 0) return result;
    sd.message_unref(reply);
    return 0;
}

/* Reads property `member` and leaves *reply inside its variant (of `contents`). */
static int get_property(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                        const char *member, const char *contents, sd_bus_message **reply, char *message,
                        size_t size) {
    struct pending pending = {0, NULL};
    sd_bus_slot *slot = NULL;
    int result = sd.call_method_async(bus->bus, &slot, destination, path, "org.freedesktop.DBus.Properties", "Get",
                                      replied, &pending, "ss", interface, member);
    if (result < 0) return failed(result, NULL, member, message, size);
    result = await_reply(bus, slot, &pending, member, &pending.reply, message, size);
    if (result < 0) return result;
    result = sd.message_enter_container(pending.reply, 'v', contents);
    if (result <= 0) {
        sd.message_unref(pending.reply);
        return failed(result < 0 ? result : -EBADMSG, NULL, member, message, size);
    }
    *reply = pending.reply;
    return 0;
}

static int trivial(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                   const char *member, const char *type, void *value, char *message, size_t size) {
    sd_bus_message *reply = NULL;
    int result = get_property(bus, destination, path, interface, member, type, &reply, message, size);
    if (result < 0) return result;
    result = sd.message_read(reply, type, value);
    sd.message_unref(reply);
    if (result < 0) return failed(result, NULL, member, message, size);
    return 0;
}

int gauge_bus_get_double(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                         const char *member, double *value, char *message, size_t size) {
    return trivial(bus, destination, path, interface, member, "d", value, message, size);
}

int gauge_bus_get_uint32(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                         const char *member, uint32_t *value, char *message, size_t size) {
    return trivial(bus, destination, path, interface, member, "u", value, message, size);
}

int gauge_bus_get_uint64(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                         const char *member, uint64_t *value, char *message, size_t size) {
    return trivial(bus, destination, path, interface, member, "t", value, message, size);
}

int gauge_bus_get_string(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                         const char *member, char **value, char *message, size_t size) {
    sd_bus_message *reply = NULL;
    int result = get_property(bus, destination, path, interface, member, "s", &reply, message, size);
    if (result < 0) return result;
    const char *borrowed = NULL;
    result = sd.message_read(reply, "s", &borrowed);
    if (result >= 0) result = copy_text(borrowed, value);
    sd.message_unref(reply);
    if (result < 0) return failed(result, NULL, member, message, size);
    return 0;
}

int gauge_bus_get_isi(gauge_bus *bus, const char *destination, const char *path, const char *interface,
                      const char *member, int32_t *first, char **text, int32_t *second, char *message, size_t size) {
    sd_bus_message *reply = NULL;
    int result = get_property(bus, destination, path, interface, member, "(isi)", &reply, message, size);
    if (result < 0) return result;
    const char *borrowed = NULL;
    result = sd.message_read(reply, "(isi)", first, &borrowed, second);
    if (result >= 0) result = copy_text(borrowed, text);
    sd.message_unref(reply);
    if (result < 0) return failed(result, NULL, member, message, size);
    return 0;
}

/* A unit's description as one field of a line: tabs and line breaks become spaces. */
static void put_field(FILE *out, const char *text) {
    for (; *text; text++) fputc(*text == '\t' || *text == '\n' || *text == '\r' ? ' ' : *text, out);
}

int gauge_bus_list(gauge_bus *bus, int units, char **text, char *message, size_t size) {
    const char *method = units ? "ListUnits" : "ListJobs";
    const char *row = units ? "(ssssssouso)" : "(usssoo)";
    struct pending pending = {0, NULL};
    sd_bus_slot *slot = NULL;
    int result = sd.call_method_async(bus->bus, &slot, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                      "org.freedesktop.systemd1.Manager", method, replied, &pending, "");
    if (result < 0) return failed(result, NULL, method, message, size);
    sd_bus_message *reply = NULL;
    result = await_reply(bus, slot, &pending, method, &reply, message, size);
    if (result < 0) return result;
    char *list = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&list, &length);
    if (!out) {
        sd.message_unref(reply);
        return failed(-ENOMEM, NULL, method, message, size);
    }
    result = sd.message_enter_container(reply, 'a', row);
    while (result > 0) {
        uint32_t id = 0;
        const char *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL, *f = NULL, *g = NULL, *h = NULL, *i = NULL;
        if (units) {
            /* name, description, load, active and sub state, following, path, job id, type, path */
            result = sd.message_read(reply, row, &a, &b, &c, &d, &e, &f, &g, &id, &h, &i);
            if (result > 0) {
                fprintf(out, "%s\t", a);
                put_field(out, b);
                fputc('\n', out);
            }
        } else {
            /* id, unit, type, state, the job's path, the unit's path */
            result = sd.message_read(reply, row, &id, &a, &b, &c, &d, &e);
            if (result > 0) fprintf(out, "%u\t%s\t%s\t%s\t%s\n", id, a, b, c, e);
        }
    }
    fclose(out);
    sd.message_unref(reply);
    if (result < 0) {
        free(list);
        return failed(result, NULL, method, message, size);
    }
    *text = list;
    return 0;
}
