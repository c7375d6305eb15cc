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
 *
 * It answers each command (and start-up) with a line on stdout, "ok" or "error: ...", so
 * the test knows the bus has the new state. It exits at the end of stdin.
 *
 * Usage: gauge-dbus-replay ADDRESS NAME PATH INTERFACE PROPERTY:SIGNATURE[:change]...
 * Signatures: d u i b s (isi).
 */
#include <errno.h>
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
    default:
        return sd_bus_message_append(reply, "(isi)", (int32_t)property->integer, property->text ? property->text : "",
                                     property->second);
    }
}

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
    answer("error: unknown command");
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: gauge-dbus-replay ADDRESS NAME PATH INTERFACE PROPERTY:SIGNATURE[:change]...\n");
        return 2;
    }
    object_path = argv[3];
    interface_name = argv[4];
    static sd_bus_vtable vtable[34];
    size_t n = 0;
    vtable[n++] = (sd_bus_vtable)SD_BUS_VTABLE_START(0);
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
