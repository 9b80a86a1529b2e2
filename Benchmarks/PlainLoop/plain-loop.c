// SPDX-License-Identifier: Apache-2.0
//
// The plain loop `make bench-latency` compares kioskd with: what forwarding costs with no
// filter, no bus and no event-loop library. For each evdev node named on the command line it
// takes the grab, stamps the fd with CLOCK_MONOTONIC (as kioskd does), and makes a uinput clone
// with libevdev, with the source's phys (libevdev does not copy it: UI_SET_PHYS on the uinput fd
// first), so that a kioskd beside it that leaves the source alone leaves the clone too; then one epoll_wait, one read(2) of up to 64 events per ready node (read again
// only when the buffer came back full) and one write(2) per frame to the clone. It does not
// watch the clones for LED requests: the least a forwarder can do.
//
// Prints each clone's device node, one line per source in order, once all exist; runs until
// SIGTERM or SIGINT. Built by the Makefile with the host's cc (bench-latency).
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <linux/uinput.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <libevdev/libevdev-uinput.h>
#include <libevdev/libevdev.h>

#define MAX_NODES 8
#define BUFFER_EVENTS 64

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

static void die(const char *what, int err) {
    fprintf(stderr, "plain-loop: %s: %s\n", what, strerror(err));
    exit(1);
}

int main(int argc, char **argv) {
    if (argc < 2 || argc - 1 > MAX_NODES) {
        fprintf(stderr, "usage: plain-loop /dev/input/eventN...\n");
        return 2;
    }
    int nodes = argc - 1, in[MAX_NODES], out[MAX_NODES];
    struct libevdev_uinput *clones[MAX_NODES];
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) die("epoll_create1", errno);
    for (int i = 0; i < nodes; i++) {
        struct libevdev *dev;
        int rc;
        in[i] = open(argv[i + 1], O_RDWR | O_NONBLOCK | O_CLOEXEC);
        if (in[i] < 0) die(argv[i + 1], errno);
        if (ioctl(in[i], EVIOCGRAB, 1) < 0) die("EVIOCGRAB", errno);
        if ((rc = libevdev_new_from_fd(in[i], &dev)) < 0) die("libevdev_new_from_fd", -rc);
        if ((rc = libevdev_set_clock_id(dev, CLOCK_MONOTONIC)) < 0) die("EVIOCSCLOCKID", -rc);
        int uinput = open("/dev/uinput", O_RDWR | O_CLOEXEC);
        if (uinput < 0) die("/dev/uinput", errno);
        const char *phys = libevdev_get_phys(dev);
        if (phys && ioctl(uinput, UI_SET_PHYS, phys) < 0) die("UI_SET_PHYS", errno);
        rc = libevdev_uinput_create_from_device(dev, uinput, &clones[i]);
        if (rc < 0) die("libevdev_uinput_create_from_device", -rc);
        out[i] = libevdev_uinput_get_fd(clones[i]);
        libevdev_free(dev);  // its description is in the clone now
        struct epoll_event watch = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, in[i], &watch) < 0) die("epoll_ctl", errno);
    }
    for (int i = 0; i < nodes; i++) printf("%s\n", libevdev_uinput_get_devnode(clones[i]));
    fflush(stdout);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);

    struct input_event buffer[BUFFER_EVENTS];
    while (!stop) {
        struct epoll_event ready[MAX_NODES];
        int n = epoll_wait(ep, ready, MAX_NODES, -1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) die("epoll_wait", errno);
        for (int r = 0; r < n; r++) {
            int i = (int)ready[r].data.u32;
            ssize_t got;
            do {
                got = read(in[i], buffer, sizeof buffer);
                if (got < 0 && errno == EINTR) continue;
                if (got <= 0) break;
                size_t count = (size_t)got / sizeof buffer[0], start = 0;
                for (size_t e = 0; e < count; e++) {  // one write per frame, as kioskd writes
                    if (buffer[e].type != EV_SYN || buffer[e].code != SYN_REPORT) continue;
                    size_t bytes = (e + 1 - start) * sizeof buffer[0];
                    if (write(out[i], &buffer[start], bytes) != (ssize_t)bytes) die("write", errno);
                    start = e + 1;
                }
                if (start < count) {  // a frame cut by a full buffer: uinput holds it until its SYN_REPORT
                    size_t bytes = (count - start) * sizeof buffer[0];
                    if (write(out[i], &buffer[start], bytes) != (ssize_t)bytes) die("write", errno);
                }
            } while (got == (ssize_t)sizeof buffer);
        }
    }
    for (int i = 0; i < nodes; i++) {
        libevdev_uinput_destroy(clones[i]);
        close(out[i]);  // libevdev closes only the fds it opened
    }
    return 0;
}
