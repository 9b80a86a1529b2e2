import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskdProcessTestSupport
import SystemdKit
import Testing

/// kioskd and a real polkitd on a private bus: a uid the rules allow may do the admin methods,
/// `nobody` gets AccessDenied and changes nothing, app ids stay bound to their owner.
@Suite(.serialized) struct PolkitBusTests {
    // Real accounts of Debian's base passwd: dbus-daemon drops a connection whose uid has no
    // passwd entry (it cannot look up its groups for the policy), so 4242 would never get to call.
    static let admin: UInt32 = 1  // daemon: allowed by the test rule
    static let adminName = "daemon"
    static let owner: UInt32 = 2  // bin: registers an app of its own
    static let stranger: UInt32 = 3  // sys: neither
    static let nobody: UInt32 = 65534
    static let owned = "org.example.Owned"

    /// The actions as shipped (`packaging/polkit/`): the defaults polkitd applies here are the
    /// ones a kiosk gets (auth_admin_keep: with no agent on a kiosk, a challenge, which kioskd denies).
    static func actions() throws -> String {
        let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../packaging/polkit/org.kioskd.GuidedAccess1.policy").standardized
        return try String(contentsOf: shipped, encoding: .utf8)
    }

    /// `daemon` may do all three actions.
    static let rules = """
        polkit.addRule(function(action, subject) {
            if (action.id.indexOf("org.kioskd.GuidedAccess1.") == 0 && subject.user == "\(adminName)") {
                return polkit.Result.YES;
            }
        });
        """

    /// Each call as `error_name` sees it, one per line.
    static let adminCalls = """
        print(error_name(m.SetRestrictionState, "org.example.MuseumMap", "org.example.MuseumMap.controls", "deny"))
        print(error_name(m.SetPasscode, "", "1234"))
        print(error_name(m.StartSession, "museum"))
        print(error_name(m.ForceEndSession))
        print(error_name(m.SetPasscode, "1234", "5678"))
        print(error_name(m.RegisterApplication, "\(owned)", [("\(owned).a", "A by an admin", "d")]))
        """

    func start(_ bus: PrivateBus, polkit: Bool) throws -> (Kioskd, PrivatePolkit?) {
        let agent =
            polkit
            ? try PrivatePolkit(
                bus: bus, actions: ["org.kioskd.GuidedAccess1.policy": Self.actions()],
                rules: ["49-kioskd-test.rules": Self.rules]) : nil
        let kioskd = try Kioskd(bus: bus)
        try kioskd.writeProfile(
            "museum",
            """
            [restrictions."org.example.MuseumMap"]
            "org.example.MuseumMap.share" = "deny"
            """)
        try kioskd.start()
        try KioskdBusTests.registerSample(ManagerClient(address: bus.address))
        return (kioskd, agent)
    }

    @Test(.enabled(if: Root.isRoot, Comment(rawValue: Root.needs("polkitd in a mount namespace, and setpriv"))))
    func aRuleAllowedUIDDoesEveryAdminMethodAndNobodyChangesNothing_needsRoot() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let (kioskd, polkit) = try start(bus, polkit: true)
        defer { kioskd.stop(); polkit?.stop() }
        let client = try ManagerClient(address: bus.address)
        let register = try Python.run(
            """
            print(error_name(m.RegisterApplication, "\(Self.owned)", [("\(Self.owned).a", "A", "d")]))
            """, bus: bus, as: Self.owner)
        #expect(register.stdout == "ok\n", "\(register)")

        let admin = try Python.run(Self.adminCalls, bus: bus, as: Self.admin)
        #expect(admin.stdout == String(repeating: "ok\n", count: 6), "\(admin)\n\(kioskd.log)")
        #expect(try client.state(KioskdBusTests.app, KioskdBusTests.controls) == "deny")
        #expect(try client.call("ListRestrictions", [.string(Self.owned)]).description.contains("A by an admin"))
        #expect(kioskd.log.contains("BUS_UID=\(Self.admin)"), "changes are journaled with the caller's uid")

        // nobody, with no session: every admin method is denied and the file does not change.
        let before = kioskd.stateBytes
        let denied = KioskError.Code.accessDenied.dbusName
        let nobody = try Python.run(
            """
            print(error_name(m.SetRestrictionState, "org.example.MuseumMap", "org.example.MuseumMap.controls", "allow"))
            print(error_name(m.SetPasscode, "5678", "0000"))
            print(error_name(m.StartSession, "museum"))
            print(error_name(m.RegisterApplication, "\(Self.owned)", [("\(Self.owned).b", "B", "d")]))
            """, bus: bus, as: Self.nobody)
        #expect(nobody.stdout == String(repeating: "\(denied)\n", count: 4), "\(nobody)")
        #expect(kioskd.stateBytes == before)

