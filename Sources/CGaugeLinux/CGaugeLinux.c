#define _GNU_SOURCE
#include "CGaugeLinux.h"

#include <sys/inotify.h>

#include <errno.h>
#include <linux/input.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <spawn.h>
#include <sys/vfs.h>

/* epoll */
const uint32_t CGL_EPOLLIN = EPOLLIN;
const uint32_t CGL_EPOLLOUT = EPOLLOUT;
const uint32_t CGL_EPOLLERR = EPOLLERR;
const uint32_t CGL_EPOLLHUP = EPOLLHUP;
const uint32_t CGL_EPOLLRDHUP = EPOLLRDHUP;
const int CGL_EPOLL_CLOEXEC = EPOLL_CLOEXEC;

/* timerfd / signalfd / clocks */
const int CGL_TFD_NONBLOCK = TFD_NONBLOCK;
const int CGL_TFD_CLOEXEC = TFD_CLOEXEC;
const int CGL_TFD_TIMER_ABSTIME = TFD_TIMER_ABSTIME;
const int CGL_SFD_NONBLOCK = SFD_NONBLOCK;
const int CGL_SFD_CLOEXEC = SFD_CLOEXEC;
const int CGL_CLOCK_MONOTONIC = CLOCK_MONOTONIC;

/* sockets */
const int CGL_AF_UNIX = AF_UNIX;
const int CGL_SOCK_STREAM = SOCK_STREAM;
const int CGL_SOCK_DGRAM = SOCK_DGRAM;
const int CGL_SOCK_NONBLOCK = SOCK_NONBLOCK;
const int CGL_SOCK_CLOEXEC = SOCK_CLOEXEC;
const int CGL_SOL_SOCKET = SOL_SOCKET;
const int CGL_SO_PEERCRED = SO_PEERCRED;
const int CGL_SO_PEERGROUPS = SO_PEERGROUPS;
const int CGL_SO_TYPE = SO_TYPE;
const int CGL_SO_DOMAIN = SO_DOMAIN;
const int CGL_SO_ACCEPTCONN = SO_ACCEPTCONN;
const int CGL_MSG_NOSIGNAL = MSG_NOSIGNAL;
const int CGL_MSG_DONTWAIT = MSG_DONTWAIT;
const int CGL_SOMAXCONN = SOMAXCONN;

/* console */
const unsigned long CGL_KDGETMODE = KDGETMODE;
const unsigned long CGL_KDSETMODE = KDSETMODE;
const int CGL_KD_TEXT = KD_TEXT;
const int CGL_KD_GRAPHICS = KD_GRAPHICS;
const unsigned long CGL_VT_GETSTATE = VT_GETSTATE;
const unsigned long CGL_VT_GETMODE = VT_GETMODE;
const unsigned long CGL_VT_SETMODE = VT_SETMODE;
const unsigned long CGL_VT_RELDISP = VT_RELDISP;
const int CGL_VT_AUTO = VT_AUTO;
const int CGL_VT_PROCESS = VT_PROCESS;
const int CGL_VT_ACKACQ = VT_ACKACQ;

/* framebuffer */
const unsigned long CGL_FBIOGET_VSCREENINFO = FBIOGET_VSCREENINFO;
const unsigned long CGL_FBIOPUT_VSCREENINFO = FBIOPUT_VSCREENINFO;
const unsigned long CGL_FBIOGET_FSCREENINFO = FBIOGET_FSCREENINFO;
const unsigned long CGL_FBIOPAN_DISPLAY = FBIOPAN_DISPLAY;
const unsigned long CGL_FBIOBLANK = FBIOBLANK;
const int CGL_FB_BLANK_UNBLANK = FB_BLANK_UNBLANK;

/* Layouts the Swift side reads field by field or sizes buffers for. */
_Static_assert(sizeof(struct signalfd_siginfo) == 128, "signalfd_siginfo is read whole");
_Static_assert(sizeof(struct ucred) == 12, "SO_PEERCRED option length");
_Static_assert(sizeof(uint64_t) == 8, "timerfd expiration count");
_Static_assert(sizeof(struct vt_stat) == 6, "VT_GETSTATE argument");
_Static_assert(sizeof(struct vt_mode) == 8, "VT_GETMODE/VT_SETMODE argument");
_Static_assert(sizeof(struct fb_var_screeninfo) == 160, "FBIOGET_VSCREENINFO argument");
_Static_assert(sizeof(struct fb_fix_screeninfo) == (sizeof(long) == 8 ? 80 : 68),
               "FBIOGET_FSCREENINFO argument");
