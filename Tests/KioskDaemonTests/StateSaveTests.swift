import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskdProcessTestSupport
import SystemdKit
import Testing

/// kioskd saves off its loop, one change at a time: changes that arrive together all reach the
/// disk, and a save that fails answers its caller and changes nothing. (That the loop is not
/// blocked meanwhile needs a slow disk: `KioskdEnforcementTests.SlowDiskVMTests`.)
@Suite(.serialized) struct StateSaveTests {
    static let app = KioskdBusTests.app

    @Test func changesSentTogetherEachBuildOnTheEarlierOnesAndAllSurviveARestart() throws {
        try withKioskd { kioskd, bus in
            let client = try ManagerClient(address: bus.address)
            let ids = (0..<20).map { "\(Self.app).r\($0)" }
            try client.register(Self.app, ids.map { ($0, "Restriction", "A test restriction") })
            // Twenty SetRestrictionState on different restrictions and a second app's registration,
            // all sent before any reply: each change is computed from the state with every earlier
            // one, so none is lost to a concurrent one.
            let out = try Python.run(
                """
                app, ids = sys.argv[2], sys.argv[3].split(",")
                loop = GLib.MainLoop()
                replies, signals = [], []
                def done(*a):
                    replies.append(a[0].get_dbus_name() if a else "ok")
                    if len(replies) == len(ids) + 1 and len(signals) == len(ids):
                        loop.quit()
                def changed(app, rid, state):
                    signals.append(str(rid))
                    if len(replies) == len(ids) + 1 and len(signals) == len(ids):
                        loop.quit()
                bus.add_signal_receiver(changed, "RestrictionStateChanged", "org.kioskd.GuidedAccess1.Manager")
                bus.get_name_owner("org.freedesktop.DBus")  # the match is in place
                for rid in ids:
                    m.SetRestrictionState(app, rid, "deny", reply_handler=done, error_handler=done)
                m.RegisterApplication("org.example.Other", [("org.example.Other.x", "X", "An X")],
                                      reply_handler=done, error_handler=done)
                GLib.timeout_add(20000, loop.quit)
                loop.run()
                print(sorted(set(replies)), len(replies), len(set(signals)))
                """, bus: bus, arguments: [Self.app, ids.joined(separator: ",")])
            #expect(out.stdout == "['ok'] 21 20\n", "\(out)\n\(kioskd.log)")

            #expect(kioskd.stop(SIGTERM) == 0)
            try kioskd.start()
            let again = try ManagerClient(address: bus.address)
            for id in ids { #expect(try again.state(Self.app, id) == "deny", "\(id)") }
            #expect(try again.call("ListApplications").first?.strings?.sorted() == (KioskdBusTests.builtIn + [Self.app, "org.example.Other"]).sorted())
        }
    }

    @Test func aSetSentRightAfterAnotherLandsAfterIt() throws {
        try withKioskd { kioskd, bus in
            let client = try ManagerClient(address: bus.address)
            try KioskdBusTests.registerSample(client)
            // deny then allow, the second sent before the first is answered: while the deny waits to
            // be saved, the allow is not a no-op (the disk still says allow), and it lands last.
            for round in 0..<5 {
                let out = try Python.run(
                    """
                    app, rid = sys.argv[2:4]
                    loop = GLib.MainLoop()
                    replies = []
                    def done(*a):
                        replies.append(a[0].get_dbus_name() if a else "ok")
                        if len(replies) == 2:
                            loop.quit()
                    m.SetRestrictionState(app, rid, "deny", reply_handler=done, error_handler=done)
                    m.SetRestrictionState(app, rid, "allow", reply_handler=done, error_handler=done)
                    GLib.timeout_add(10000, loop.quit)
                    loop.run()
                    print(replies, m.GetRestrictionState(app, rid))
                    """, bus: bus, arguments: [Self.app, KioskdBusTests.controls])
                #expect(out.stdout == "['ok', 'ok'] allow\n", "round \(round): \(out)\n\(kioskd.log)")
            }
        }
    }

    @Test func aSaveThatFailsAnswersTheErrorAndChangesNothing() throws {
        try withKioskd(setUp: { kioskd in
            try kioskd.writeTestProfile("museum", app: Self.app, denied: [KioskdBusTests.share])
        }) { kioskd, bus in
            let client = try ManagerClient(address: bus.address)
            try KioskdBusTests.registerSample(client)
            try client.call(
                "SetRestrictionState", [.string(Self.app), .string(KioskdBusTests.controls), .string("deny")])
            let before = try #require(kioskd.stateBytes)

            // The state directory vanishes under kioskd: no save can succeed.
            try FileManager.default.removeItem(at: kioskd.stateDirectory)
            let out = try Python.run(
                """
                app, controls, share = sys.argv[2:5]
                signals = []
                bus.add_signal_receiver(lambda *a: signals.append(a), "RestrictionStateChanged", "org.kioskd.GuidedAccess1.Manager")
                # StateStorage's own PropertiesChanged says the disk fails; it is no change made.
                bus.add_signal_receiver(lambda i, c, inv: signals.append(sorted(str(k) for k in c.keys())), "PropertiesChanged", "org.freedesktop.DBus.Properties")
                bus.get_name_owner("org.freedesktop.DBus")
                def failure(f, *args):
                    try:
                        f(*args)
                        return "ok"
                    except dbus.DBusException as e:
                        return "%s %s" % (e.get_dbus_name(), "not made" in e.get_dbus_message())
                print("set", failure(m.SetRestrictionState, app, share, "deny"))
                print("register", failure(m.RegisterApplication, "org.example.Other", [("org.example.Other.x", "X", "An X")]))
                print("start", failure(m.StartSession, "museum"))
                ctx = GLib.MainContext.default()
                end = time.monotonic() + 0.3
                while time.monotonic() < end:
                    ctx.iteration(False)
                    time.sleep(0.01)
                print("after", m.GetRestrictionState(app, share), m.GetRestrictionState(app, controls),
                      [str(a) for a in m.ListApplications()], props.Get("org.kioskd.GuidedAccess1.Manager", "SessionState"),
                      repr(props.Get("org.kioskd.GuidedAccess1.Manager", "SessionProblem")))
                print("signals", len([s for s in signals if s != ["StateStorage"]]))
                print("storage", ["StateStorage"] in signals)
                """, bus: bus, arguments: [Self.app, KioskdBusTests.controls, KioskdBusTests.share])
            let failed = "\(BusError.failed) True"
            #expect(
                out.stdout == """
                    set \(failed)
                    register \(failed)
                    start \(failed)
                    after allow deny ['org.chromium.Chromium', 'org.mozilla.firefox', '\(Self.app)'] inactive dbus.String('', variant_level=1)
                    signals 0
                    storage True

                    """, "\(out)\n\(kioskd.log)")
            #expect(kioskd.log.contains("Could not save the state"), "\(kioskd.log)")

            // The directory is back: the next change is saved, on top of the state before the failures.
            try FileManager.default.createDirectory(at: kioskd.stateDirectory, withIntermediateDirectories: true)
            try before.write(to: URL(fileURLWithPath: kioskd.statePath))
            try client.call("SetRestrictionState", [.string(Self.app), .string(KioskdBusTests.share), .string("deny")])
            #expect(kioskd.stop(SIGTERM) == 0)
            try kioskd.start()
            let again = try ManagerClient(address: bus.address)
            #expect(try again.state(Self.app, KioskdBusTests.controls) == "deny")
            #expect(try again.state(Self.app, KioskdBusTests.share) == "deny")
            #expect(try again.call("ListApplications").first?.strings == KioskdBusTests.builtIn + [Self.app])
            #expect(try again.property("SessionState") == .string("inactive"))
        }
    }

