/*
 * gauge-dbus-replay: a stand-in for an update tool's D-Bus service (systemd's Manager,
 * RAUC's Installer, fwupd), for the tests of gaugectl's D-Bus sources. It owns NAME on
 * the bus at ADDRESS and serves the properties named on the command line on PATH,
 * INTERFACE; a test replays a trace by writing commands to its stdin, one a line, fields
 * separated by tabs:
 *
 *   set <TAB> PROPERTY <TAB> VALUE...   a new value (for (isi): three fields); a property
 *                                       declared with :change emits PropertiesChanged
 *   signal <TAB> MEMBER [<TAB> i|u|s|a{sv} <TAB> VALUE]...
 *                                       emits a signal with those arguments; an a{sv}'s
 *                                       VALUE is KEY=TEXT entries separated by ';', all
 *                                       strings (fwupd's DeviceRequest)
 *   flood <TAB> COUNT <TAB> BYTES        the next property read first emits COUNT signals
 *                                       (`Flood`, one string of BYTES bytes each), as a
 *                                       service flooding its clients while they read
 *   job <TAB> ID <TAB> UNIT <TAB> TYPE <TAB> STATE <TAB> UNIT_PATH
 *                                       a job for systemd's ListJobs (replacing one of that ID)
 *   unjob <TAB> ID                      that job gone from ListJobs
 *   unit <TAB> PATH <TAB> DESCRIPTION <TAB> JOB_RUNNING_TIMEOUT_USEC <TAB> INACTIVE_EXIT_USEC
 *                                       an object of systemd's Unit interface at PATH, with
 *                                       those properties (and JobTimeoutUSec 0)
 *
 * The object also answers systemd's Manager methods Subscribe (nothing), ListJobs (the
 * jobs above, a(usssoo)) and ListUnits (the units above, named from their paths, with
 * their descriptions, a(ssssssouso)); a signal's arguments may be of type o too.
 *
 * It answers each command (and start-up) with a line on stdout, "ok" or "error: ...", so
 * the test knows the bus has the new state. It exits at the end of stdin.
 *
 * Usage: gauge-dbus-replay ADDRESS NAME PATH INTERFACE PROPERTY:SIGNATURE[:change]...
 * Signatures: d u i b s t (isi).
 */
#include <errno.h>
#include <stddef.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

struct property {
    char name[64];
    char signature[8];
    int emits_change;
    double d;
    int64_t integer;
    char *text;
    int32_t second;
};

static struct property properties[32];

struct job {
    uint32_t id;
    char unit[256], type[32], state[32], path[512];
};
static struct job jobs[64];
static size_t job_count;

struct unit {
    char path[512];
    char *description;
    uint64_t running_timeout, inactive_exit, no_timeout;
};
static struct unit units[16];
static size_t unit_count;
static unsigned long flood_count, flood_bytes;
static size_t property_count;
static const char *object_path, *interface_name;

static int get(sd_bus *bus, const char *path, const char *interface, const char *name, sd_bus_message *reply,
               void *userdata, sd_bus_error *error) {
    (void)path, (void)interface, (void)name, (void)error;
    struct property *property = userdata;
    if (flood_count > 0) {
        char *text = malloc(flood_bytes + 1);
        if (!text) return -ENOMEM;
        memset(text, 'x', flood_bytes);
        text[flood_bytes] = 0;
        for (; flood_count > 0; flood_count--) {
            if (sd_bus_emit_signal(bus, object_path, interface_name, "Flood", "s", text) < 0) break;
            while (sd_bus_flush(bus) > 0) {}
        }
        free(text);
        flood_count = 0;
    }
    switch (property->signature[0]) {
    case 'd': return sd_bus_message_append(reply, "d", property->d);
    case 'u': return sd_bus_message_append(reply, "u", (uint32_t)property->integer);
    case 'i': return sd_bus_message_append(reply, "i", (int32_t)property->integer);
    case 'b': return sd_bus_message_append(reply, "b", (int)(property->integer != 0));
    case 's': return sd_bus_message_append(reply, "s", property->text ? property->text : "");
    case 't': return sd_bus_message_append(reply, "t", (uint64_t)property->integer);
    default:
        return sd_bus_message_append(reply, "(isi)", (int32_t)property->integer, property->text ? property->text : "",
                                     property->second);
    }
}

