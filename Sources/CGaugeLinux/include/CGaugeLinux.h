#ifndef CGAUGELINUX_H
#define CGAUGELINUX_H
/*
 * Platform headers and what Swift cannot import from them directly:
 *  - macros that are not plain integer literals (enum-backed glibc flags, _IOR/_IOW ioctl
 *    numbers) exported as `CGL_`-prefixed constants, defined once in CGaugeLinux.c;
 *  - fixed-arity wrappers for variadic calls (ioctl, fcntl, open), which Swift cannot call;
 *  - GNU-only API (accept4, struct ucred, strerrordesc_np), compiled with _GNU_SOURCE in the
 *    .c file so Swift never needs that feature macro.
 * Struct sizes the Swift side relies on are checked with _Static_assert in CGaugeLinux.c.
 *
 * It is the only C library interface the Swift modules import (never Glibc, whose Swift
 * overlay the Embedded Swift toolchain does not have), so the headers they use are here and
 * what the overlay adds in Swift (errno, the variadic calls) is a plain function below.
 */
#include <stdint.h>
#include <errno.h>
#include <dirent.h>
#include <grp.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <sys/signalfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <sys/un.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <linux/fb.h>
#include <linux/kd.h>
#include <linux/vt.h>

/* epoll */
extern const uint32_t CGL_EPOLLIN;
extern const uint32_t CGL_EPOLLOUT;
extern const uint32_t CGL_EPOLLERR;
extern const uint32_t CGL_EPOLLHUP;
extern const uint32_t CGL_EPOLLRDHUP;
extern const int CGL_EPOLL_CLOEXEC;

/* timerfd / signalfd / clocks */
extern const int CGL_TFD_NONBLOCK;
extern const int CGL_TFD_CLOEXEC;
extern const int CGL_TFD_TIMER_ABSTIME;
extern const int CGL_SFD_NONBLOCK;
extern const int CGL_SFD_CLOEXEC;
extern const int CGL_CLOCK_MONOTONIC;

/* sockets */
extern const int CGL_AF_UNIX;
extern const int CGL_SOCK_STREAM;
extern const int CGL_SOCK_DGRAM;
extern const int CGL_SOCK_NONBLOCK;
extern const int CGL_SOCK_CLOEXEC;
extern const int CGL_SOL_SOCKET;
extern const int CGL_SO_PEERCRED;
extern const int CGL_SO_PEERGROUPS;
extern const int CGL_SO_TYPE;
extern const int CGL_SO_DOMAIN;
extern const int CGL_SO_ACCEPTCONN;
extern const int CGL_MSG_NOSIGNAL;
extern const int CGL_MSG_DONTWAIT;
extern const int CGL_SOMAXCONN;

/* console (linux/kd.h, linux/vt.h) */
extern const unsigned long CGL_KDGETMODE;
extern const unsigned long CGL_KDSETMODE;
extern const int CGL_KD_TEXT;
extern const int CGL_KD_GRAPHICS;
extern const unsigned long CGL_VT_GETSTATE;
extern const unsigned long CGL_VT_GETMODE;
extern const unsigned long CGL_VT_SETMODE;
extern const unsigned long CGL_VT_RELDISP;
extern const int CGL_VT_AUTO;
extern const int CGL_VT_PROCESS;
extern const int CGL_VT_ACKACQ;

/* framebuffer (linux/fb.h) */
extern const unsigned long CGL_FBIOGET_VSCREENINFO;
extern const unsigned long CGL_FBIOPUT_VSCREENINFO;
extern const unsigned long CGL_FBIOGET_FSCREENINFO;
extern const unsigned long CGL_FBIOPAN_DISPLAY;
extern const unsigned long CGL_FBIOBLANK;
extern const int CGL_FB_BLANK_UNBLANK;

/* Fixed-arity forms of variadic calls. Each returns what the call returns and leaves errno. */
int CGL_ioctl_ptr(int fd, unsigned long request, void *argument);
int CGL_ioctl_value(int fd, unsigned long request, unsigned long argument);
int CGL_fcntl_value(int fd, int command, int argument);
int CGL_open(const char *path, int flags, mode_t mode);

/* flock(fd, LOCK_EX | LOCK_NB): Swift sees `flock` as the struct of the same name. */
int CGL_flock_try_exclusive(int fd);

/* accept4(2): glibc declares it only under _GNU_SOURCE. */
int CGL_accept4(int fd, int flags);

/* SO_PEERCRED without exposing `struct ucred` (glibc hides it without _GNU_SOURCE).
   Returns 0 and fills the out-parameters, or -1 with errno set. */
int CGL_peer_credentials(int fd, int32_t *pid, uint32_t *uid, uint32_t *gid);

/* Fills a sockaddr_un from `length` path bytes (not NUL-terminated; a leading NUL byte means
   the abstract namespace) and returns the address length to pass to bind/connect/sendto,
   or 0 if the path does not fit. */
socklen_t CGL_sockaddr_un_init(struct sockaddr_un *address, const char *path, size_t length);

/* The kernel's device events (NETLINK_KOBJECT_UEVENT, its "kernel" multicast group): a
   non-blocking, close-on-exec socket bound to the group, or -1 with errno set. */
int CGL_uevent_socket(void);