    /// A wrong passcode still being hashed when SIGTERM comes is not a free guess: kioskd finishes
    /// the check, saves the count and answers it before it exits (docs/state-store.md § Stopping
    /// with a save in flight). The profile's hash is a costly yescrypt (N = 2^16, 256 MiB: about
    /// 0.3 s on an idle machine), so the signal, sent 50 ms after the call, lands while the check
    /// runs; the journal's order proves it did.
    @Test func aWrongPasscodeBeingCheckedAtSIGTERMIsCountedBeforeTheExit() throws {
        // yescrypt of "1234", cost jDT.
        let costly = "$y$jDT$wu5EV0ZTWsGnMUW7dRD.v/$7Q6LcpCSLSCcLe4Srw4z6g9it2GFBBoGr4gwiST1zWC"
        try withKioskd(profiles: [
            "museum": "description = \"test\"\n[passcode]\nhash = \"\(costly)\"\n"
        ]) { kioskd, bus in
            let client = try ManagerClient(address: bus.address)
            try client.call("StartSession", [.string("museum")])
            let out = try Python.run(
                """
                import os, signal
                pid = bus.call_blocking("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                        "GetConnectionUnixProcessID", "s", ["\(KioskWire.busName)"])
                loop = GLib.MainLoop()
                replies = []
                def done(*a):
                    replies.append(a[0].get_dbus_name() if a else "ok")
                    loop.quit()
                # Straight on the connection: a proxy's call would wait for its introspection,
                # which needs the main loop.
                bus.call_async("\(KioskWire.busName)", "\(KioskWire.objectPath)", "\(KioskWire.managerInterface)",
                               "EndSession", "s", ["0000"], done, done)
                bus.flush()
                time.sleep(0.1)  # the call is on the loop; the hash takes 0.3 s or more
                os.kill(pid, signal.SIGTERM)
                GLib.timeout_add(10000, loop.quit)
                loop.run()
                print(replies)
                """, bus: bus)
            #expect(out.stdout == "['\(KioskError.Code.wrongPasscode.dbusName)']\n", "\(out)\n\(kioskd.log)")
            #expect(kioskd.waitForExit() == 0, "\(kioskd.log)")
            // The signal came while the passcode was being checked, not after its outcome.
            let log = kioskd.log
            let stopping = try #require(log.range(of: "Stopping"), "\(log)")
            let wrong = try #require(log.range(of: "Wrong passcode"), "\(log)")
            #expect(stopping.lowerBound < wrong.lowerBound, "\(log)")
            let file = try #require(kioskd.stateBytes)
            let json = try #require(try JSONSerialization.jsonObject(with: file) as? [String: Any])
            let state = try #require(json["state"] as? [String: Any])
            let throttles = try #require(state["throttles"] as? [String: Any], "\(String(decoding: file, as: UTF8.self))")
            #expect((throttles["uid 0"] as? [String: Any])?["failures"] as? Int == 1)

            // And kioskd started again says so.
            try kioskd.start()
            let again = try ManagerClient(address: bus.address)
            #expect(try again.property("SessionState") == .string("active"))
        }
    }
}
