#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "CGaugeLinux.h"

static int saved_argc;
static char **saved_argv;

static double start_seconds;

int CGL_argc(void) { return saved_argc; }
double CGL_start_seconds(void) { return start_seconds; }
char **CGL_argv(void) { return saved_argv; }

/*
 * Early in a boot the kernel's random pool may not be ready yet, and the Swift runtime
 * (the build with the runtime; the Embedded Swift build's is arc4random_buf, below)
 * seeds its hashing from getrandom() without GRND_NONBLOCK while the program starts: the
 * first frame of a boot splash then waits a second or more for entropy. This runs before
 * the runtime's own initialisers (priority 101 comes before C++ static initialisers) and,
 * only when the pool is not ready, asks the runtime for its fixed hashing seed. Every
 * input the daemon hashes is bounded, so a known seed costs nothing an attacker can use;
 * once the pool is ready (any later start) hashing is seeded randomly as usual.
 *
 * setenv() moves `environ` off the initial stack, where the Swift runtime looks for argv
 * (CommandLine), so the arguments are kept here, as glibc passes them to constructors,
 * and the executables read them with CGL_argc()/CGL_argv().
 */
__attribute__((constructor(101)))
static void gauge_avoid_blocking_on_entropy(int argc, char **argv, char **envp) {
    (void)envp;
    struct timespec now;
    if (clock_gettime(CLOCK_MONOTONIC, &now) == 0) start_seconds = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
    saved_argc = argc;
    saved_argv = argv;
    unsigned char probe;
    ssize_t got;
    do {
        got = getrandom(&probe, 1, GRND_NONBLOCK);
    } while (got < 0 && errno == EINTR);
    if (got < 0 && errno == EAGAIN) {
        setenv("SWIFT_DETERMINISTIC_HASHING", "1", 0);
    }
}

/*
 * The random bytes Embedded Swift asks the platform for (the hashing seed, as the program
 * starts; any `random`). glibc's arc4random_buf (2.36 on) waits for the kernel's pool, which
 * early in a boot can take seconds on a machine with no hardware source: a splash started
 * then would show nothing until the pool is ready. This one, which the executable's own
 * calls bind to, never waits: before the pool is ready it takes the kernel's best effort
 * (GRND_INSECURE, Linux 5.6 on; /dev/urandom on older kernels), enough for hashing seeds,
 * the only randomness Gauge uses.
 */
static void fill_from_urandom(unsigned char *bytes, size_t length) {
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) abort();
    while (length > 0) {
        ssize_t got = read(fd, bytes, length);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) abort();
        bytes += got;
        length -= (size_t)got;
    }
    close(fd);
}

void arc4random_buf(void *buffer, size_t length) {
    unsigned char *bytes = buffer;
    unsigned int flags = GRND_NONBLOCK;
    while (length > 0) {
        ssize_t got = getrandom(bytes, length, flags);
        if (got > 0) {
            bytes += got;
            length -= (size_t)got;
        } else if (got < 0 && errno == EINTR) {
            continue;
        } else if (got < 0 && errno == EAGAIN && flags == GRND_NONBLOCK) {
            flags = GRND_INSECURE;
        } else if (got < 0 && (errno == EINVAL || errno == ENOSYS)) {
            fill_from_urandom(bytes, length);
            return;
        } else {
            abort();
        }
    }
}
