import BusTestSupport
import Foundation
import KioskCore
import KioskDaemonTestSupport
import KioskInput
import KioskTestSupport
import SystemdKit
import Testing

@testable import KioskDaemon

/// Cleaning the screen through kioskd's manager in process, on its manual clock
/// (docs/dbus-api.md § Cleaning the screen): `StartCleaning`/`StopCleaning` under their own
/// polkit action, their bounds, `CleaningStarted`/`CleaningEnded` once each, `CleaningUntil`, the
/// enforcer told, the end by the kiosk clock, and a restart during it.
@Suite(.serialized) struct CleaningBusTests {
    static let profile = """
        [session]
        exit-gesture = { key = "KEY_POWER", presses = 3, within = "1.5s" }
        cleaning-gesture = { key = "KEY_POWER", presses = 5, within = "3s" }
        cleaning-time = "20s"
        """

    func count(_ manager: InProcessManager, _ entry: String) -> Int {
        manager.journal.all.filter { $0 == entry }.count
    }

    @Test func startAndStopSignalOnceEachAndTellTheEnforcer() async throws {
        let enforcer = RecordingEnforcer()
        let manager = try await InProcessManager(uid: 0, enforcer: enforcer, logsToJournal: true)
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        #expect(try client.property("CleaningUntil")?.uint64 == 0)

        try client.call("StartCleaning", [.uint64(30)])
        #expect(manager.journal.waitFor("signal CleaningStarted 30"), "\(manager.journal.all)")
        let now = UInt64(manager.clock.now().microseconds)
        #expect(try client.property("CleaningUntil")?.uint64 == now + 30_000_000)
        #expect(enforcer.cleaningChanges == [true])
        #expect(manager.journal.all.contains("log Cleaning the screen: input is held"), "\(manager.journal.all)")

        try client.call("StopCleaning")
        #expect(manager.journal.waitFor("signal CleaningEnded"), "\(manager.journal.all)")
        try client.call("StopCleaning")  // none runs: nothing to end
        try await manager.signalsSent()
        #expect(count(manager, "signal CleaningStarted 30") == 1)
        #expect(count(manager, "signal CleaningEnded") == 1)
        #expect(try client.property("CleaningUntil")?.uint64 == 0)
        #expect(enforcer.cleaningChanges == [true, false])
        #expect(manager.store.saved.isEmpty, "cleaning writes nothing")
    }

    @Test(arguments: [UInt64(0), 4, 301, 86_400])
    func aLengthOutOfBoundsIsInvalidArgsAndChangesNothing(seconds: UInt64) async throws {
        let enforcer = RecordingEnforcer()
        let manager = try await InProcessManager(uid: 0, enforcer: enforcer)
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        let error = try #require(client.error("StartCleaning", [.uint64(seconds)]))
        #expect(error.name == KioskError.Code.invalidArgument.dbusName)
        #expect(
            error.message
                == "StartCleaning's seconds is \(seconds); cleaning takes 5 to 300 seconds (5s to 5m), and nothing changed."
        )
        try await manager.signalsSent()
        #expect(!manager.journal.all.contains { $0.hasPrefix("signal Cleaning") })
        #expect(try client.property("CleaningUntil")?.uint64 == 0)
        #expect(enforcer.cleaningChanges.isEmpty)
    }

    @Test func aCallerPolkitDeniesIsRefusedUnderItsOwnAction() async throws {
        let manager = try await InProcessManager(uid: 1000, authorize: .result(.denied))
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        #expect(client.errorName("StartCleaning", [.uint64(30)]) == KioskError.Code.accessDenied.dbusName)
        #expect(client.errorName("StopCleaning") == KioskError.Code.accessDenied.dbusName)
        #expect(manager.authorizer.askedActions == [KioskWire.Action.clean, KioskWire.Action.clean])
        try await manager.signalsSent()
        #expect(!manager.journal.all.contains { $0.hasPrefix("signal Cleaning") })
        #expect(try client.property("CleaningUntil")?.uint64 == 0)
    }

    @Test func itEndsByTheKioskClockAndNotBefore() async throws {
        let manager = try await InProcessManager(uid: 0)
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        try client.call("StartCleaning", [.uint64(10)])
        #expect(manager.journal.waitFor("signal CleaningStarted 10"))
        manager.clock.advance(by: .milliseconds(9_999))
        try await manager.onLoop { $0.cleaningTick() }
        try await manager.signalsSent()
        #expect(!manager.journal.all.contains("signal CleaningEnded"))
        manager.clock.advance(by: .milliseconds(1))
        try await manager.onLoop { $0.cleaningTick() }
        #expect(manager.journal.waitFor("signal CleaningEnded"), "\(manager.journal.all)")
        #expect(try client.property("CleaningUntil")?.uint64 == 0)
    }

    @Test func theGestureStartsItForTheProfilesTimeAndTheExitGestureEndsIt() async throws {
        let manager = try await InProcessManager(uid: 0, profiles: ["clean": Self.profile])
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        try client.call("StartSession", [.string("clean")])
        try await manager.onLoop { $0.requestCleaning() }
        #expect(manager.journal.waitFor("signal CleaningStarted 20"), "\(manager.journal.all)")
        // While it runs, the prompt is what staff open: it ends the cleaning first.
        try await manager.onLoop { $0.requestExit() }
        #expect(manager.journal.waitFor("signal CleaningEnded"), "\(manager.journal.all)")
        #expect(try client.property("PromptState")?.string == "open")
        // While the prompt is open, nobody starts it.
        let error = try #require(client.error("StartCleaning", [.uint64(30)]))
        #expect(error.name == KioskError.Code.failed.dbusName, "\(error)")
        #expect(try client.property("CleaningUntil")?.uint64 == 0)
    }

    @Test func aRestartDuringCleaningComesBackLockedWithoutIt() async throws {
        let first = try await InProcessManager(uid: 0, profiles: ["clean": Self.profile])
        let client = try ManagerClient(address: first.bus.address)
        try client.call("StartSession", [.string("clean")])
        try client.call("StartCleaning", [.uint64(60)])
        #expect(first.journal.waitFor("signal CleaningStarted 60"))
        let saved = try #require(first.store.saved.last)
        await first.stop()

        let enforcer = RecordingEnforcer()
        let second = try await InProcessManager(
            uid: 0, state: saved, profiles: ["clean": Self.profile], enforcer: enforcer)
        defer { Task { await second.stop() } }
        let again = try ManagerClient(address: second.bus.address)
        #expect(try again.property("SessionState")?.string == "active")
        #expect(try again.property("CleaningUntil")?.uint64 == 0)
        #expect(enforcer.cleaningChanges.isEmpty)
        #expect(enforcer.policy.cleaningGesture != nil && !enforcer.policy.cleaning)
    }
}
