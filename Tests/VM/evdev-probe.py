#!/usr/bin/python3
"""The VM tests' independent eyes on evdev nodes, through python-evdev
(Debian's python3-evdev), so LinuxInput is never checked only by itself.

  evdev-probe.py describe PATH...         one JSON object per node: name, phys,
                                           ids, properties, codes, abs ranges
  evdev-probe.py read [--idle S] [--max S] PATH...
                                           prints "ready" once every node is open,
                                           then "PATH TYPE CODE VALUE" per event,
                                           until no event came for S seconds
  evdev-probe.py set-led PATH CODE VALUE  writes EV_LED CODE VALUE to the node
  evdev-probe.py watch [PATH...]          reads PATH... and every kioskd clone that appears
                                           (phys "kioskd-clone/..."): "open PATH PHYS NAME"
                                           when it opens one, "PATH TYPE CODE VALUE" per
                                           event, "gone PATH" when one vanishes; on stdin,
                                           "mark X" prints "mark X" once everything pending
                                           was printed, "quit" ends it
  evdev-probe.py grab PATH                grabs the node (EVIOCGRAB), prints "grabbed", then
                                           "PATH TYPE CODE VALUE" per event it reads; on stdin,
                                           "release" ungrabs (it keeps reading) and prints
                                           "released", "quit" ends it
"""
import json
import os
import select
import sys
import time

from evdev import InputDevice, ecodes


def describe(path):
    dev = InputDevice(path)
    caps = dev.capabilities(absinfo=True)
    codes, axes = {}, {}
    for etype, entries in caps.items():
        if etype == ecodes.EV_SYN:
            continue
        listed = []
        for entry in entries:
            if etype == ecodes.EV_ABS:
                code, info = entry
                axes[str(code)] = [info.min, info.max, info.resolution]
                listed.append(code)
            else:
                listed.append(entry)
        codes[str(etype)] = sorted(listed)
    info = dev.info
    return {
        "path": path, "name": dev.name, "phys": dev.phys,
        "id": [info.bustype, info.vendor, info.product, info.version],
        "props": sorted(dev.input_props()), "codes": codes, "abs": axes,
    }


def read(paths, idle, limit):
    opened = [InputDevice(p) for p in paths]   # keep them: a collected InputDevice closes its fd
    handles = {dev.fd: dev for dev in opened}
    devices = {dev.fd: dev.path for dev in opened}
    print("ready", flush=True)
    start = last = time.monotonic()
    while True:
        now = time.monotonic()
        left = min(last + idle, start + limit) - now
        if left <= 0:
            break
        ready, _, _ = select.select(list(handles), [], [], left)
        for fd in ready:
            for ev in handles[fd].read():
                print(devices[fd], ev.type, ev.code, ev.value, flush=True)
            last = time.monotonic()
    print("end", flush=True)


def watch(paths):
    nodes = {}        # fd -> (InputDevice, path)
    rejected = set()  # (path, inode) of nodes that are not clones
    open_paths = set()

    def add(dev, path):
        nodes[dev.fd] = (dev, path)
        open_paths.add(path)
        print("open", path, dev.phys or "-", dev.name, flush=True)

    def drain(fd):
        dev, path = nodes[fd]
        try:
            for ev in dev.read():
                print(path, ev.type, ev.code, ev.value, flush=True)
        except BlockingIOError:
            pass
        except OSError:
            print("gone", path, flush=True)
            del nodes[fd]
            open_paths.discard(path)
            try:
                dev.close()
            except OSError:
                pass

    def scan():
        for name in sorted(os.listdir("/dev/input")):
            path = "/dev/input/" + name
            if not name.startswith("event") or path in open_paths:
                continue
            try:
                key = (path, os.stat(path).st_ino)
            except OSError:
                continue
            if key in rejected:
                continue
            try:
                dev = InputDevice(path)
            except OSError:
                continue
            if (dev.phys or "").startswith("kioskd-clone"):
                add(dev, path)
            else:
                rejected.add(key)
                dev.close()

    for path in paths:
        add(InputDevice(path), path)
    scan()
    print("ready", flush=True)
    pending = b""
    while True:
        ready, _, _ = select.select(list(nodes) + [0], [], [], 0.01)
        for fd in ready:
            if fd != 0:
                drain(fd)
                continue
            chunk = os.read(0, 4096)
            if not chunk:
                print("end", flush=True)
                return
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                line = line.decode().strip()
                if line == "quit":
                    print("end", flush=True)
                    return
                if line.startswith("mark"):
                    for node in list(nodes):
                        if node in nodes:
                            drain(node)
                    print(line, flush=True)
        scan()


def grab(path):
    dev = InputDevice(path)
    dev.grab()
    print("grabbed", flush=True)
    pending = b""
    while True:
        ready, _, _ = select.select([dev.fd, 0], [], [], 1.0)
        if dev.fd in ready:
            try:
                for ev in dev.read():
                    print(path, ev.type, ev.code, ev.value, flush=True)
            except BlockingIOError:
                pass
        if 0 not in ready:
            continue
        chunk = os.read(0, 4096)
        if not chunk:
            break
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            line = line.decode().strip()
            if line == "release":
                dev.ungrab()
                print("released", flush=True)
            elif line == "quit":
                print("end", flush=True)
                return
    print("end", flush=True)


def main(argv):
    if len(argv) >= 2 and argv[0] == "describe":
        for path in argv[1:]:
            print(json.dumps(describe(path)), flush=True)
    elif argv and argv[0] == "read":
        idle, limit, rest = 1.5, 60.0, argv[1:]
        while rest and rest[0].startswith("--"):
            if rest[0] == "--idle":
                idle = float(rest[1])
            elif rest[0] == "--max":
                limit = float(rest[1])
            rest = rest[2:]
        read(rest, idle, limit)
    elif argv and argv[0] == "watch":
        watch(argv[1:])
    elif len(argv) == 2 and argv[0] == "grab":
        grab(argv[1])
    elif len(argv) == 4 and argv[0] == "set-led":
        InputDevice(argv[1]).set_led(int(argv[2]), int(argv[3]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
