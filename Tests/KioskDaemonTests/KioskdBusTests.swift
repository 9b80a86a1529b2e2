import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskStore
import KioskTestSupport
import KioskdProcessTestSupport
import SystemdKit
import Testing

/// The built `kioskd` on a private bus, driven by busctl, python3-dbus and a SystemdKit client.
/// Serialized: each test runs its own dbus-daemon and kioskd, and the machine is small.
@Suite(.serialized) struct KioskdBusTests {
    static let manager = [KioskWire.busName, KioskWire.objectPath, KioskWire.managerInterface]
    static let app = "org.example.MuseumMap"
    /// The apps kioskd declares itself at its start, before any other (docs/browsers.md).
    static let builtIn = ["org.chromium.Chromium", "org.mozilla.firefox"]
    static let controls = "org.example.MuseumMap.controls"
    static let share = "org.example.MuseumMap.share"

    static func registerSample(_ client: ManagerClient) throws {
        try client.register(app, [(controls, "Map controls", "Pan and zoom"), (share, "Sharing", "Send to phone")])
    }

    @Test func busctlRegistersListsSetsAndGets() throws {
        try withKioskd { kioskd, bus in
            let a = "--address=\(bus.address)"
            func busctl(_ args: [String]) throws -> ToolOutput {
                try runTool(Tools.busctl, [a, "call"] + Self.manager + args)
            }

            let register = try busctl([
                "RegisterApplication", "sa(sss)", Self.app, "2",
                Self.controls, "Map controls", "Pan and zoom", Self.share, "Sharing", "Send to phone",
            ])
            #expect(register.status == 0, "\(register)\n\(kioskd.log)")
            // The built-in browsers first: kioskd declares them at its start (docs/browsers.md).
            #expect(
                try busctl(["ListApplications"]).stdout
                    == "as 3 \"org.chromium.Chromium\" \"org.mozilla.firefox\" \"\(Self.app)\"\n")
            #expect(
                try busctl(["ListRestrictions", "s", Self.app]).stdout
                    == "a(ssss) 2 \"\(Self.controls)\" \"Map controls\" \"Pan and zoom\" \"allow\" \"\(Self.share)\" \"Sharing\" \"Send to phone\" \"allow\"\n"
            )
            let set = try busctl(["SetRestrictionState", "sss", Self.app, Self.controls, "deny"])
            #expect(set.status == 0, "\(set)")
            #expect(try busctl(["GetRestrictionState", "ss", Self.app, Self.controls]).stdout == "s \"deny\"\n")
            #expect(try busctl(["GetRestrictionState", "ss", Self.app, Self.share]).stdout == "s \"allow\"\n")

