import BusTestSupport
import Foundation
import KioskAPI
import KioskCore
import KioskDaemonTestSupport
import KioskTestSupport
import SystemdKit
import Testing

@testable import KioskDaemon

/// Idle time through kioskd's manager in process, on its manual clock (docs/dbus-api.md § Idle
/// time and the dark display): "Still there?" (`IdleWarning`) answered and not, `IdleReset`
/// once, `DisplayPower` off and woken by a press (what the filter reports) and by `Wake`, `Blank`,
/// who may call them, and a restart while the display is dark.
@Suite(.serialized) struct IdleBusTests {
    static let profile = """
        [idle]
        reset-after = "1m"
        reset-warning = "20s"
        blank-after = "2m"
        """

    /// Moves the manager's clock by `seconds` and has idle time look.
    func look(_ manager: InProcessManager, after seconds: Int64) async throws {
        manager.clock.advance(by: .seconds(seconds))
        try await manager.onLoop { $0.idleLook() }
        try await manager.signalsSent()
    }

    @Test func stillThereThenTheResetThenTheDarkDisplayWokenByAPress() async throws {
        let enforcer = RecordingEnforcer()
        let manager = try await InProcessManager(
            uid: 0, profiles: ["idle": Self.profile], enforcer: enforcer, logsToJournal: true)
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        try client.call("StartSession", [.string("idle")])
        #expect(try client.property("IdleWarning")?.uint64 == 0)
        #expect(try client.property("DisplayPower")?.string == "on")

        try await look(manager, after: 39)
        #expect(try client.property("IdleWarning")?.uint64 == 0, "20 s before the reset, not earlier")
        try await look(manager, after: 1)
        let until = try #require(try client.property("IdleWarning")?.uint64)
        #expect(until == UInt64(manager.clock.now().microseconds) + 20_000_000)
        #expect(enforcer.idle.warning, "the filter holds input and reads the answer")

        // Answered (a key let go): the visitor's work stays, a new idle period.
        try await manager.onLoop { $0.visitorAnswered() }
        try await manager.signalsSent()
        #expect(try client.property("IdleWarning")?.uint64 == 0)
        #expect(!enforcer.idle.warning)
        #expect(!manager.journal.all.contains("signal IdleReset"))

        // Unanswered: the reset at 1 minute, once.
        try await look(manager, after: 40)
        #expect(try client.property("IdleWarning")?.uint64 != 0)
        try await look(manager, after: 20)
        #expect(manager.journal.waitFor("signal IdleReset"), "\(manager.journal.all)")
        #expect(try client.property("IdleWarning")?.uint64 == 0)
        #expect(manager.journal.all.contains("log Nobody used the kiosk for a while: idle reset"))
        try await look(manager, after: 30)
        #expect(manager.journal.all.filter { $0 == "signal IdleReset" }.count == 1, "once per idle period")

        // Dark at 2 minutes after the answer; a press wakes it.
        try await look(manager, after: 30)
        #expect(eventually { (try? client.property("DisplayPower")?.string) == "off" })
        #expect(enforcer.idle.displayOff)
        try await manager.onLoop { $0.displayWoken() }
        try await manager.signalsSent()
        #expect(try client.property("DisplayPower")?.string == "on")
        #expect(!enforcer.idle.displayOff)
        #expect(manager.journal.all.contains("log Display wanted off"), "\(manager.journal.all)")
        #expect(manager.journal.all.contains("log Display wanted on"), "\(manager.journal.all)")
    }

    @Test func wakeAndBlankAreAnAdminsAndNeedASession() async throws {
        let manager = try await InProcessManager(uid: 0, profiles: ["idle": Self.profile])
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        #expect(client.errorName("Blank") == KioskError.Code.noSession.dbusName)
        try client.call("StartSession", [.string("idle")])
        try client.call("Blank", [])
        #expect(try client.property("DisplayPower")?.string == "off")
        try client.call("Wake", [])
        #expect(try client.property("DisplayPower")?.string == "on")

        let denied = try await InProcessManager(
            uid: 1000, authorize: .result(.denied), state: manager.store.saved.last ?? KioskState(),
            profiles: ["idle": Self.profile])
        defer { Task { await denied.stop() } }
        let other = try ManagerClient(address: denied.bus.address)
        #expect(other.errorName("Blank") == KioskError.Code.accessDenied.dbusName)
        #expect(other.errorName("Wake") == KioskError.Code.accessDenied.dbusName)
        #expect(try other.property("DisplayPower")?.string == "on", "a refused caller changes nothing")
    }

    @Test func aRestartWhileDarkComesBackWithTheDisplayOnAndTheLocks() async throws {
        let first = try await InProcessManager(uid: 0, profiles: ["idle": Self.profile])
        let client = try ManagerClient(address: first.bus.address)
        try client.call("StartSession", [.string("idle")])
        try client.call("Blank", [])
        #expect(try client.property("DisplayPower")?.string == "off")
        let saved = try #require(first.store.saved.last)
        await first.stop()

        let second = try await InProcessManager(uid: 0, state: saved, profiles: ["idle": Self.profile])
        defer { Task { await second.stop() } }
        let again = try ManagerClient(address: second.bus.address)
        #expect(try again.property("SessionState")?.string == "active")
        #expect(try again.property("DisplayPower")?.string == "on", "never dark and deaf after a restart")
    }
}
