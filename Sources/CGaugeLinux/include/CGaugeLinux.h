#ifndef CGAUGELINUX_H
#define CGAUGELINUX_H
/* Platform headers and the ioctl numbers / macros Swift cannot import directly. */
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <sys/signalfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <linux/fb.h>
#include <linux/kd.h>
#include <linux/vt.h>

#endif
