#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
#
# text-order-sample.py BINARY OUT: run inside the VM by scripts/text-order. Until SIGTERM, it
# looks every 20 ms for processes running BINARY and records which pages of BINARY each has
# mapped (/proc/PID/pagemap, bit 63), as file offsets; on SIGTERM it writes their union to OUT,
# one hexadecimal offset per line. With the kernel's fault-around switched off (scripts/text-order
# does that), a mapped page of the binary is a page the process touched.
import os
import signal
import struct
import sys
import time

binary, out = os.path.realpath(sys.argv[1]), sys.argv[2]
touched = set()
running = True


def stop(*_):
    global running
    running = False


signal.signal(signal.SIGTERM, stop)


def sample(pid):
    try:
        if os.path.realpath(f"/proc/{pid}/exe") != binary:
            return
        with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/pagemap", "rb") as pagemap:
            for line in maps:
                fields = line.split()
                if len(fields) < 6 or os.path.realpath(fields[5]) != binary:
                    continue
                start, end = (int(x, 16) for x in fields[0].split("-"))
                offset = int(fields[2], 16)
                pagemap.seek(start // 4096 * 8)
                entries = pagemap.read((end - start) // 4096 * 8)
                for i in range(len(entries) // 8):
                    if struct.unpack_from("Q", entries, i * 8)[0] >> 63:
                        touched.add(offset + i * 4096)
    except OSError:
        pass  # the process ended between the listing and the read


while running:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            sample(int(entry))
    time.sleep(0.02)

with open(out, "w") as f:
    for offset in sorted(touched):
        f.write(f"{offset:x}\n")
print(f"text-order-sample: {len(touched)} pages of {binary} touched", file=sys.stderr)
