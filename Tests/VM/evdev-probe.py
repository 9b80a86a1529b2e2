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
"""
import json
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
    elif len(argv) == 4 and argv[0] == "set-led":
        InputDevice(argv[1]).set_led(int(argv[2]), int(argv[3]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
