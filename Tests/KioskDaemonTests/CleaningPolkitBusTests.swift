import BusTestSupport
import Foundation
import KioskCore
import KioskdProcessTestSupport
import SystemdKit
import Testing

/// Cleaning the screen with kioskd as it ships, a real polkitd and the shipped polkit actions
/// (docs/dbus-api.md § Cleaning the screen): no caller polkit does not allow starts or stops it,
/// a uid a rule allows does, bounds hold for it too, and kioskd restarted during a cleaning comes
/// back with the session's locks and no cleaning.
@Suite(.serialized) struct CleaningPolkitBusTests {
    typealias P = PolkitBusTests

    @Test(.enabled(if: Root.isRoot, Comment(rawValue: Root.needs("polkitd in a mount namespace, and setpriv"))))
    func onlyAUIDPolkitAllowsCleansAndARestartForgetsIt_needsRoot() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let (kioskd, polkit) = try PolkitBusTests().start(bus, polkit: true)
        defer { kioskd.stop(); polkit?.stop() }
        let client = try ManagerClient(address: bus.address)
        let denied = KioskError.Code.accessDenied.dbusName

        // The shipped defaults (auth_admin_keep, no agent): nobody and a plain uid are refused.
        for uid in [P.nobody, P.stranger] {
            let refused = try Python.run(
                """
                print(error_name(m.StartCleaning, dbus.UInt64(30)))
                print(error_name(m.StopCleaning))
                """, bus: bus, as: uid)
            #expect(refused.stdout == "\(denied)\n\(denied)\n", "uid \(uid): \(refused)")
        }
        #expect(try client.property("CleaningUntil")?.uint64 == 0)
        #expect(kioskd.log.contains("POLKIT_ACTION=org.kioskd.GuidedAccess1.clean"), "the refusal is journaled")

        // The uid the rule allows: bounds first, then a cleaning it starts and stops.
        let admin = try Python.run(
            """
            print(error_name(m.StartCleaning, dbus.UInt64(301)))
            print(error_name(m.StartCleaning, dbus.UInt64(30)))
            """, bus: bus, as: P.admin)
        #expect(admin.stdout == "\(KioskError.Code.invalidArgument.dbusName)\nok\n", "\(admin)\n\(kioskd.log)")
        let until = try #require(try client.property("CleaningUntil")?.uint64)
        let now = UInt64(Date().timeIntervalSince1970 * 1_000_000)
        #expect(until > now && until <= now + 30_000_000, "CleaningUntil \(until), now \(now)")
        #expect(try Python.run("print(error_name(m.StopCleaning))", bus: bus, as: P.admin).stdout == "ok\n")
        #expect(try client.property("CleaningUntil")?.uint64 == 0)

        // A session, cleaning, and kioskd restarted: the session's locks, no cleaning.
        try client.call("StartSession", [.string("museum")])
        try client.call("StartCleaning", [.uint64(120)])
        #expect(try client.property("CleaningUntil")?.uint64 != 0)
        kioskd.stop()
        try kioskd.start()
        let again = try ManagerClient(address: bus.address)
        #expect(try again.property("SessionState") == .string("active"))
        #expect(try again.property("CleaningUntil")?.uint64 == 0)
    }
}