        // With a session: nobody cannot force it to end.
        try client.call("StartSession", [.string("museum")])
        let during = kioskd.stateBytes
        let force = try Python.run("print(error_name(m.ForceEndSession))", bus: bus, as: Self.nobody)
        #expect(force.stdout == "\(denied)\n", "\(force)")
        #expect(kioskd.stateBytes == during)
        #expect(try client.property("SessionState") == .string("active"))
        // Nor say the display is dark, nor wake it (display-power); the rule's admin may.
        let display = try Python.run("print(error_name(m.Blank))\nprint(error_name(m.Wake))", bus: bus, as: Self.nobody)
        #expect(display.stdout == "\(denied)\n\(denied)\n", "\(display)")
        #expect(try client.property("DisplayPower") == .string("on"))
        let blank = try Python.run("print(error_name(m.Blank))", bus: bus, as: Self.admin)
        #expect(blank.stdout == "ok\n", "\(blank)")
        #expect(try client.property("DisplayPower") == .string("off"))
    }

    @Test(.enabled(if: Root.isRoot, Comment(rawValue: Root.needs("polkitd in a mount namespace, and setpriv"))))
    func anAppIDStaysWithItsOwnerUnderPolkit_needsRoot() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let (kioskd, polkit) = try start(bus, polkit: true)
        defer { kioskd.stop(); polkit?.stop() }
        let client = try ManagerClient(address: bus.address)
        let declare = """
            print(error_name(m.RegisterApplication, "\(Self.owned)", [("\(Self.owned).a", sys.argv[2], "d")]))
            """
        #expect(try Python.run(declare, bus: bus, as: Self.owner, arguments: ["first"]).stdout == "ok\n")
        let before = kioskd.stateBytes
        let stranger = try Python.run(
            declare + "\n" + """
                try:
                    m.RegisterApplication("\(Self.owned)", [("\(Self.owned).a", "x", "d")])
                except dbus.DBusException as e:
                    print(e.get_dbus_message())
                """, bus: bus, as: Self.stranger, arguments: ["stolen"])
        #expect(stranger.stdout.hasPrefix("\(KioskError.Code.accessDenied.dbusName)\n"), "\(stranger)")
        #expect(
            stranger.stdout.contains("uid \(Self.stranger) may not register the application id \(Self.owned)"),
            "\(stranger)")
        #expect(kioskd.stateBytes == before)
        let again = try Python.run(declare, bus: bus, as: Self.owner, arguments: ["second"])
        #expect(again.stdout == "ok\n", "\(again)")
        let restrictions = try client.call("ListRestrictions", [.string(Self.owned)])
        #expect(
            restrictions == [
                .array(
                    elementSignature: "(ssss)",
                    [
                        .structure([.string("\(Self.owned).a"), .string("second"), .string("d"), .string("allow")])
                    ])
            ])
    }

    @Test(.enabled(if: Root.isRoot, Comment(rawValue: Root.needs("setpriv"))))
    func withoutPolkitOnlyRootIsAllowed_needsRoot() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let (kioskd, _) = try start(bus, polkit: false)
        defer { kioskd.stop() }
        let before = kioskd.stateBytes
        let denied = KioskError.Code.accessDenied.dbusName
        // The uid the rules would allow gets nothing without polkit; the message says why.
        // (ForceEndSession would be NoSession, and anyone may register an app id no one has.)
        let out = try Python.run(
            Self.adminCalls.split(separator: "\n")
                .filter { !$0.contains("ForceEndSession") && !$0.contains("RegisterApplication") }
                .joined(separator: "\n") + "\n" + """

                    try:
                        m.SetRestrictionState("org.example.MuseumMap", "org.example.MuseumMap.controls", "deny")
                    except dbus.DBusException as e:
                        print(e.get_dbus_message())
                    """, bus: bus, as: Self.admin)
        #expect(out.stdout.hasPrefix(String(repeating: "\(denied)\n", count: 4)), "\(out)")
        #expect(out.stdout.split(separator: "\n").count == 5, "\(out)")
        #expect(
            out.stdout.hasSuffix(
                "uid \(Self.admin) may not set restriction states: polkit is not running, so only root may.\n"),
            "\(out)")
        #expect(kioskd.stateBytes == before)
        // Root is.
        let root = try Python.run(Self.adminCalls, bus: bus)
        #expect(root.stdout == String(repeating: "ok\n", count: 6), "\(root)")
    }
}