            let saved = String(decoding: kioskd.stateBytes ?? Data(), as: UTF8.self)
            #expect(
                saved.contains("[\"\(Self.controls)\",\"Map controls\",\"Pan and zoom\",\"deny\",false]"), "\(saved)")
        }
    }

    @Test func python3DBusReceivesRestrictionStateChanged() throws {
        try withKioskd { kioskd, bus in
            try Self.registerSample(ManagerClient(address: bus.address))
            let out = try Python.run(
                """
                got = []
                loop = GLib.MainLoop()
                def changed(app, rid, state):
                    got.append((str(app), str(rid), str(state)))
                    loop.quit()
                bus.add_signal_receiver(changed, "RestrictionStateChanged", "org.kioskd.GuidedAccess1.Manager",
                                        "org.kioskd.GuidedAccess1", "/org/kioskd/GuidedAccess1", arg0="org.example.MuseumMap")
                m.SetRestrictionState("org.example.MuseumMap", "org.example.MuseumMap.share", "deny")
                GLib.timeout_add(5000, loop.quit)
                loop.run()
                print(got)
                print(m.GetRestrictionState("org.example.MuseumMap", "org.example.MuseumMap.share"))
                print(props.Get("org.kioskd.GuidedAccess1.Manager", "SessionState"))
                """, bus: bus)
            #expect(
                out.stdout == """
                    [('org.example.MuseumMap', 'org.example.MuseumMap.share', 'deny')]
                    deny
                    inactive

                    """, "\(out)\n\(kioskd.log)")
        }
    }

    /// Malformed or wrong calls, each with the documented error; none changes anything.
    static let badCalls: [(String, String, [DBusValue], String)] = {
        let invalid = KioskError.Code.invalidArgument.dbusName
        let longID = "org.example." + String(repeating: "a", count: 250)
        let tooMany: [DBusValue] = (0...KioskWire.Limits.restrictionsPerApp).map {
            .structure([.string("org.example.MuseumMap.r\($0)"), .string("t"), .string("d")])
        }
        func set(_ app: String, _ id: String, _ state: String) -> [DBusValue] {
            [.string(app), .string(id), .string(state)]
        }
        return [
            ("bad app id", "SetRestrictionState", set("1org.example", controls, "deny"), invalid),
            ("one-label app id", "GetRestrictionState", [.string("museum"), .string(controls)], invalid),
            ("empty label", "ListRestrictions", [.string("org..example")], invalid),
            ("too long id", "GetRestrictionState", [.string(app), .string(longID)], invalid),
            ("bad restriction id", "SetRestrictionState", set(app, "org.example.Museum Map", "deny"), invalid),
            ("unknown state string", "SetRestrictionState", set(app, controls, "maybe"), invalid),
            (
                "too many restrictions", "RegisterApplication",
                [.string(app), .array(elementSignature: "(sss)", tooMany)], invalid
            ),
            (
                "duplicate restriction", "RegisterApplication",
                [
                    .string(app),
                    .array(
                        elementSignature: "(sss)",
                        [
                            .structure([.string(controls), .string("a"), .string("b")]),
                            .structure([.string(controls), .string("a"), .string("b")]),
                        ]),
                ], invalid
            ),
            (
                "title too long", "RegisterApplication",
                [
                    .string(app),
                    .array(
                        elementSignature: "(sss)",
                        [
                            .structure([.string(controls), .string(String(repeating: "t", count: 257)), .string("d")])
                        ]),
                ], invalid
            ),
            (
                "unknown app", "SetRestrictionState", set("org.example.Other", controls, "deny"),
                KioskError.Code.unknownApplication.dbusName
            ),
            (
                "unknown app list", "ListRestrictions", [.string("org.example.Other")],
                KioskError.Code.unknownApplication.dbusName
            ),
            (
                "unknown restriction", "GetRestrictionState", [.string(app), .string("org.example.MuseumMap.none")],
                KioskError.Code.unknownRestriction.dbusName
            ),
            ("wrong signature", "SetRestrictionState", [.string(app), .uint32(1)], invalid),
            ("no arguments", "GetRestrictionState", [], invalid),
            ("profile with a path", "StartSession", [.string("../etc/passwd")], invalid),
            ("unknown profile", "StartSession", [.string("nope")], KioskError.Code.unknownProfile.dbusName),
            ("end without a session", "EndSession", [.string("x")], KioskError.Code.noSession.dbusName),
            ("force-end without a session", "ForceEndSession", [], KioskError.Code.noSession.dbusName),
            ("empty new passcode", "SetPasscode", [.string(""), .string("")], invalid),
        ]
    }()

    @Test func badInputGetsTheDocumentedErrorAndChangesNothing() throws {
        try withKioskd { kioskd, bus in
            let client = try ManagerClient(address: bus.address)
            try Self.registerSample(client)
            let before = kioskd.stateBytes
            let listBefore = try client.call("ListRestrictions", [.string(Self.app)])
            for (what, member, arguments, expected) in Self.badCalls {
                #expect(client.errorName(member, arguments) == expected, "\(what)")
            }
            #expect(kioskd.stateBytes == before)
            #expect(try client.call("ListRestrictions", [.string(Self.app)]) == listBefore)
            #expect(try client.call("ListApplications") == [.strings(Self.builtIn + [Self.app])])
            #expect(kioskd.process?.isRunning == true)
        }
    }

    @Test(.enabled(if: Root.isRoot, Comment(rawValue: Root.needs("to call as nobody through setpriv"))))
    func nobodyGetsAccessDeniedAndNothingChanges_needsRoot() throws {
        try withKioskd { kioskd, bus in
            let client = try ManagerClient(address: bus.address)
            try Self.registerSample(client)
            let before = kioskd.stateBytes
            let out = try Python.run(
                """
                for call in (lambda: m.SetRestrictionState("org.example.MuseumMap", "org.example.MuseumMap.controls", "deny"),
                             lambda: m.RegisterApplication("org.example.MuseumMap", [("org.example.MuseumMap.x", "t", "d")]),
                             lambda: m.ForceEndSession(),
                             lambda: m.SetPasscode("", "secret")):
                    try:
                        call()
                        print("ok")
                    except dbus.DBusException as e:
                        print(e.get_dbus_name())
                print(m.GetRestrictionState("org.example.MuseumMap", "org.example.MuseumMap.controls"))
                """, bus: bus, as: 65534)
            #expect(
                out.stdout == """
                    org.freedesktop.DBus.Error.AccessDenied
                    org.freedesktop.DBus.Error.AccessDenied
                    org.freedesktop.DBus.Error.AccessDenied
                    org.freedesktop.DBus.Error.AccessDenied
                    allow

                    """, "\(out)")
            #expect(kioskd.stateBytes == before)
            #expect(try client.state(Self.app, Self.controls) == "allow")
        }
    }

    @Test func stateSurvivesSIGKILLRightAfterTheReply() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let kioskd = try Kioskd(bus: bus)
        try kioskd.start()
        let client = try ManagerClient(address: bus.address)
        try Self.registerSample(client)
        try client.call("SetRestrictionState", [.string(Self.app), .string(Self.controls), .string("deny")])
        #expect(kioskd.stop(SIGKILL) == 128 + SIGKILL)
        try kioskd.start()
        defer { kioskd.stop() }
        let again = try ManagerClient(address: bus.address)
        #expect(try again.state(Self.app, Self.controls) == "deny")
        #expect(try again.state(Self.app, Self.share) == "allow")
    }

    @Test func readyOnlyAfterTheNameIsOwnedAndSIGTERMStopsCleanly() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let kioskd = try Kioskd(bus: bus)
        let notify = try NotifySocket(directory: bus.directory)
        try kioskd.start(notify: notify, waitForName: false)
        let seen = try notify.waitFor("READY=1")
        #expect(try bus.hasOwner(KioskWire.busName), "READY=1 before the name was owned: \(seen)")
        #expect(kioskd.stop(SIGTERM) == 0, "\(kioskd.log)")
        try notify.waitFor("STOPPING=1", timeout: .seconds(2))
    }

    @Test func aCorruptStateFileStopsKioskdAndIsLeftUntouched() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let kioskd = try Kioskd(bus: bus)
        let garbage = Data("{\"version\":1,\"state\":{\"registry\":".utf8)
        try garbage.write(to: URL(fileURLWithPath: kioskd.statePath))
        try kioskd.start(waitForName: false)
        #expect(kioskd.waitForExit() == 1)
        #expect(kioskd.stateBytes == garbage)
        #expect(kioskd.log.contains("corrupt"), "\(kioskd.log)")
        #expect(try !bus.hasOwner(KioskWire.busName))
    }

    /// A state file that does not read (here a directory where it belongs: `read` fails with
    /// EISDIR, an I/O error like a failing disk's EIO) while the runtime directory holds this
    /// boot's unsaved copy: the copy is served, `StateStorage` says saves fail, and once the file
    /// can be written the retries save the copy's state and remove it (docs/state-store.md § When
    /// the disk fails).
    @Test func anUnreadableStateFileIsServedFromThisBootsRuntimeCopy() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let kioskd = try Kioskd(bus: bus)
        try kioskd.start()
        let client = try ManagerClient(address: bus.address)
        try Self.registerSample(client)
        try client.call(
            "SetRestrictionState",
            [.string("org.example.MuseumMap"), .string("org.example.MuseumMap.share"), .string("deny")])
        kioskd.stop()
        let copy = kioskd.runtimeDirectory.appendingPathComponent(StateStore.pendingFileName).path
        try FileManager.default.moveItem(atPath: kioskd.statePath, toPath: copy)
        try FileManager.default.createDirectory(atPath: kioskd.statePath, withIntermediateDirectories: false)

        try kioskd.start()
        let served = try ManagerClient(address: bus.address)
        #expect(try served.state("org.example.MuseumMap", "org.example.MuseumMap.share") == "deny", "\(kioskd.log)")
        #expect(
            kioskd.log.contains("serving the unsaved state this boot kept in the runtime directory"), "\(kioskd.log)")
        let failing = try served.property("StateStorage")
        #expect(failing?.description.contains("The state cannot be saved") == true, "\(String(describing: failing))")

        try FileManager.default.removeItem(atPath: kioskd.statePath)
        let saved = eventually(timeout: .seconds(30), every: .milliseconds(100)) {
            kioskd.stateBytes.map { String(decoding: $0, as: UTF8.self) } ?? ""
        } until: {
            $0.contains("org.example.MuseumMap.share")
        }
        #expect(saved.contains(#""deny""#), "the copy's state is saved: \(saved.prefix(300))")
        let copyRemoved = eventually(timeout: .seconds(5), every: .milliseconds(20)) {
            !FileManager.default.fileExists(atPath: copy)
        }
        #expect(copyRemoved, "the copy is removed once saved")
    }

    /// A state file that does not read with no runtime copy: nothing to start from (the session,
    /// its locks, the passcode), so kioskd exits 1 naming the error and marks the runtime
    /// directory; after a reboot, the start that reads the file again cannot know what happened
    /// after its last save, and fails closed: a session with a time limit comes back expired.
    @Test func anUnreadableStateFileWithoutACopyStopsKioskdAndTheNextReadFailsClosed() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let kioskd = try Kioskd(bus: bus)
        try kioskd.writeTestProfile("museum", app: "org.example.MuseumMap", timeLimit: "10m")
        try kioskd.start()
        try ManagerClient(address: bus.address).call("StartSession", [.string("museum")])
        kioskd.stop()
        let saved = try #require(kioskd.stateBytes)
        #expect(String(decoding: saved, as: UTF8.self).contains(#""state":"active""#))

        // A power cut; the disk does not read at the next boot.
        try kioskd.simulateReboot()
        try FileManager.default.removeItem(atPath: kioskd.statePath)
        try FileManager.default.createDirectory(atPath: kioskd.statePath, withIntermediateDirectories: false)
        try kioskd.start(waitForName: false)
        #expect(kioskd.waitForExit() == 1, "\(kioskd.log)")
        #expect(kioskd.log.contains("Could not read the state file; kioskd starts once it reads"), "\(kioskd.log)")
        let marker = kioskd.runtimeDirectory.appendingPathComponent("state-unreadable").path
        #expect(FileManager.default.fileExists(atPath: marker))
        #expect(try !bus.hasOwner(KioskWire.busName))

        // The disk reads again, with the session as last saved.
        try FileManager.default.removeItem(atPath: kioskd.statePath)
        try saved.write(to: URL(fileURLWithPath: kioskd.statePath))
        try kioskd.start()
        let client = try ManagerClient(address: bus.address)
        #expect(try client.property("SessionState")?.string == "expired", "\(kioskd.log)")
        #expect(
            kioskd.log.contains("the state did not read earlier this boot); it comes back expired"), "\(kioskd.log)")
        #expect(!FileManager.default.fileExists(atPath: marker), "the marker is removed once its state is read")
        #expect(String(decoding: kioskd.stateBytes ?? Data(), as: UTF8.self).contains(#""state":"expired""#))
    }

    /// A file a newer kioskd wrote (a format version this one does not know) is refused like a
    /// corrupt one: kioskd exits 1 naming both versions, and never rewrites the file in its own,
    /// older format (docs/state-store.md § Format versions).
    @Test func aNewerStateFileStopsKioskdAndIsLeftUntouched() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let kioskd = try Kioskd(bus: bus)
        let newer = Data(#"{"state":{"registry":{"applications":[]},"sessionMachine":{}},"version":2}"#.utf8)
        try newer.write(to: URL(fileURLWithPath: kioskd.statePath))
        try kioskd.start(waitForName: false)
        #expect(kioskd.waitForExit() == 1)
        #expect(kioskd.stateBytes == newer)
        #expect(
            kioskd.log.contains("has format version 2; this kioskd reads version \(StateStore.formatVersion)"),
            "\(kioskd.log)")
        #expect(try !bus.hasOwner(KioskWire.busName))
    }

    @Test func sessionStartsWithAProfileAndEndsWithThePasscode() throws {
        try withKioskd(
            profiles: [
                "museum": """
                description = "test"
                [restrictions."org.example.MuseumMap"]
                "org.example.MuseumMap.share" = "deny"
                """,
                "broken": "description = 5\n",
            ]
        ) { kioskd, bus in
            let client = try ManagerClient(address: bus.address)
            try Self.registerSample(client)

            do {
                try client.call("StartSession", [.string("broken")])
                Issue.record("a broken profile started a session")
            } catch let error as BusError {
                #expect(error.name == KioskError.Code.invalidArgument.dbusName)
                #expect(error.message.contains("broken.toml:1:"), "\(error.message)")
            }
            try client.call("SetPasscode", [.string(""), .string("1234")])
            try client.call("StartSession", [.string("museum")])
            #expect(try client.property("SessionState") == .string("active"))
            #expect(try client.property("ActiveProfile") == .string("museum"))
            #expect(try client.state(Self.app, Self.share) == "deny")
            #expect(client.errorName("StartSession", [.string("museum")]) == KioskError.Code.sessionActive.dbusName)
            #expect(client.errorName("EndSession", [.string("0000")]) == KioskError.Code.wrongPasscode.dbusName)
            #expect(try client.property("SessionState") == .string("active"))
            try client.call("EndSession", [.string("1234")])
            #expect(try client.property("SessionState") == .string("inactive"))
            #expect(try client.state(Self.app, Self.share) == "allow")

            try client.call("StartSession", [.string("museum")])
            try client.call("ForceEndSession")
            #expect(try client.property("SessionState") == .string("inactive"))
            #expect(
                client.errorName("SetPasscode", [.string("wrong"), .string("5678")])
                    == KioskError.Code.wrongPasscode.dbusName)
            try client.call("SetPasscode", [.string("1234"), .string("5678")])
            let saved = String(decoding: kioskd.stateBytes ?? Data(), as: UTF8.self)
            #expect(saved.contains("\"passcodeHash\":\"$y$"), "\(saved)")
            #expect(!saved.contains("5678") && !kioskd.log.contains("5678"))
        }
    }

    @Test func watchdogPingsWhenWATCHDOG_USECIsSet() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let kioskd = try Kioskd(bus: bus)
        let notify = try NotifySocket(directory: bus.directory)
        try kioskd.start(notify: notify, watchdog: .milliseconds(200), waitForName: false)
        defer { kioskd.stop() }
        try notify.waitFor("READY=1")
        try notify.waitFor("WATCHDOG=1", timeout: .seconds(2))
        try notify.waitFor("WATCHDOG=1", timeout: .seconds(2))
    }

    @Test func timeLimitWarnsThenExpiresTheSessionWhichEndsOnlyWithThePasscode() throws {
        try withKioskd(
            profiles: [
                "short": """
                [session]
                time-limit = "3s"
                warnings = ["2s"]
                """
            ]
        ) { kioskd, bus in
            let client = try ManagerClient(address: bus.address)
            try client.call("SetPasscode", [.string(""), .string("1234")])
            let out = try Python.run(
                """
                got = []
                loop = GLib.MainLoop()
                def warning(left):
                    got.append(("warning", int(left)))
                def changed(iface, props, invalidated):
                    if "SessionState" in props:
                        got.append(("state", str(props["SessionState"])))
                        if props["SessionState"] == "expired":
                            loop.quit()
                bus.add_signal_receiver(warning, "TimeLimitWarning", "org.kioskd.GuidedAccess1.Manager")
                bus.add_signal_receiver(changed, "PropertiesChanged", "org.freedesktop.DBus.Properties", path="/org/kioskd/GuidedAccess1")
                m.StartSession("short")
                deadline = obj.Get("org.kioskd.GuidedAccess1.Manager", "SessionDeadline", dbus_interface="org.freedesktop.DBus.Properties")
                print(abs(int(deadline) - int((time.time() + 3) * 1e6)) < 1e6)
                GLib.timeout_add(8000, loop.quit)
                loop.run()
                print(got)
                """, bus: bus)
            #expect(
                out.stdout == """
                    True
                    [('state', 'active'), ('warning', 2), ('state', 'expired')]

                    """, "\(out)\n\(kioskd.log)")
            #expect(client.errorName("EndSession", [.string("0000")]) == KioskError.Code.wrongPasscode.dbusName)
            #expect(try client.property("SessionState") == .string("expired"))
            try client.call("EndSession", [.string("1234")])
            #expect(try client.property("SessionState") == .string("inactive"))
        }
    }

    /// `PasscodeSet` says whether a passcode set with SetPasscode is stored, and tells of the
    /// first one with `PropertiesChanged` (a fleet tool sets the first passcode only where there
    /// is none, without guessing).
    @Test func passcodeSetSaysWhetherOneIsStored() throws {
        try withKioskd { kioskd, bus in
            let client = try ManagerClient(address: bus.address)
            #expect(try client.property("PasscodeSet") == .bool(false))
            let out = try Python.run(
                """
                got = []
                loop = GLib.MainLoop()
                def changed(iface, props, invalidated):
                    if "PasscodeSet" in props:
                        got.append(bool(props["PasscodeSet"]))
                        loop.quit()
                bus.add_signal_receiver(changed, "PropertiesChanged", "org.freedesktop.DBus.Properties", path="/org/kioskd/GuidedAccess1")
                m.SetPasscode("", "1234")
                GLib.timeout_add(8000, loop.quit)
                loop.run()
                print(got)
                """, bus: bus)
            #expect(out.stdout == "[True]\n", "\(out)\n\(kioskd.log)")
            #expect(try client.property("PasscodeSet") == .bool(true))
        }
    }
}