#if defined(__x86_64__)
_Static_assert(sizeof(struct epoll_event) == 12, "epoll_event is packed on x86-64");
#else
_Static_assert(sizeof(struct epoll_event) == 16, "epoll_event is naturally aligned");
#endif
_Static_assert(sizeof(((struct sockaddr_un *)0)->sun_path) == 108, "sun_path length");
/* 64-bit times and file offsets on every target: on 32-bit ARM glibc's are 32 bits
   unless built with _TIME_BITS=64 and _FILE_OFFSET_BITS=64 (tools/build-release does),
   and a DRM buffer's map offset, above 4 GiB under a 64-bit kernel, needs the latter. */
_Static_assert(sizeof(time_t) == 8, "time_t is 64 bits (-D_TIME_BITS=64 on 32-bit targets)");
_Static_assert(sizeof(off_t) == 8, "off_t is 64 bits (-D_FILE_OFFSET_BITS=64 on 32-bit targets)");
_Static_assert(sizeof(struct timespec) == 16, "timespec is 64-bit seconds and a padded long");
/* The evdev reader (EvdevKeymap.recordSize) takes a record as two longs and 8 bytes. */
_Static_assert(sizeof(struct input_event) == 2 * sizeof(long) + 8, "input_event record size");

int CGL_ioctl_ptr(int fd, unsigned long request, void *argument) {
    return ioctl(fd, request, argument);
}

int CGL_ioctl_value(int fd, unsigned long request, unsigned long argument) {
    return ioctl(fd, request, argument);
}

int CGL_fcntl_value(int fd, int command, int argument) {
    return fcntl(fd, command, argument);
}

int CGL_open(const char *path, int flags, mode_t mode) {
    return open(path, flags, mode);
}

int CGL_flock_try_exclusive(int fd) {
    return flock(fd, LOCK_EX | LOCK_NB);
}

int CGL_accept4(int fd, int flags) {
    return accept4(fd, NULL, NULL, flags);
}

int CGL_peer_credentials(int fd, int32_t *pid, uint32_t *uid, uint32_t *gid) {
    struct ucred credentials;
    socklen_t length = sizeof(credentials);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
        return -1;
    }
    if (length != sizeof(credentials)) {
        errno = EINVAL;
        return -1;
    }
    *pid = credentials.pid;
    *uid = credentials.uid;
    *gid = credentials.gid;
    return 0;
}

socklen_t CGL_sockaddr_un_init(struct sockaddr_un *address, const char *path, size_t length) {
    memset(address, 0, sizeof(*address));
    address->sun_family = AF_UNIX;
    /* A filesystem path needs room for its terminating NUL; an abstract name does not. */
    int abstract = length > 0 && path[0] == '\0';
    size_t room = sizeof(address->sun_path) - (abstract ? 0 : 1);
    if (length == 0 || length > room) {
        return 0;
    }
    memcpy(address->sun_path, path, length);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + length + (abstract ? 0 : 1));
}

int CGL_uevent_socket(void) {
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
    if (fd < 0) {
        return -1;
    }
    struct sockaddr_nl address;
    memset(&address, 0, sizeof(address));
    address.nl_family = AF_NETLINK;
    address.nl_groups = 1; /* the kernel's own events; udev re-sends on group 2 */
    if (bind(fd, (struct sockaddr *)&address, sizeof(address)) != 0) {
        int error = errno;
        close(fd);
        errno = error;
        return -1;
    }
    return fd;
}

ssize_t CGL_uevent_receive(int fd, void *buffer, size_t length, int *from_kernel) {
    struct sockaddr_storage sender;
    socklen_t sender_length = sizeof(sender);
    memset(&sender, 0, sizeof(sender));
    ssize_t count = recvfrom(fd, buffer, length, MSG_DONTWAIT, (struct sockaddr *)&sender, &sender_length);
    if (count < 0) {
        return -1;
    }
    const struct sockaddr_nl *netlink = (const struct sockaddr_nl *)&sender;
    *from_kernel = sender.ss_family == AF_NETLINK && sender_length >= sizeof(*netlink) && netlink->nl_pid == 0;
    return count;
}

