// CEvdev: libevdev, libevdev-uinput and the kernel's evdev/uinput headers, plus
// static inline wrappers for what Swift cannot import: the ioctl request
// numbers are function-like macros (EVIOCGRAB, UI_SET_PHYS); libevdev reads the rest.
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

/// ioctl(fd, UI_SET_PHYS, phys) on a /dev/uinput fd, before the device is created.
static inline int cevdev_uinput_set_phys(int fd, const char *phys) {
    return ioctl(fd, UI_SET_PHYS, phys) < 0 ? -errno : 0;
}

/// UINPUT_MAX_NAME_SIZE: uinput device names are cut to this size minus the NUL.
static inline size_t cevdev_uinput_max_name_size(void) { return UINPUT_MAX_NAME_SIZE; }

#endif
