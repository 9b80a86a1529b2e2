import BusTestSupport
import Foundation
import KioskCore
import KioskDaemonTestSupport
import KioskInput
import KioskTestSupport
import SystemdKit
import Testing

@testable import KioskDaemon

/// A reload that fails keeps the locks the session had (docs/dbus-api.md, `ReloadProfiles`): the
/// input policy the manager hands its enforcer after the failed `ReloadProfiles` equals the one
/// before, and the session, its deadline and its pending time-limit warnings are as they were —
/// also after a restart with the file still bad. Each way a file can fail is tried: broken TOML,
/// unreadable (a directory where the file was), a FIFO where the file was (refused at once, not
/// waited on), vanished.
@Suite(.serialized) struct FailedReloadTests {
    /// Volume and power locked, ten minutes with a warning at five.
    static let good = """
        description = "Volume and power locked"
        [buttons]
        volume = "locked"
        power = "locked"
        [session]
        time-limit = "10m"
        warnings = ["5m"]
        """
    /// The edit an admin meant (volume allowed, twenty minutes), with a typo that breaks it.
    static let broken = """
        [buttons]
        volume = "allowed"
        powr = "locked"
        [session]
        time-limit = "20m"
        """

    enum Failure: String, CaseIterable, Sendable {
        case broken, unreadable, fifo, vanished
    }

    /// Makes `kiosk.toml` fail to load the way `failure` says.
    func spoil(_ directory: URL, _ failure: Failure) throws {
        let file = directory.appendingPathComponent("kiosk.toml")
        switch failure {
        case .broken:
            try Data(Self.broken.utf8).write(to: file)
        case .unreadable:
            try FileManager.default.removeItem(at: file)
            try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
        case .fifo:
            try FileManager.default.removeItem(at: file)
            #expect(mkfifo(file.path, 0o600) == 0)
        case .vanished:
            try FileManager.default.removeItem(at: file)
        }
    }

    @Test(arguments: Failure.allCases)
    func aFailedReloadKeepsTheLocksTheSessionAndItsTimes(_ failure: Failure) async throws {
        let enforcer = RecordingEnforcer()
        let manager = try await InProcessManager(profiles: ["kiosk": Self.good], enforcer: enforcer)
        let client = try ManagerClient(address: manager.bus.address)
        try client.call("StartSession", [.string("kiosk")])
        manager.clock.advance(by: .seconds(60))
        let locked = enforcer.policy
        #expect(locked.lockedKeys.contains(115) && locked.locksPowerKeys, "the profile's locks are on (KEY_VOLUMEUP is 115)")
        let before = try #require(enforcer.state?.session)
        let deadline = try client.property("SessionDeadline")?.uint64
        let handedBefore = enforcer.count

        try spoil(manager.profileDirectory, failure)
        let error = client.errorName("ReloadProfiles")
        #expect(error == KioskError.Code.invalidArgument.dbusName, "\(failure): \(error ?? "succeeded")")

        // The failed reload did go through the enforcer (the state now keeps the last good
        // profile's text), and handed it the very same policy.
        #expect(enforcer.count > handedBefore)
        #expect(enforcer.policy == locked)
        let after = try #require(enforcer.state?.session)
        #expect(after.identity == before.identity)
        #expect(after.state == .active)
        #expect(after.deadline == before.deadline && after.pendingWarnings == before.pendingWarnings)
        #expect(after.retainedProfileSource == Self.good)
        #expect(try client.property("SessionDeadline")?.uint64 == deadline)
        #expect(try client.property("SessionWarnings")?.strings?.count == 1)

        // The five-minute warning still comes on time, from the old profile's schedule.
        manager.clock.advance(by: .seconds(4 * 60 + 1))
        try await manager.onLoop { $0.sessionTick() }
        // 301 s into the ten minutes: 299 s left.
        #expect(manager.journal.waitFor("signal TimeLimitWarning 299", timeout: .seconds(10)), "\(manager.journal.all)")
        #expect(enforcer.policy == locked)

        let saved = try #require(manager.store.saved.last)
        await manager.stop()

        // A restart with the file still bad comes back with the same locks, not the strictest.
        let restartedEnforcer = RecordingEnforcer()
        let restarted = try await InProcessManager(
            state: saved, profiles: failure == .broken ? ["kiosk": Self.broken] : [:], enforcer: restartedEnforcer)
        let restartedClient = try ManagerClient(address: restarted.bus.address)
        #expect(restartedEnforcer.policy == locked)
        #expect(restartedEnforcer.policy != .strictest(exitGesture: Profile.ExitGesture.fallback.filterGesture))
        #expect(restartedEnforcer.state?.session.identity == before.identity)
        #expect(restartedEnforcer.state?.session.deadline == before.deadline)
        #expect(try restartedClient.property("SessionProblem")?.string == "")
        #expect(try restartedClient.property("SessionWarnings")?.strings?.first?.contains("could not be reloaded") == true)
        await restarted.stop()
    }

    /// Without a last good copy (a state file from before a reload ever failed), a restart whose
    /// profile cannot be loaded fails closed: the strictest locks, and SessionProblem says why.
    @Test func aRestartWithoutALastGoodCopyGetsTheStrictestLocks() async throws {
        let enforcer = RecordingEnforcer()
        let manager = try await InProcessManager(profiles: ["kiosk": Self.good], enforcer: enforcer)
        let client = try ManagerClient(address: manager.bus.address)
        try client.call("StartSession", [.string("kiosk")])
        let saved = try #require(manager.store.saved.last)
        #expect(saved.session.retainedProfileSource == nil)
        await manager.stop()

        let restartedEnforcer = RecordingEnforcer()
        let restarted = try await InProcessManager(
            state: saved, profiles: ["kiosk": Self.broken], enforcer: restartedEnforcer)
        let restartedClient = try ManagerClient(address: restarted.bus.address)
        #expect(restartedEnforcer.policy == .strictest(exitGesture: Profile.ExitGesture.fallback.filterGesture))
        #expect(try restartedClient.property("SessionProblem")?.string?.isEmpty == false)
        await restarted.stop()
    }
}
