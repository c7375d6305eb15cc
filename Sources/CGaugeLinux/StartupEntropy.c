#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#include "CGaugeLinux.h"

static int saved_argc;
static char **saved_argv;

static double start_seconds;

int CGL_argc(void) { return saved_argc; }
double CGL_start_seconds(void) { return start_seconds; }
char **CGL_argv(void) { return saved_argv; }

/*
 * Early in a boot the kernel's random pool may not be ready yet, and the Swift runtime
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
