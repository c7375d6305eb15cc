#define _GNU_SOURCE
#include "CGaugeFuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { slot_count = 64, alt_stack_size = 64 * 1024 };

/* One thread that fuzzes. `running` is set while an execution is under way. */
struct slot {
    _Atomic pid_t tid;
    _Atomic int running;
    _Atomic int64_t started;
    const char *_Atomic target;
    const uint8_t *_Atomic data;
    _Atomic size_t size;
};

static struct slot slots[slot_count];
static __thread struct slot *own_slot;
static char artifact_dir[512];
static _Atomic int64_t hang_nanoseconds;
static _Atomic int installed;
static _Atomic int reports;

static const int deadly[] = { SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS, SIGFPE };
static struct sigaction previous[sizeof deadly / sizeof deadly[0]];

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Output with write(2) alone: the report runs inside a signal handler. */
static void put(int fd, const char *text, size_t length) {
    while (length > 0) {
        ssize_t n = write(fd, text, length);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        text += n;
        length -= (size_t)n;
    }
}

static void puts_fd(int fd, const char *text) { put(fd, text, strlen(text)); }

static size_t format_unsigned(char *out, uint64_t value) {
    char digits[24];
    size_t count = 0;
    do {
        digits[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    for (size_t i = 0; i < count; i++) out[i] = digits[count - 1 - i];
    return count;
}

static void put_unsigned(int fd, uint64_t value) {
    char text[24];
    put(fd, text, format_unsigned(text, value));
}

static void put_hex(int fd, const uint8_t *data, size_t size) {
    static const char hex[] = "0123456789abcdef";
    char line[128];
    size_t used = 0;
    for (size_t i = 0; i < size; i++) {
        line[used++] = hex[data[i] >> 4];
        line[used++] = hex[data[i] & 15];
        if (used == 96 || i + 1 == size) {
            line[used++] = '\n';
            put(fd, line, used);
            used = 0;
        }
    }
}

/* Saves the input as ARTIFACT_DIR/KIND-TARGET-PID-N and prints where. */
static void save(const char *kind, struct slot *slot) {
    if (artifact_dir[0] == 0) return;
    char path[sizeof artifact_dir + 160];
    size_t used = 0;
    const char *parts[] = { artifact_dir, "/", kind, "-", slot->target };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        size_t length = strnlen(parts[i], 100);
        if (i == 0) length = strlen(parts[i]);
        memcpy(path + used, parts[i], length);
        used += length;
    }
    path[used++] = '-';
    used += format_unsigned(path + used, (uint64_t)getpid());
    path[used++] = '-';
    used += format_unsigned(path + used, (uint64_t)atomic_fetch_add(&reports, 1));
    path[used] = 0;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        puts_fd(2, "gauge-fuzz: cannot save the input to ");
    } else {
        put(fd, (const char *)slot->data, slot->size);
        close(fd);
        puts_fd(2, "gauge-fuzz: input saved to ");
    }
    puts_fd(2, path);
    puts_fd(2, "\n");
}

static void report(const char *kind, const char *what, struct slot *slot) {
    puts_fd(2, "\ngauge-fuzz: ");
    puts_fd(2, what);
    puts_fd(2, " in target ");
    puts_fd(2, slot->target);
    puts_fd(2, " on this input of ");
    put_unsigned(2, slot->size);
    puts_fd(2, " bytes (hex; replay it with gauge-fuzz --replay TARGET FILE):\n");
    put_hex(2, slot->data, slot->size);
    save(kind, slot);
}

static void on_deadly_signal(int signal, siginfo_t *info, void *context) {
    (void)info;
    (void)context;
    struct slot *slot = own_slot;
    if (slot != NULL && atomic_load(&slot->running)) {
        atomic_store(&slot->running, 0);
        report("crash", "a crash (deadly signal)", slot);
    }
    /* The previous handler gets the signal: a trap or fault happens again as this
       handler returns; abort() raises again itself. */
    for (size_t i = 0; i < sizeof deadly / sizeof deadly[0]; i++) {
        if (deadly[i] == signal) sigaction(signal, &previous[i], NULL);
    }
}

static void *watchdog(void *unused) {
    (void)unused;
    for (;;) {
        struct timespec pause = { 0, 200 * 1000 * 1000 };
        nanosleep(&pause, NULL);
        int64_t limit = atomic_load(&hang_nanoseconds);
        if (limit <= 0) continue;
        int64_t now = now_ns();
        for (int i = 0; i < slot_count; i++) {
            struct slot *slot = &slots[i];
            if (!atomic_load(&slot->running)) continue;
            if (now - atomic_load(&slot->started) <= limit) continue;
            report("hang", "a hang (one execution ran past the hang limit)", slot);
            abort();
        }
    }
    return NULL;
}

void gauge_fuzz_install(const char *directory, double hang_seconds) {
    size_t length = directory ? strlen(directory) : 0;
    if (length >= sizeof artifact_dir) length = 0;
    memcpy(artifact_dir, directory ? directory : "", length);
    artifact_dir[length] = 0;
    atomic_store(&hang_nanoseconds, (int64_t)(hang_seconds * 1e9));
    if (atomic_exchange(&installed, 1)) return;
    for (size_t i = 0; i < sizeof deadly / sizeof deadly[0]; i++) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_sigaction = on_deadly_signal;
        action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
        sigemptyset(&action.sa_mask);
        sigaction(deadly[i], &action, &previous[i]);
    }
    pthread_t thread;
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_create(&thread, &attributes, watchdog, NULL);
    pthread_attr_destroy(&attributes);
}

/* A free slot for the calling thread, for one execution. The thread also gets an
   alternate signal stack, once, so that a stack overflow can still be reported. */
static struct slot *claim_slot(void) {
    static __thread int has_alt_stack;
    if (!has_alt_stack) {
        has_alt_stack = 1;
        stack_t current;
        if (sigaltstack(NULL, &current) == 0 && (current.ss_flags & SS_DISABLE)) {
            stack_t stack = { .ss_sp = malloc(alt_stack_size), .ss_size = alt_stack_size, .ss_flags = 0 };
            if (stack.ss_sp != NULL) sigaltstack(&stack, NULL);
        }
    }
    pid_t tid = (pid_t)syscall(SYS_gettid);
    for (int i = 0; i < slot_count; i++) {
        pid_t free_tid = 0;
        if (atomic_compare_exchange_strong(&slots[i].tid, &free_tid, tid)) return &slots[i];
    }
    return NULL;
}

void gauge_fuzz_begin(const char *target, const uint8_t *data, size_t size) {
    struct slot *slot = claim_slot();
    own_slot = slot;
    if (slot == NULL) return;
    atomic_store(&slot->target, target);
    atomic_store(&slot->data, data);
    atomic_store(&slot->size, size);
    atomic_store(&slot->started, now_ns());
    atomic_store(&slot->running, 1);
}

void gauge_fuzz_end(void) {
    struct slot *slot = own_slot;
    if (slot == NULL) return;
    own_slot = NULL;
    atomic_store(&slot->running, 0);
    atomic_store(&slot->tid, 0);
}
