#include "CGaugeLinux.h"

#include <stddef.h>

/* glibc calls ELF constructors with (argc, argv, envp): the argv the kernel laid out,
   whose bytes /proc/PID/cmdline shows. */
static char **process_argv;

__attribute__((constructor)) static void CGL_capture_argv(int argc, char **argv, char **envp) {
    (void)argc;
    (void)envp;
    process_argv = argv;
}

int CGL_mark_argv0(char mark) {
    if (process_argv == NULL || process_argv[0] == NULL || process_argv[0][0] == '\0') return -1;
    process_argv[0][0] = mark;
    return 0;
}