int CGL_ignore_signal(int signal_number) { return signal(signal_number, SIG_IGN) == SIG_ERR ? -1 : 0; }
int CGL_default_signal(int signal_number) { return signal(signal_number, SIG_DFL) == SIG_ERR ? -1 : 0; }

int CGL_parse_double(const char *text, double *value) {
    char *end = NULL;
    if (*text == '\0') return 0;
    double parsed = strtod(text, &end);
    if (end == NULL || *end != '\0') return 0;
    *value = parsed;
    return 1;
}

void CGL_wipe(void *bytes, size_t count) {
    volatile unsigned char *byte = bytes;
    while (count-- > 0) *byte++ = 0;
}

int CGL_errno(void) { return errno; }
void CGL_set_errno(int error) { errno = error; }

const char *CGL_strerror(int error) {
    const char *text = strerrordesc_np(error);
    return text != NULL ? text : "unknown error";
}

/* inotify, chroot */
const int CGL_IN_NONBLOCK = IN_NONBLOCK;
const int CGL_IN_CLOEXEC = IN_CLOEXEC;
const uint32_t CGL_IN_CREATE = IN_CREATE;
const uint32_t CGL_IN_DELETE = IN_DELETE;
const uint32_t CGL_IN_MOVED_FROM = IN_MOVED_FROM;
const uint32_t CGL_IN_MOVED_TO = IN_MOVED_TO;
const uint32_t CGL_IN_DELETE_SELF = IN_DELETE_SELF;
const uint32_t CGL_IN_MOVE_SELF = IN_MOVE_SELF;
const uint32_t CGL_IN_ONLYDIR = IN_ONLYDIR;
const uint32_t CGL_IN_IGNORED = IN_IGNORED;
const uint32_t CGL_IN_OPEN = IN_OPEN;
const uint32_t CGL_IN_MODIFY = IN_MODIFY;

int CGL_inotify_init(int flags) { return inotify_init1(flags); }
int CGL_inotify_add_watch(int fd, const char *path, uint32_t mask) { return inotify_add_watch(fd, path, mask); }
int CGL_inotify_rm_watch(int fd, int watch) { return inotify_rm_watch(fd, watch); }

int CGL_chroot(const char *path) { return chroot(path); }

enum { CGL_MAX_PASSED = 8 };

ssize_t CGL_recv_with_descriptors(int fd, void *buffer, size_t length, int *fds, int max_fds, int *fd_count) {
    union {
        struct cmsghdr header;
        char bytes[CMSG_SPACE(sizeof(int) * CGL_MAX_PASSED)];
    } control;
    struct iovec io = {.iov_base = buffer, .iov_len = length};
    struct msghdr message = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = control.bytes,
                             .msg_controllen = sizeof(control.bytes)};
    *fd_count = 0;
    ssize_t count = recvmsg(fd, &message, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (count < 0) {
        return count;
    }
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&message); c != NULL; c = CMSG_NXTHDR(&message, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
            continue;
        }
        size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        const unsigned char *data = CMSG_DATA(c);
        for (size_t i = 0; i < n; i++) {
            int passed;
            memcpy(&passed, data + i * sizeof(int), sizeof(int));
            if (*fd_count < max_fds) {
                fds[(*fd_count)++] = passed;
            } else {
                close(passed);
            }
        }
    }
    return count;
}

ssize_t CGL_send_with_descriptor(int fd, const void *buffer, size_t length, int passed) {
    union {
        struct cmsghdr header;
        char bytes[CMSG_SPACE(sizeof(int))];
    } control;
    memset(&control, 0, sizeof(control));
    struct iovec io = {.iov_base = (void *)buffer, .iov_len = length};
    struct msghdr message = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = control.bytes,
                             .msg_controllen = sizeof(control.bytes)};
    struct cmsghdr *c = CMSG_FIRSTHDR(&message);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &passed, sizeof(int));
    return sendmsg(fd, &message, MSG_NOSIGNAL);
}

int CGL_is_on_fuse(int fd) {
    struct statfs info;
    if (fstatfs(fd, &info) != 0) {
        return 0;
    }
    return info.f_type == 0x65735546; /* FUSE_SUPER_MAGIC */
}

