import BusTestSupport
import Foundation
import KioskCore

/// A local attacker forging kioskd's signals: python3-dbus (Debian's `/usr/bin/python3`), as
/// uid 65534 through setpriv, sends every signal kioskd emits *unicast* to each connection on
/// the bus but its own (and kioskd's). dbus-daemon delivers a signal addressed to a connection
/// whatever that connection's match rules say, so a `sender='org.kioskd.GuidedAccess1'` match
/// does not stop them: only a client that compares the sender with the name's owner does.
///
/// From one connection it sends, to each target:
/// 1. the manager's signals as they are (`RestrictionStateChanged`, `PropertiesChanged` with
///    values — among them a `LockedRegions` that would shade the whole screen black — and with
///    an invalidation, `ExitRequested`, `PromptClosed`, `TimeLimitWarning`,
///    `TimeExtended`, `CleaningStarted`, `CleaningEnded`);
/// 2. a forged `NameOwnerChanged` saying that the forger now owns kioskd's name, then the
///    manager's signals again;
/// 3. a forged `NameOwnerChanged` saying that kioskd's name has no owner.
///
/// It returns after a call to the bus driver: the driver handles a connection's messages in
/// order, so by then every forged signal has been queued to its target, and a real signal
/// kioskd sends later reaches the target after them. That real signal is the sentinel a test
/// waits for before asserting that nothing changed.
public enum SignalForger {
    /// What the forged signals say, chosen to differ from anything the tests set for real.
    public static let forgedProfile = "forged"
    public static let forgedSessionState = "expired"
    public static let forgedWarningSeconds: UInt64 = 4242

    static let script = """
        import sys, dbus, dbus.lowlevel
        address, app, restriction, state = sys.argv[1:5]
        KIOSK, PATH, IFACE = "\(KioskWire.busName)", "\(KioskWire.objectPath)", "\(KioskWire.managerInterface)"
        bus = dbus.bus.BusConnection(address)
        me = bus.get_unique_name()
        try:
            kioskd = bus.get_name_owner(KIOSK)
        except dbus.DBusException:
            kioskd = ""
        targets = [n for n in bus.list_names() if n.startswith(":") and n not in (me, kioskd)]
        sent = 0

        def send(dest, path, iface, member, signature=None, *args):
            global sent
            m = dbus.lowlevel.SignalMessage(path, iface, member)
            m.set_destination(dest)
            if signature:
                m.append(*args, signature=signature)
            bus.send_message(m)
            sent += 1

        def manager_signals(dest):
            send(dest, PATH, IFACE, "RestrictionStateChanged", "sss", app, restriction, state)
            send(dest, PATH, "org.freedesktop.DBus.Properties", "PropertiesChanged", "sa{sv}as", IFACE, {
                "SessionState": dbus.String("\(forgedSessionState)", variant_level=1),
                "ActiveProfile": dbus.String("\(forgedProfile)", variant_level=1),
                "ActiveApp": dbus.String(app, variant_level=1),
                "PromptState": dbus.String("open", variant_level=1),
                "PromptLength": dbus.UInt32(4, variant_level=1),
                "SessionDeadline": dbus.UInt64(1, variant_level=1),
                "LockedRegions": dbus.Array([dbus.Struct(("\(forgedProfile)", dbus.Double(1.0),
                    dbus.Array([0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0], signature="d")))],
                    signature="(sdad)", variant_level=1),
                "BrowserPolicies": dbus.Array([dbus.Struct(("chromium", "URLBlocklist", "[]",
                    "org.chromium.Chromium.navigation"))], signature="(ssss)", variant_level=1),
                "PasscodeSet": dbus.Boolean(True, variant_level=1),
                "StateStorage": dbus.Struct((dbus.UInt64(1), "forged"), signature="ts", variant_level=1),
            }, dbus.Array([], signature="s"))
            send(dest, PATH, "org.freedesktop.DBus.Properties", "PropertiesChanged", "sa{sv}as", IFACE,
                 dbus.Dictionary({}, signature="sv"), ["SessionState", "PromptState"])
            send(dest, PATH, IFACE, "ExitRequested")
            send(dest, PATH, IFACE, "PromptClosed", "s", "accepted")
            send(dest, PATH, IFACE, "TimeLimitWarning", "t", dbus.UInt64(\(forgedWarningSeconds)))
            send(dest, PATH, IFACE, "TimeExtended", "tu", dbus.UInt64(600), dbus.UInt32(9))
            send(dest, PATH, IFACE, "IdleReset")
            send(dest, PATH, IFACE, "CleaningStarted", "t", dbus.UInt64(30))
            send(dest, PATH, IFACE, "CleaningEnded")

        for dest in targets:
            manager_signals(dest)
            send(dest, "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged", "sss", KIOSK, kioskd, me)
            manager_signals(dest)
            send(dest, "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged", "sss", KIOSK, me, "")
        bus.list_names()  # the driver has routed everything sent before this reply
        print(f"{sent} forged signals to {len(targets)} connections from {me}")
        """

    /// Forges the signals as uid `uid` (65534 unless told) on `bus`; the restriction signal says
    /// `restriction` of `app` is now `state`. Returns the script's one-line summary; throws when
    /// it failed or reached no connection.
    @discardableResult
    public static func forge(
        on bus: PrivateBus, app: String, restriction: String, state: String, as uid: UInt32 = 65534
    ) throws -> String {
        let output = try runTool(
            "/usr/bin/setpriv",
            [
                "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "/usr/bin/python3", "-c", script, bus.address,
                app, restriction, state,
            ])
        guard output.status == 0, !output.stdout.hasPrefix("0 ") else {
            throw HarnessError("The forger failed or reached no connection: \(output)")
        }
        return output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