/* Receives one datagram without blocking: its length (truncated to `length`), or -1 with
   errno set. `*from_kernel` is 1 when the sender is the kernel (netlink port 0), 0 for any
   other sender or a socket that is not netlink. */
ssize_t CGL_uevent_receive(int fd, void *buffer, size_t length, int *from_kernel);

/* inotify(7), for the password agents' directory. */
extern const int CGL_IN_NONBLOCK;
extern const int CGL_IN_CLOEXEC;
extern const uint32_t CGL_IN_CREATE;
extern const uint32_t CGL_IN_DELETE;
extern const uint32_t CGL_IN_MOVED_FROM;
extern const uint32_t CGL_IN_MOVED_TO;
extern const uint32_t CGL_IN_DELETE_SELF;
extern const uint32_t CGL_IN_MOVE_SELF;
extern const uint32_t CGL_IN_ONLYDIR;
extern const uint32_t CGL_IN_IGNORED;
extern const uint32_t CGL_IN_OPEN;
extern const uint32_t CGL_IN_MODIFY;
int CGL_inotify_init(int flags);
int CGL_inotify_add_watch(int fd, const char *path, uint32_t mask);
int CGL_inotify_rm_watch(int fd, int watch);

/* signal(signal, SIG_IGN): SIG_IGN is a cast macro Swift cannot import. */
int CGL_ignore_signal(int signal);
int CGL_default_signal(int signal);

/* chroot(2). */
int CGL_chroot(const char *path);

/* Descriptor passing (SCM_RIGHTS) on a Unix stream socket.
   CGL_recv_with_descriptors: recvmsg with MSG_DONTWAIT and MSG_CMSG_CLOEXEC; returns the byte
   count (or -1 with errno) and stores up to `max_fds` received descriptors in `fds`, their
   number in `*fd_count` (the kernel closes any that do not fit).
   CGL_send_with_descriptor: sendmsg of `length` bytes with `passed` attached, MSG_NOSIGNAL. */
ssize_t CGL_recv_with_descriptors(int fd, void *buffer, size_t length, int *fds, int max_fds, int *fd_count);
ssize_t CGL_send_with_descriptor(int fd, const void *buffer, size_t length, int passed);

/* Runs `argv[0]` (looked up on PATH) with `argv` and the process's environment, its
   standard input `stdin_fd` (or inherited when negative), and `passed_fd` as its
   descriptor `passed_as` (none when either is negative; the two must differ):
   posix_spawnp. With `default_signals`, the child starts with no signal blocked and
   SIGPIPE, SIGINT, SIGTERM, SIGHUP and SIGCHLD at their default actions. Returns 0 and
   the child in `*pid`, or the error number. */
int CGL_spawn(char *const argv[], int stdin_fd, int passed_fd, int passed_as, int default_signals, pid_t *pid);

/* A pseudo-terminal: its main side in `*main_fd` (close-on-exec, not our controlling
   terminal) and the path of its other side in `name`. Returns 0 or the error number. */
int CGL_open_terminal_pair(int *main_fd, char *name, size_t size);

/* Runs `argv` (posix_spawnp) in a session of its own whose controlling terminal is
   `terminal` (a pseudo-terminal's other side), as its standard output and error; its
   standard input inherited; its signals as CGL_spawn's `default_signals`. Returns 0
   and the child in `*pid`, or the error number. */
int CGL_spawn_on_terminal(char *const argv[], const char *terminal, pid_t *pid);

/* pread(2) at a 64-bit offset whatever the size of off_t (another process's memory through
   /proc/PID/mem, whose addresses may not fit a 32-bit off_t). */
ssize_t CGL_pread64(int fd, void *buffer, size_t length, uint64_t offset);

/* While a program reads a passphrase from a terminal with echo off: SIGINT, SIGTERM, SIGHUP
   and SIGQUIT (unblocked, whatever the caller blocked) put `saved` back on `fd` before the
   signal ends the process, so the terminal never stays silent. CGL_terminal_unguard
   restores the default handlers. */
int CGL_terminal_guard(int fd, const struct termios *saved);
void CGL_terminal_unguard(void);

/* The file system a descriptor lives on is FUSE (whose server may never answer a write). */
int CGL_is_on_fuse(int fd);

/* strtod(3) of the whole of `text`: 1 and the value in `*value`, or 0 when `text` is empty
   or not entirely a number. The C locale's decimal point: Gauge never calls setlocale. */
int CGL_parse_double(const char *text, double *value);

/* errno, which is a macro Swift cannot import (GaugeSystem's `errno` wraps these). */
int CGL_errno(void);
void CGL_set_errno(int error);

/* A description of an errno value that is safe to call from any thread (never NULL). */
const char *CGL_strerror(int error);

/* Zeroes `count` bytes at `bytes` through a volatile pointer, a byte at a time: a store
   the optimiser may not drop even when the memory is freed next (as it may a memset's).
   For typed secrets. */
void CGL_wipe(void *bytes, size_t count);

/* CLOCK_MONOTONIC when the process started, before the Swift runtime (StartupEntropy.c). */
double CGL_start_seconds(void);

/* The process's arguments as glibc passed them at start-up (see StartupEntropy.c). */
int CGL_argc(void);
char **CGL_argv(void);

#endif
