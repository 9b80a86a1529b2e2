import BusTestSupport
import KioskCore
import KioskDaemonTestSupport
import KioskTestSupport
import SystemdKit
import Testing

/// The audit's per-uid limit (docs/audit.md) counts its minute on the manager's clock, the one
/// time source the manager reads: on the manual clock here, a new minute begins when the clock
/// is moved on, not when real time passes.
@Suite(.serialized) struct AuditClockTests {
    static let app = "org.example.Flood"

    func registration(_ n: Int) -> [DBusValue] {
        [
            .string(Self.app),
            .array(elementSignature: "(sss)", [.structure([.string(Self.app + ".controls"), .string("Title \(n)"), .string("d")])]),
        ]
    }

    @Test func theAuditMinuteIsTheManagersClock() async throws {
        let manager = try await InProcessManager(uid: 1000, logsToJournal: true)
        let client = try ManagerClient(address: manager.bus.address)
        let burst = RepeatLimiter().burst
        // Each registration changes the list, so each is written and audited.
        for n in 0..<(burst + 5) { try client.call("RegisterApplication", registration(n)) }
        #expect(manager.journal.count(of: "log Application registered") == burst)
        // The same kiosk minute: still suppressed.
        try client.call("RegisterApplication", registration(1000))
        #expect(manager.journal.count(of: "log Application registered") == burst)
        // A minute later on the manager's clock (no real time passes): logged again.
        manager.clock.advance(by: .seconds(61))
        try client.call("RegisterApplication", registration(1001))
        #expect(manager.journal.count(of: "log Application registered") == burst + 1)
        await manager.stop()
    }
}