/* The child's signals as CGL_spawn's `default_signals` has them. */
static int default_signal_attributes(posix_spawnattr_t *attributes, short flags) {
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGHUP);
    sigaddset(&defaults, SIGCHLD);
    int result = posix_spawnattr_setsigmask(attributes, &none);
    if (result == 0) result = posix_spawnattr_setsigdefault(attributes, &defaults);
    if (result == 0) result = posix_spawnattr_setflags(attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | flags);
    return result;
}

int CGL_spawn_on_terminal(char *const argv[], const char *terminal, pid_t *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int result = posix_spawn_file_actions_init(&actions);
    if (result != 0) return result;
    result = posix_spawnattr_init(&attributes);
    if (result != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return result;
    }
    /* A session of its own first (glibc runs setsid before the file actions), so that
       opening the terminal makes it the controlling one. */
    result = default_signal_attributes(&attributes, POSIX_SPAWN_SETSID);
    if (result == 0) result = posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, terminal, O_RDWR, 0);
    if (result == 0) result = posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    if (result == 0) result = posix_spawnp(pid, argv[0], &actions, &attributes, argv, environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return result;
}

int CGL_open_terminal_pair(int *main_fd, char *name, size_t size) {
    int fd = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return errno;
    if (grantpt(fd) != 0 || unlockpt(fd) != 0 || ptsname_r(fd, name, size) != 0) {
        int error = errno;
        close(fd);
        return error;
    }
    *main_fd = fd;
    return 0;
}

int CGL_spawn(char *const argv[], int stdin_fd, int passed_fd, int passed_as, int default_signals, pid_t *pid) {
    posix_spawn_file_actions_t actions;
    int result = posix_spawn_file_actions_init(&actions);
    if (result != 0) {
        return result;
    }
    /* A caller that blocks signals to read them from a signalfd, and ignores SIGPIPE,
       gives its child neither: an empty mask and the default actions. */
    posix_spawnattr_t attributes;
    result = posix_spawnattr_init(&attributes);
    if (result != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return result;
    }
    if (default_signals) result = default_signal_attributes(&attributes, 0);
    if (stdin_fd >= 0) {
        result = posix_spawn_file_actions_adddup2(&actions, stdin_fd, STDIN_FILENO);
    }
    if (result == 0 && passed_fd >= 0 && passed_as >= 0) {
        result = posix_spawn_file_actions_adddup2(&actions, passed_fd, passed_as);
    }
    if (result == 0) {
        result = posix_spawnp(pid, argv[0], &actions, &attributes, argv, environ);
    }
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return result;
}

ssize_t CGL_pread64(int fd, void *buffer, size_t length, uint64_t offset) {
    return pread64(fd, buffer, length, (off64_t)offset);
}

static int guarded_fd = -1;
static struct termios guarded_settings;
static const int guarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

static void restore_terminal_and_die(int signal_number) {
    if (guarded_fd >= 0) {
        tcsetattr(guarded_fd, TCSANOW, &guarded_settings);
    }
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = SIG_DFL;
    sigaction(signal_number, &action, NULL);
    raise(signal_number);
}

int CGL_terminal_guard(int fd, const struct termios *saved) {
    guarded_settings = *saved;
    guarded_fd = fd;
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = restore_terminal_and_die;
    sigset_t unblocked;
    sigemptyset(&unblocked);
    for (size_t i = 0; i < sizeof(guarded_signals) / sizeof(guarded_signals[0]); i++) {
        if (sigaction(guarded_signals[i], &action, NULL) != 0) {
            return -1;
        }
        sigaddset(&unblocked, guarded_signals[i]);
    }
    /* A caller may have blocked them (cryptsetup's askpass blocks every signal before it
       starts plymouth): a signal meant to end the prompt must end it, settings restored. */
    return sigprocmask(SIG_UNBLOCK, &unblocked, NULL);
}

void CGL_terminal_unguard(void) {
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = SIG_DFL;
    for (size_t i = 0; i < sizeof(guarded_signals) / sizeof(guarded_signals[0]); i++) {
        sigaction(guarded_signals[i], &action, NULL);
    }
    guarded_fd = -1;
}
