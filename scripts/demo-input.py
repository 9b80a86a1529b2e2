#!/usr/bin/python3
"""The input half of `make demo`, run as root inside the throw-away VM (Tests/VM/run-in-vm):
fake kiosk hardware through /dev/uinput (a button node with power and the volume
keys, a USB keyboard, a touchscreen), kioskd brokering it on a private bus, and python-evdev
reading kioskd's clones: what the kiosk's compositor would see, before, during and after a
guided-access session of policies/museum-map.toml.

  usage: demo-input.py BIN_DIR POLICIES_DIR
"""
import os
import select
import subprocess
import sys
import tempfile
import time

from evdev import AbsInfo, InputDevice, UInput, ecodes as e

BIN, POLICIES = sys.argv[1], sys.argv[2]
work = tempfile.mkdtemp(prefix="kioskd-demo-input-")
children = []


def show(text):
    print(text, flush=True)


def run(*args, stdin=None):
    """Runs a kioskctl command against the private bus and shows it with its output."""
    show("$ " + " ".join(["kioskctl", *args]) + (f"   (stdin: {stdin.strip()!r})" if stdin else ""))
    result = subprocess.run([f"{BIN}/kioskctl", *args], input=stdin, text=True, capture_output=True)
    for line in (result.stdout + result.stderr).splitlines():
        show("  " + line)
    return result.returncode


def start(args, log):
    child = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    children.append(child)
    return child


# A private system bus: nothing here touches a real one (there is none in the VM anyway).
config = os.path.join(work, "bus.conf")
with open(config, "w") as f:
    f.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>system</type><listen>unix:path={work}/bus</listen>
<policy context="default"><allow user="*"/><allow own="*"/><allow send_type="method_call"/>
<allow send_type="signal"/><allow receive_type="signal"/><allow send_requested_reply="true"/>
<allow receive_requested_reply="true"/></policy></busconfig>""")
start(["dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile"], subprocess.DEVNULL)
os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = f"unix:path={work}/bus"
while not os.path.exists(f"{work}/bus"):
    time.sleep(0.05)

# The kiosk's hardware, as its drivers would create it.
power = UInput({e.EV_KEY: [e.KEY_POWER, e.KEY_VOLUMEUP, e.KEY_VOLUMEDOWN, e.KEY_MUTE]},
               name="Demo Power Button", phys="demo-buttons/input0", bustype=0x19)
keyboard = UInput({e.EV_KEY: [e.KEY_A, e.KEY_B, e.KEY_F11, e.KEY_LEFTCTRL, e.KEY_LEFTALT, e.KEY_F2]},
                  name="USB Keyboard", phys="usb-0000:00:14.0-1/input0", bustype=0x03)
touch = UInput({e.EV_KEY: [e.BTN_TOUCH],
                e.EV_ABS: [(e.ABS_X, AbsInfo(0, 0, 1023, 0, 0, 0)), (e.ABS_Y, AbsInfo(0, 0, 1023, 0, 0, 0)),
                           (e.ABS_MT_SLOT, AbsInfo(0, 0, 9, 0, 0, 0)),
                           (e.ABS_MT_TRACKING_ID, AbsInfo(0, 0, 65535, 0, 0, 0)),
                           (e.ABS_MT_POSITION_X, AbsInfo(0, 0, 1023, 0, 0, 0)),
                           (e.ABS_MT_POSITION_Y, AbsInfo(0, 0, 1023, 0, 0, 0))]},
               name="Demo Touchscreen", phys="i2c-DEMO0001:00", bustype=0x18, input_props=[e.INPUT_PROP_DIRECT])
physical = {"Demo Power Button": power, "USB Keyboard": keyboard, "Demo Touchscreen": touch}

log = open(os.path.join(work, "kioskd.log"), "w")
os.makedirs(f"{work}/state")
# Installed as an admin installs them: private to root (kioskd refuses a passcode hash others can read).
os.makedirs(f"{work}/profiles", mode=0o700)
for name in os.listdir(POLICIES):
    if name.endswith(".toml"):
        with open(os.path.join(POLICIES, name), "rb") as source:
            fd = os.open(os.path.join(work, "profiles", name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as target:
                target.write(source.read())
start([f"{BIN}/kioskd", "--state-dir", f"{work}/state", "--profile-dir", f"{work}/profiles",
       "--runtime-dir", f"{work}/run"], log)
monitor_log = open(os.path.join(work, "monitor.log"), "w")


def clones():
    """kioskd's clone of each fake device, by name (phys "kioskd-clone/...")."""
    found = {}
    for node in sorted(os.listdir("/dev/input")):
        if node.startswith("event"):
            try:
                dev = InputDevice("/dev/input/" + node)
            except OSError:
                continue
            if (dev.phys or "").startswith("kioskd-clone/") and dev.name in physical:
                found[dev.name] = dev
    return found


