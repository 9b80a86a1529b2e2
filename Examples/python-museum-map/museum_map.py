#!/usr/bin/python3
"""A kiosk app in Python (python3-dbus) that follows its restrictions as docs/dbus-api.md says.

It believes a signal only when its sender is the unique name that owns org.kioskd.GuidedAccess1
(the bus driver's NameOwnerChanged says who, and only the driver's counts), and it reports each
change once: subscribe, register, read a snapshot, compare; again whenever kioskd restarts.

    /usr/bin/python3 museum_map.py     # the system bus, or $DBUS_SYSTEM_BUS_ADDRESS
"""
import signal

import dbus
import dbus.lowlevel
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

KIOSKD, PATH, MANAGER = "org.kioskd.GuidedAccess1", "/org/kioskd/GuidedAccess1", "org.kioskd.GuidedAccess1.Manager"
DRIVER, PROPERTIES = "org.freedesktop.DBus", "org.freedesktop.DBus.Properties"
APP = "org.example.MuseumMap"
RESTRICTIONS = [
    (APP + ".controls", "Admin controls", "The settings gear and the layer picker."),
    (APP + ".zoom", "Zoom", "Pinch to zoom."),
]
# sender= keeps other connections' broadcasts out; a signal sent to this connection by name comes
# whatever the rules say, so on_message checks the sender as well.
RULES = [
    f"type='signal',sender='{DRIVER}',path='/org/freedesktop/DBus',interface='{DRIVER}',"
    f"member='NameOwnerChanged',arg0='{KIOSKD}'",
    f"type='signal',sender='{KIOSKD}',path='{PATH}',interface='{MANAGER}',member='RestrictionStateChanged',arg0='{APP}'",
    f"type='signal',sender='{KIOSKD}',path='{PATH}',interface='{PROPERTIES}',member='PropertiesChanged',arg0='{MANAGER}'",
]

owner = None  # the unique name that owns KIOSKD; None while nobody does
seen = {}  # what was last reported: restriction id -> "allow"/"deny", and "session" -> its state


def say(line):
    print(f"museum-map.py: {line}", flush=True)


def note(key, value, what):
    if seen.get(key) == value:
        return  # seen already, as a signal or in a snapshot
    say(f"told that {what} is now {value}" if key in seen else f"{what} is {value}")
    seen[key] = value


def call(interface, member, signature, args, then):
    """Calls kioskd without blocking: replies are then handled in order with the signals."""
    failed = lambda e: say(f"{member} failed: {e.get_dbus_name()}: {e.get_dbus_message()}")
    bus.call_async(KIOSKD, PATH, interface, member, signature, args, then, failed)


def snapshot():
    """Registers (again), then reads the states and the session, comparing with what was seen."""
    def listed(items):
        for rid, _title, _detail, state in items:
            note(str(rid), str(state), str(rid))

    def properties(values):
        note("session", str(values["SessionState"]), "the session")

    def registered(*_):
        call(MANAGER, "ListRestrictions", "s", (APP,), listed)
        call(PROPERTIES, "GetAll", "s", (MANAGER,), properties)

    call(MANAGER, "RegisterApplication", "sa(sss)", (APP, RESTRICTIONS), registered)


def owner_changed(new_owner):
    global owner
    owner = new_owner or None
    say("kioskd runs" if owner else "kioskd stopped")
    if owner:
        snapshot()  # a (re)started kioskd: its signals count from now on


def on_message(_bus, message):
    if message.get_type() == dbus.lowlevel.MESSAGE_TYPE_SIGNAL:
        sender, member, args = message.get_sender(), message.get_member(), message.get_args_list()
        if member == "NameOwnerChanged" and message.get_interface() == DRIVER:
            if sender == DRIVER and args[0] == KIOSKD:  # only the bus driver says who owns the name
                owner_changed(str(args[2]))
        elif owner is None or sender != owner:
            pass  # not from kioskd: ignored
        elif member == "RestrictionStateChanged" and message.get_interface() == MANAGER and args[0] == APP:
            note(str(args[1]), str(args[2]), str(args[1]))
        elif member == "PropertiesChanged" and args[0] == MANAGER and "SessionState" in args[1]:
            note("session", str(args[1]["SessionState"]), "the session")
    return dbus.lowlevel.HANDLER_RESULT_NOT_YET_HANDLED


DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
bus.add_message_filter(on_message)
for rule in RULES:
    bus.add_match_string(rule)  # blocking: in place before the calls below


def first_owner(name):
    if name:
        owner_changed(name)


bus.call_async(DRIVER, "/org/freedesktop/DBus", DRIVER, "GetNameOwner", "s", (KIOSKD,), first_owner,
               lambda e: say("kioskd is not running: waiting for it"))
loop = GLib.MainLoop()
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
loop.run()
say("exiting")