static int subscribe(sd_bus_message *call, void *userdata, sd_bus_error *error) {
    (void)userdata, (void)error;
    return sd_bus_reply_method_return(call, "");
}

static int list_jobs(sd_bus_message *call, void *userdata, sd_bus_error *error) {
    (void)userdata, (void)error;
    sd_bus_message *reply = NULL;
    int r = sd_bus_message_new_method_return(call, &reply);
    if (r >= 0) r = sd_bus_message_open_container(reply, 'a', "(usssoo)");
    for (size_t i = 0; r >= 0 && i < job_count; i++) {
        char job_path[64];
        snprintf(job_path, sizeof job_path, "/org/freedesktop/systemd1/job/%u", jobs[i].id);
        r = sd_bus_message_append(reply, "(usssoo)", jobs[i].id, jobs[i].unit, jobs[i].type, jobs[i].state, job_path,
                                  jobs[i].path);
    }
    if (r >= 0) r = sd_bus_message_close_container(reply);
    if (r >= 0) r = sd_bus_send(NULL, reply, NULL);
    sd_bus_message_unref(reply);
    return r;
}

/* A unit's name from its object path's last element, as systemd escapes it ("_2d": '-'). */
static void unit_name(const char *path, char *name, size_t size) {
    const char *from = strrchr(path, '/');
    from = from ? from + 1 : path;
    size_t n = 0;
    for (; *from && n + 1 < size; n++) {
        unsigned byte;
        if (from[0] == '_' && sscanf(from + 1, "%2x", &byte) == 1) {
            name[n] = (char)byte;
            from += 3;
        } else {
            name[n] = *from++;
        }
    }
    name[n] = 0;
}

static int list_units(sd_bus_message *call, void *userdata, sd_bus_error *error) {
    (void)userdata, (void)error;
    sd_bus_message *reply = NULL;
    int r = sd_bus_message_new_method_return(call, &reply);
    if (r >= 0) r = sd_bus_message_open_container(reply, 'a', "(ssssssouso)");
    for (size_t i = 0; r >= 0 && i < unit_count; i++) {
        char name[256];
        unit_name(units[i].path, name, sizeof name);
        r = sd_bus_message_append(reply, "(ssssssouso)", name, units[i].description, "loaded", "active", "running", "",
                                  units[i].path, (uint32_t)0, "", "/");
    }
    if (r >= 0) r = sd_bus_message_close_container(reply);
    if (r >= 0) r = sd_bus_send(NULL, reply, NULL);
    sd_bus_message_unref(reply);
    return r;
}

static const sd_bus_vtable unit_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("Description", "s", NULL, offsetof(struct unit, description), 0),
    SD_BUS_PROPERTY("JobRunningTimeoutUSec", "t", NULL, offsetof(struct unit, running_timeout), 0),
    SD_BUS_PROPERTY("JobTimeoutUSec", "t", NULL, offsetof(struct unit, no_timeout), 0),
    SD_BUS_PROPERTY("InactiveExitTimestampMonotonic", "t", NULL, offsetof(struct unit, inactive_exit), 0),
    SD_BUS_VTABLE_END,
};

static void answer(const char *text) {
    printf("%s\n", text);
    fflush(stdout);
}

static char *field(char **cursor) {
    if (!*cursor) return NULL;
    char *start = *cursor;
    char *tab = strchr(start, '\t');
    if (tab) {
        *tab = 0;
        *cursor = tab + 1;
    } else {
        *cursor = NULL;
    }
    return start;
}

/* Appends "KEY=TEXT;KEY=TEXT" as an a{sv} of strings. */
static int append_dictionary(sd_bus_message *message, char *entries) {
    int r = sd_bus_message_open_container(message, 'a', "{sv}");
    for (char *entry = strtok(entries, ";"); r >= 0 && entry; entry = strtok(NULL, ";")) {
        char *equals = strchr(entry, '=');
        if (!equals) return -EINVAL;
        *equals = 0;
        r = sd_bus_message_append(message, "{sv}", entry, "s", equals + 1);
    }
    return r < 0 ? r : sd_bus_message_close_container(message);
}

