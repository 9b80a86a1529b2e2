// CEvdev: libevdev, libevdev-uinput and the kernel's evdev/uinput headers, plus
// static inline wrappers for what Swift cannot import: the ioctl request
// numbers are function-like macros (EVIOCGRAB, UI_SET_PHYS); libevdev reads the rest.
// Every wrapper returns 0 (or a length) on success and -errno on failure,
// like libevdev itself.
#ifndef KIOSKD_CEVDEV_SHIM_H
#define KIOSKD_CEVDEV_SHIM_H

#include <errno.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/netlink.h>
#include <unistd.h>
#include <linux/input.h>
#include <linux/uinput.h>
#include <libevdev/libevdev.h>
#include <libevdev/libevdev-uinput.h>

/// ioctl(fd, EVIOCGRAB, on): grab (1) or release (0) the device.
static inline int cevdev_grab(int fd, int on) {
    return ioctl(fd, EVIOCGRAB, (void *)(long)on) < 0 ? -errno : 0;
}

/// ioctl(fd, UI_SET_PHYS, phys) on a /dev/uinput fd, before the device is created.
static inline int cevdev_uinput_set_phys(int fd, const char *phys) {
    return ioctl(fd, UI_SET_PHYS, phys) < 0 ? -errno : 0;
}

/// ioctl(fd, EVIOCGPHYS(size), buffer): the node's phys, NUL-terminated; its length or -errno.
static inline int cevdev_phys(int fd, char *buffer, size_t size) {
    int length = ioctl(fd, EVIOCGPHYS(size), buffer);
    if (length < 0) return -errno;
    buffer[size - 1] = 0;
    return length;
}

/// UINPUT_MAX_NAME_SIZE: uinput device names are cut to this size minus the NUL.
static inline size_t cevdev_uinput_max_name_size(void) { return UINPUT_MAX_NAME_SIZE; }

/// A NETLINK_KOBJECT_UEVENT socket on the kernel's group (1): the kernel's own uevents, before
/// udev runs its rules. Non-blocking, close-on-exec; `rcvbuf` asked for (best effort).
static inline int cevdev_uevent_socket(int rcvbuf) {
    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT);
    if (fd < 0) return -errno;
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = 1 };
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    return fd;
}

/// One datagram of a uevent socket into `buffer`: its length; 0 for one to drop (not sent by the
/// kernel itself, nl_pid != 0, or cut short); -errno (-EAGAIN: none left).
static inline long cevdev_uevent_receive(int fd, void *buffer, size_t size) {
    struct sockaddr_nl from = { 0 };
    struct iovec iov = { .iov_base = buffer, .iov_len = size };
    struct msghdr msg = { .msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov, .msg_iovlen = 1 };
    ssize_t length = recvmsg(fd, &msg, MSG_DONTWAIT);
    if (length < 0) return -errno;
    if (from.nl_pid != 0 || (msg.msg_flags & MSG_TRUNC)) return 0;
    return (long)length;
}

/// read(2) and write(2) as plain system calls: the byte count, or -errno. glibc's read and
/// write are cancellation points, and in a process with threads each call switches
/// asynchronous cancellation on and off around the system call (about 40 instructions of
/// every input frame's read and write); kioskd cancels no thread.
static inline long cevdev_read(int fd, void *buffer, size_t size) {
    long n = syscall(SYS_read, fd, buffer, size);
    return n < 0 ? -errno : n;
}

static inline long cevdev_write(int fd, const void *buffer, size_t size) {
    long n = syscall(SYS_write, fd, buffer, size);
    return n < 0 ? -errno : n;
}

/// CLOCK_MONOTONIC in microseconds (sd-event's clock; the grab's timestamp).
static inline unsigned long long cevdev_monotonic_usec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000ULL;
}

#endif
