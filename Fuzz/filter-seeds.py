#!/usr/bin/env python3
"""Write FilterFuzz's seed corpus (Fuzz/corpus/filter) from the real recordings in
Tests/KioskTracesTests/Fixtures, in the byte layout FilterFuzz decodes (Fuzz/FilterFuzz/main.swift):
each recording under a policy locking a region (the screen's right half), and with touch off,
plus a keyboard stream with locked keys and a drop mid-frame. Run it again when that layout
changes: `python3 Fuzz/filter-seeds.py`.
"""
import os, struct

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "Tests", "KioskTracesTests", "Fixtures")
OUT = os.path.join(ROOT, "Fuzz", "corpus", "filter")
ABS_CODES = [0x2F, 0x39, 0x35, 0x36, 0x00, 0x01, 0x3A, 0x18]
SLOT_CHOICES = [0, 1, 4, 9, 15, -1, 300, 2**31 - 1]


def i32(value):
    return struct.pack("<i", value)


def device(kind, absinfo, slot_max):
    out = bytes([kind])
    def axis(code):
        low, high = absinfo.get(code, (0, 4095))
        return bytes([2]) + i32(low) + i32(high)
    if kind != 0:
        out += axis(0x00) + axis(0x01)
    if kind in (1, 2):
        out += axis(0x35) + axis(0x36)
    if kind == 1:
        out += bytes([SLOT_CHOICES.index(min((s for s in SLOT_CHOICES if s >= slot_max), default=15))])
    return out + bytes([0, 1])  # no BTN_LEFT, no calibration


def policy(locked_keys, touch):
    out = bytes([1, len(locked_keys)]) + bytes(k - 1 for k in locked_keys) + bytes([0])
    if touch == "regions":  # x 0.5, y -0.5, width 1.0, height ~1.49: the right half
        out += bytes([2, 0, 1, 128, 0, 192, 255])
    else:
        out += bytes([1])
    return out + bytes([1, 1])  # no max-contacts, no edge margin


def event(type_, code, value, ends_run=False):
    if type_ == 0 and code == 0:
        return bytes([0x18 if ends_run else 0x00])
    if type_ == 0 and code in (2, 3):
        return bytes([6, 0 if code == 2 else 1])
    if type_ == 1 and 1 <= code <= 120:
        return bytes([2, code - 1, value])
    if type_ == 1 and code in (0x14A, 0x110):
        return bytes([3, 1 if code == 0x14A else 0, value])
    if type_ == 3 and code in ABS_CODES:
        return bytes([4, ABS_CODES.index(code), 0]) + i32(value)
    return bytes([7, type_]) + struct.pack("<H", code) + i32(value)


def evemu(path):
    absinfo, events, slot_max = {}, [], 0
    for line in open(path, encoding="utf-8"):
        fields = line.split("#")[0].split()
        if fields[:1] == ["A:"]:
            code = int(fields[1], 16)
            absinfo[code] = (int(fields[2]), int(fields[3]))
            if code == 0x2F:
                slot_max = int(fields[3])
        elif fields[:1] == ["E:"]:
            events.append((int(fields[2], 16), int(fields[3], 16), int(fields[4])))
    return absinfo, events, slot_max


def main():
    os.makedirs(OUT, exist_ok=True)
    for name in ["atmel-maxtouch-ts.2-fingers-touch-release", "ep0430m09-ts.2-finger-scroll-down"]:
        absinfo, events, slot_max = evemu(os.path.join(FIXTURES, name + ".evemu"))
        frames = 0
        stream = b""
        for type_, code, value in events[:600]:
            if type_ == 0 and code == 0:
                frames += 1
            stream += event(type_, code, value, ends_run=frames % 3 == 0)
        for touch in ("regions", "none"):
            with open(os.path.join(OUT, f"{name}.{touch}"), "wb") as f:
                f.write(device(1, absinfo, slot_max) + policy([30, 1], touch) + stream)
    # A keyboard: KEY_A (30) locked, typed between KEY_S (31) presses; a drop cuts a frame.
    keys = b"".join(event(1, c, v) + event(0, 0, 0) for c, v in [(31, 1), (31, 0), (30, 1), (30, 2), (30, 0)])
    keys += event(1, 31, 1) + event(0, 3, 0) + event(1, 31, 0) + event(0, 0, 0, ends_run=True)
    with open(os.path.join(OUT, "keyboard-locked-key-and-drop"), "wb") as f:
        f.write(device(0, {}, 0) + policy([30], "none") + keys)


if __name__ == "__main__":
    main()
