// CEvdev: libevdev, libevdev-uinput and the kernel's evdev/uinput headers, plus
// static inline wrappers for what Swift cannot import: the ioctl request
// numbers are function-like macros (EVIOCGRAB, EVIOCGNAME(len), ...).
// Every wrapper returns 0 (or a length) on success and -errno on failure,
// like libevdev itself.
#ifndef KIOSKD_CEVDEV_SHIM_H
#define KIOSKD_CEVDEV_SHIM_H

#include <errno.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/input.h>
#include <linux/uinput.h>
#include <libevdev/libevdev.h>
#include <libevdev/libevdev-uinput.h>

/// ioctl(fd, EVIOCGRAB, on): grab (1) or release (0) the device.
static inline int cevdev_grab(int fd, int on) {
    return ioctl(fd, EVIOCGRAB, (void *)(long)on) < 0 ? -errno : 0;
}

/// ioctl(fd, EVIOCGNAME(len), buf): the device name; returns its length incl. NUL.
static inline int cevdev_get_name(int fd, char *buf, size_t len) {
    int rc = ioctl(fd, EVIOCGNAME(len), buf);
    return rc < 0 ? -errno : rc;
}

/// ioctl(fd, EVIOCGPHYS(len), buf): the physical path; -ENOENT if the device has none.
static inline int cevdev_get_phys(int fd, char *buf, size_t len) {
    int rc = ioctl(fd, EVIOCGPHYS(len), buf);
    return rc < 0 ? -errno : rc;
}

/// ioctl(fd, EVIOCGBIT(type, len), bits): the code bitmask of an event type
/// (type 0: the bitmask of event types). Returns the number of bytes written.
static inline int cevdev_get_bits(int fd, unsigned int type, unsigned char *bits, size_t len) {
    int rc = ioctl(fd, EVIOCGBIT(type, len), bits);
    return rc < 0 ? -errno : rc;
}

/// ioctl(fd, EVIOCGPROP(len), bits): the input property bitmask.
static inline int cevdev_get_props(int fd, unsigned char *bits, size_t len) {
    int rc = ioctl(fd, EVIOCGPROP(len), bits);
    return rc < 0 ? -errno : rc;
}

/// ioctl(fd, EVIOCSCLOCKID, &clockid): the clock that stamps this fd's events.
static inline int cevdev_set_clock_id(int fd, int clockid) {
    return ioctl(fd, EVIOCSCLOCKID, &clockid) < 0 ? -errno : 0;
}

/// ioctl(fd, UI_SET_PHYS, phys) on a /dev/uinput fd, before the device is created.
static inline int cevdev_uinput_set_phys(int fd, const char *phys) {
    return ioctl(fd, UI_SET_PHYS, phys) < 0 ? -errno : 0;
}

/// The size of struct input_event in this ABI (24 bytes on 64-bit).
static inline size_t cevdev_input_event_size(void) { return sizeof(struct input_event); }

/// UINPUT_MAX_NAME_SIZE: uinput device names are cut to this size minus the NUL.
static inline size_t cevdev_uinput_max_name_size(void) { return UINPUT_MAX_NAME_SIZE; }

#endif