deadline = time.monotonic() + 60
while len(seen := clones()) < 3 and time.monotonic() < deadline:
    time.sleep(0.1)
if len(seen) < 3:
    show("kioskd did not clone the devices; its log:\n" + open(log.name).read())
    sys.exit(1)
show(f"kioskd grabbed {', '.join(sorted(physical))} and made a clone of each (phys kioskd-clone/...):")
show("the compositor reads only the clones, so what they deliver is what the kiosk sees.\n")
start([f"{BIN}/kioskctl", "monitor"], monitor_log)


def press(device, key, times=1):
    for _ in range(times):
        device.write(e.EV_KEY, key, 1); device.syn()
        device.write(e.EV_KEY, key, 0); device.syn()
        time.sleep(0.05)


def tap(x, y, tracking):
    touch.write(e.EV_ABS, e.ABS_MT_SLOT, 0)
    touch.write(e.EV_ABS, e.ABS_MT_TRACKING_ID, tracking)
    touch.write(e.EV_ABS, e.ABS_MT_POSITION_X, x); touch.write(e.EV_ABS, e.ABS_MT_POSITION_Y, y)
    touch.write(e.EV_KEY, e.BTN_TOUCH, 1); touch.write(e.EV_ABS, e.ABS_X, x); touch.write(e.EV_ABS, e.ABS_Y, y)
    touch.syn()
    touch.write(e.EV_ABS, e.ABS_MT_TRACKING_ID, -1); touch.write(e.EV_KEY, e.BTN_TOUCH, 0); touch.syn()


def seen_by_kiosk(clone_devices):
    """Everything the clones delivered since the last look, summarised."""
    time.sleep(0.4)
    words = []
    for dev in clone_devices.values():
        while select.select([dev.fd], [], [], 0)[0]:
            try:
                for ev in dev.read():
                    if ev.type == e.EV_KEY and ev.value == 1 and ev.code != e.BTN_TOUCH:
                        words.append(e.KEY[ev.code] if isinstance(e.KEY[ev.code], str) else e.KEY[ev.code][0])
                    elif ev.type == e.EV_ABS and ev.code == e.ABS_MT_TRACKING_ID and ev.value >= 0:
                        words.append("a touch")
            except BlockingIOError:
                break
    return ", ".join(words) if words else "nothing"


def round_of_input(title):
    found = clones()
    seen_by_kiosk(found)  # drop anything earlier
    show(f"-- {title}")
    for label, action in [
        ("power-button node: KEY_VOLUMEUP", lambda: press(power, e.KEY_VOLUMEUP)),
        ("USB keyboard: KEY_A", lambda: press(keyboard, e.KEY_A)),
        ("USB keyboard: KEY_F11", lambda: press(keyboard, e.KEY_F11)),
        ("touch on the settings gear (top right)", lambda: tap(1000, 40, 1)),
        ("touch in the middle of the map", lambda: tap(512, 512, 2)),
    ]:
        action()
        show(f"   {label:42} -> the kiosk sees: {seen_by_kiosk(found)}")
    show("")


round_of_input("no session: everything passes")
run("start", "museum-map")
round_of_input("a museum-map session: volume, F11 and the gear corner are locked")
show("-- staff press the (locked) power button 3 times quickly: the exit gesture")
press(power, e.KEY_POWER, times=3)
show(f"   the kiosk sees: {seen_by_kiosk(clones())}; kioskctl monitor printed:")
time.sleep(0.5)
for line in open(monitor_log.name).read().splitlines():
    if "ExitRequested" in line or "exit" in line.lower():
        show("     " + line)
show("")
run("end", "--passcode-stdin", stdin="1234\n")
round_of_input("after the session: everything passes again")

for child in reversed(children):
    child.terminate()
    child.wait(timeout=10)
for device in physical.values():
    device.close()
show("done: kioskd stopped, the fake devices are gone.")