static void command(sd_bus *bus, char *line) {
    char *cursor = line;
    char *verb = field(&cursor);
    if (verb && strcmp(verb, "set") == 0) {
        char *name = field(&cursor);
        struct property *property = NULL;
        for (size_t i = 0; name && i < property_count; i++)
            if (strcmp(properties[i].name, name) == 0) property = &properties[i];
        char *value = field(&cursor);
        if (!property || !value) return answer("error: set needs a declared property and a value");
        switch (property->signature[0]) {
        case 'd': property->d = strtod(value, NULL); break;
        case 's': free(property->text); property->text = strdup(value); break;
        case '(': {
            property->integer = strtoll(value, NULL, 10);
            char *text = field(&cursor);
            char *second = field(&cursor);
            free(property->text);
            property->text = strdup(text ? text : "");
            property->second = second ? (int32_t)strtol(second, NULL, 10) : 0;
            break;
        }
        default: property->integer = strtoll(value, NULL, 10); break;
        }
        if (property->emits_change) {
            int r = sd_bus_emit_properties_changed(bus, object_path, interface_name, property->name, NULL);
            if (r < 0) return answer("error: cannot emit PropertiesChanged");
        }
        while (sd_bus_flush(bus) > 0) {}
        return answer("ok");
    }
    if (verb && strcmp(verb, "signal") == 0) {
        char *member = field(&cursor);
        sd_bus_message *message = NULL;
        if (!member || sd_bus_message_new_signal(bus, &message, object_path, interface_name, member) < 0)
            return answer("error: signal needs a member");
        char *type;
        int r = 0;
        while (r >= 0 && (type = field(&cursor))) {
            char *value = field(&cursor);
            if (!value) r = -EINVAL;
            else if (strcmp(type, "i") == 0) r = sd_bus_message_append(message, "i", (int32_t)strtol(value, NULL, 10));
            else if (strcmp(type, "u") == 0) r = sd_bus_message_append(message, "u", (uint32_t)strtoul(value, NULL, 10));
            else if (strcmp(type, "s") == 0) r = sd_bus_message_append(message, "s", value);
            else if (strcmp(type, "o") == 0) r = sd_bus_message_append(message, "o", value);
            else if (strcmp(type, "a{sv}") == 0) r = append_dictionary(message, value);
            else r = -EINVAL;
        }
        if (r >= 0) r = sd_bus_send(bus, message, NULL);
        sd_bus_message_unref(message);
        if (r < 0) return answer("error: cannot send the signal");
        while (sd_bus_flush(bus) > 0) {}
        return answer("ok");
    }
    if (verb && strcmp(verb, "flood") == 0) {
        char *count = field(&cursor);
        char *bytes = field(&cursor);
        if (!count || !bytes) return answer("error: flood needs a count and a size");
        flood_count = strtoul(count, NULL, 10);
        flood_bytes = strtoul(bytes, NULL, 10);
        return answer("ok");
    }
    if (verb && strcmp(verb, "job") == 0) {
        char *id = field(&cursor), *unit = field(&cursor), *type = field(&cursor), *state = field(&cursor);
        char *path = field(&cursor);
        if (!path) return answer("error: job needs an id, a unit, a type, a state and a unit path");
        size_t i = 0;
        while (i < job_count && jobs[i].id != (uint32_t)strtoul(id, NULL, 10)) i++;
        if (i == sizeof jobs / sizeof *jobs) return answer("error: too many jobs");
        if (i == job_count) job_count++;
        jobs[i].id = (uint32_t)strtoul(id, NULL, 10);
        snprintf(jobs[i].unit, sizeof jobs[i].unit, "%s", unit);
        snprintf(jobs[i].type, sizeof jobs[i].type, "%s", type);
        snprintf(jobs[i].state, sizeof jobs[i].state, "%s", state);
        snprintf(jobs[i].path, sizeof jobs[i].path, "%s", path);
        return answer("ok");
    }
    if (verb && strcmp(verb, "unjob") == 0) {
        char *id = field(&cursor);
        if (!id) return answer("error: unjob needs an id");
        for (size_t i = 0; i < job_count; i++)
            if (jobs[i].id == (uint32_t)strtoul(id, NULL, 10)) jobs[i] = jobs[--job_count];
        return answer("ok");
    }
    if (verb && strcmp(verb, "unit") == 0) {
        char *path = field(&cursor), *description = field(&cursor), *timeout = field(&cursor), *exit = field(&cursor);
        if (!exit || unit_count == sizeof units / sizeof *units) return answer("error: unit needs four fields");
        struct unit *unit = &units[unit_count++];
        snprintf(unit->path, sizeof unit->path, "%s", path);
        unit->description = strdup(description);
        unit->running_timeout = strtoull(timeout, NULL, 10);
        unit->inactive_exit = strtoull(exit, NULL, 10);
        if (sd_bus_add_object_vtable(bus, NULL, unit->path, "org.freedesktop.systemd1.Unit", unit_vtable, unit) < 0)
            return answer("error: cannot serve the unit");
        return answer("ok");
    }
    answer("error: unknown command");
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: gauge-dbus-replay ADDRESS NAME PATH INTERFACE PROPERTY:SIGNATURE[:change]...\n");
        return 2;
    }
    object_path = argv[3];
    interface_name = argv[4];
    static sd_bus_vtable vtable[40];
    size_t n = 0;
    vtable[n++] = (sd_bus_vtable)SD_BUS_VTABLE_START(0);
    vtable[n++] = (sd_bus_vtable)SD_BUS_METHOD("Subscribe", "", "", subscribe, 0);
    vtable[n++] = (sd_bus_vtable)SD_BUS_METHOD("ListJobs", "", "a(usssoo)", list_jobs, 0);
    vtable[n++] = (sd_bus_vtable)SD_BUS_METHOD("ListUnits", "", "a(ssssssouso)", list_units, 0);
    for (int i = 5; i < argc && property_count < 32; i++) {
        struct property *property = &properties[property_count];
        char *spec = argv[i];
        char *colon = strchr(spec, ':');
        if (!colon) return 2;
        *colon = 0;
        snprintf(property->name, sizeof property->name, "%s", spec);
        char *flags = strchr(colon + 1, ':');
        if (flags) *flags = 0;
        snprintf(property->signature, sizeof property->signature, "%s", colon + 1);
        property->emits_change = flags && strcmp(flags + 1, "change") == 0;
        vtable[n++] = (sd_bus_vtable)SD_BUS_PROPERTY(
            property->name, property->signature, get, property_count * sizeof(struct property),
            property->emits_change ? SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE : 0);
        property_count++;
    }
    vtable[n++] = (sd_bus_vtable)SD_BUS_VTABLE_END;

    sd_bus *bus = NULL;
    int r = sd_bus_new(&bus);
    if (r >= 0) r = sd_bus_set_address(bus, argv[1]);
    if (r >= 0) r = sd_bus_set_bus_client(bus, 1);
    if (r >= 0) r = sd_bus_start(bus);
    if (r >= 0) r = sd_bus_add_object_vtable(bus, NULL, object_path, interface_name, vtable, properties);
    if (r >= 0) r = sd_bus_request_name(bus, argv[2], 0);
    if (r < 0) {
        fprintf(stderr, "gauge-dbus-replay: %s\n", strerror(-r));
        return 1;
    }
    answer("ok");

    char line[4096];
    size_t used = 0;
    for (;;) {
        while ((r = sd_bus_process(bus, NULL)) > 0) {}
        if (r < 0) return 1;
        struct pollfd fds[2] = {{.fd = 0, .events = POLLIN}, {.fd = sd_bus_get_fd(bus), .events = (short)sd_bus_get_events(bus)}};
        if (poll(fds, 2, -1) < 0 && errno != EINTR) return 1;
        if (fds[0].revents) {
            ssize_t got = read(0, line + used, sizeof line - 1 - used);
            if (got <= 0) return 0;
            used += (size_t)got;
            char *newline;
            while ((newline = memchr(line, '\n', used))) {
                *newline = 0;
                command(bus, line);
                size_t rest = used - (size_t)(newline + 1 - line);
                memmove(line, newline + 1, rest);
                used = rest;
            }
            if (used == sizeof line - 1) used = 0;
        }
    }
}
