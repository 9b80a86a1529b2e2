#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
#
# plain-loop.c in Python, a reference point for `make bench-latency`: what the same forwarding
# costs in an interpreter. python3-evdev only sets up (grab, a uinput clone with the source's
# name, ids, phys, properties and axes); the loop itself is one epoll wait, one os.read of up to
# 64 events per ready node (read again only when the buffer came back full) and one os.write per
# frame to the clone, as in C. No LED feedback.
#
# Prints each clone's device node, one line per source in order, once all exist; runs until
# SIGTERM or SIGINT.
import fcntl
import os
import select
import signal
import struct
import sys

import evdev
from evdev import ecodes

EVENT_SIZE = struct.calcsize("llHHi")  # struct input_event: 24 bytes on a 64-bit kernel
BUFFER = 64 * EVENT_SIZE
EVIOCSCLOCKID = 0x400445A0  # _IOW('E', 0xa0, int)
# Offsets of type and code in an event, and the bytes of (EV_SYN, SYN_REPORT) there.
TYPE_AT = EVENT_SIZE - 8
SYN_REPORT = struct.pack("HH", ecodes.EV_SYN, ecodes.SYN_REPORT)


def clone_of(device):
    info = device.info
    props = device.input_props()
    ui = evdev.UInput.from_device(
        device, name=device.name, phys=device.phys or "", vendor=info.vendor, product=info.product,
        version=info.version, bustype=info.bustype, input_props=props)
    return ui


def main():
    if len(sys.argv) < 2:
        print("usage: plain-loop.py /dev/input/eventN...", file=sys.stderr)
        return 2
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    ep = select.epoll()
    out = {}
    clones = []
    for path in sys.argv[1:]:
        source = evdev.InputDevice(path)
        source.grab()
        fcntl.ioctl(source.fd, EVIOCSCLOCKID, struct.pack("i", 1))  # CLOCK_MONOTONIC, as kioskd
        clone = clone_of(source)
        clones.append((source, clone))
        os.set_blocking(source.fd, False)
        out[source.fd] = clone.fd
        ep.register(source.fd, select.EPOLLIN)
    for _, clone in clones:
        print(clone.device.path)
    sys.stdout.flush()

    read, write = os.read, os.write
    while not stop:
        try:
            ready = ep.poll()
        except InterruptedError:
            continue
        for fd, _ in ready:
            target = out[fd]
            while True:
                try:
                    data = read(fd, BUFFER)
                except BlockingIOError:
                    break
                start = 0
                for end in range(EVENT_SIZE, len(data) + 1, EVENT_SIZE):  # one write per frame
                    if data[end - EVENT_SIZE + TYPE_AT:end - 4] == SYN_REPORT:
                        write(target, data[start:end])
                        start = end
                if start < len(data):  # a frame cut by a full buffer: uinput holds it until its SYN_REPORT
                    write(target, data[start:])
                if len(data) < BUFFER:
                    break
    for source, clone in clones:
        clone.close()
        source.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
