#ifndef CGAUGEFUZZ_H
#define CGAUGEFUZZ_H
/*
 * What the fuzzers need from below Swift: a report of the input that was running when a
 * thread crashed (a trap, a fault, an abort) or hung, written with async-signal-safe calls
 * only, and that input saved to a file.
 *
 * A fuzzing thread brackets each execution with gauge_fuzz_begin / gauge_fuzz_end. On a
 * deadly signal in that thread the handler prints the target, the input in hex and where
 * it saved it, then hands the signal to the handler that was there before (Swift's
 * backtracer). A watchdog thread reports an execution running longer than the hang limit
 * and aborts the process.
 */
#include <stddef.h>
#include <stdint.h>

/// Installs the signal handlers and starts the watchdog (once per process; later calls
/// only change the settings). `artifact_dir` (may be NULL: nothing saved) is where inputs
/// are saved; `hang_seconds` <= 0 turns the watchdog off.
void gauge_fuzz_install(const char *artifact_dir, double hang_seconds);

/// The calling thread starts running `target` (a string that outlives the run) on
/// `size` bytes at `data`, which stay valid and unchanged until gauge_fuzz_end.
void gauge_fuzz_begin(const char *target, const uint8_t *data, size_t size);

/// The calling thread's execution is over.
void gauge_fuzz_end(void);

#endif
