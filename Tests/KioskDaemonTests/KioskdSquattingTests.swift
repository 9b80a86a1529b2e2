import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskdProcessTestSupport
import SystemdKit
import Testing

/// Squatting and exhaustion of the registry, over the bus: `nobody` registered
/// 1,024 empty apps and every other uid, root included, was refused; squatted ids could only be
/// recovered by hand-editing state.json.
@Suite(.serialized) struct KioskdSquattingTests {
    @Test(.enabled(if: Root.isRoot, Comment(rawValue: Root.needs("to call as nobody through setpriv"))))
    func nobodyCannotFillTheRegistryAndAnAdminTakesASquattedIDBack_needsRoot() throws {
        try withKioskd { kioskd, bus in
            let squat = try Python.run(
                """
                names = []
                for n in range(40):
                    names.append(error_name(m.RegisterApplication, "org.example.Squat%d" % n, []))
                print(names.count("ok"), sorted(set(names) - {"ok"}))
                print(error_name(m.UnregisterApplication, "org.example.Squat0"))
                """, bus: bus, as: 65534)
            #expect(
                squat.stdout
                    == "32 ['org.freedesktop.DBus.Error.InvalidArgs']\norg.freedesktop.DBus.Error.AccessDenied\n",
                "\(squat)")
            // Other uids, and root, are not held back by nobody's apps.
            let other = try Python.run(
                "print(error_name(m.RegisterApplication, 'org.example.Mine', []))", bus: bus, as: 1000)
            #expect(other.stdout == "ok\n", "\(other)")
            let client = try ManagerClient(address: bus.address)
            try client.register("org.example.Root", [])

            // An admin forgets a squatted id; the next uid to register it owns it.
            try client.call("UnregisterApplication", [.string("org.example.Squat7")])
            #expect(
                client.errorName(
                    "GetRestrictionState", [.string("org.example.Squat7"), .string("org.example.Squat7.x")])
                    == KioskError.Code.unknownApplication.dbusName)
            let taken = try Python.run(
                "print(error_name(m.RegisterApplication, 'org.example.Squat7', [('org.example.Squat7.x', 't', 'd')]))",
                bus: bus, as: 1000)
            #expect(taken.stdout == "ok\n", "\(taken)")
            let back = try Python.run(
                "print(error_name(m.RegisterApplication, 'org.example.Squat7', []))", bus: bus, as: 65534)
            #expect(back.stdout == "org.freedesktop.DBus.Error.AccessDenied\n", "\(back)")
            #expect(
                client.errorName("UnregisterApplication", [.string("org.example.Nope")])
                    == KioskError.Code.unknownApplication.dbusName)
            #expect(kioskd.log.contains("Application forgotten"))
        }
    }

    @Test func anAppTheActiveSessionPresetsIsNotForgottenUntilTheSessionEnds() throws {
        try withKioskd(profiles: ["museum": KioskdSessionTests.museum]) { _, bus in
            let client = try ManagerClient(address: bus.address)
            try KioskdBusTests.registerSample(client)
            try client.register("org.example.Other", [])
            try client.call("SetPasscode", [.string(""), .string("1234")])
            try client.call("StartSession", [.string("museum")])
            let refused = client.error("UnregisterApplication", [.string(KioskdSessionTests.app)])
            #expect(refused?.name == KioskError.Code.sessionActive.dbusName)
            #expect(
                refused?.message.contains("presets restrictions of org.example.MuseumMap") == true,
                "\(String(describing: refused))")
            #expect(try client.state(KioskdSessionTests.app, KioskdSessionTests.share) == "deny")
            try client.call("UnregisterApplication", [.string("org.example.Other")])
            try client.call("EndSession", [.string("1234")])
            try client.call("UnregisterApplication", [.string(KioskdSessionTests.app)])
            #expect(try client.call("ListApplications") == [.strings(KioskdBusTests.builtIn)])
        }
    }
}
