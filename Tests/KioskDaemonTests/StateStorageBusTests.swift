import BusTestSupport
import Foundation
import KioskCore
import KioskDaemon
import KioskDaemonTestSupport
import KioskStore
import KioskTestSupport
import SystemdKit
import Testing

/// A disk that refuses saves, in process (docs/state-store.md § When the disk fails): what a bus
/// caller sees in `StateStorage`, what the journal says and how often, the runtime copy of a
/// wrong passcode, and the retries that save it once the disk works.
@Suite(.serialized) struct StateStorageBusTests {
    /// No passcode anywhere: `EndSession` is wrong, and counted, whatever it is given.
    static let museum = """
        [session]
        time-limit = "1h"
        """

    /// `StateStorage`'s (since, problem).
    static func storage(_ client: ManagerClient) throws -> (since: UInt64, problem: String)? {
        guard let f = try client.property("StateStorage")?.fields, f.count == 2, let since = f[0].uint64,
            let problem = f[1].string
        else { return nil }
        return (since, problem)
    }

    @Test func aWrongPasscodeOnAFailingDiskIsKeptInTheRuntimeDirectoryAndSavedByTheRetries() async throws {
        let manager = try await InProcessManager(uid: 0, profiles: ["museum": Self.museum], logsToJournal: true)
        let runtime = manager.bus.directory.appendingPathComponent("run").path
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        let pending = StateStore(directory: runtime, name: StateStore.pendingFileName)
        try await manager.onLoop { $0.pendingStore = pending }
        manager.changedProperties.watch(["StateStorage"])
        do {
            let client = try ManagerClient(address: manager.bus.address)
            #expect(try Self.storage(client)! == (0, ""))
            try client.call("StartSession", [.string("museum")])
            // The wrong passcode's save fails, and so does the first retry's.
            manager.store.failNextSave(with: StoreTestError())
            manager.store.failNextSave(with: StoreTestError())
            manager.journal.removeAll()
            let wrong = client.error("EndSession", [.string("0000")])
            print("bus caller: EndSession(\"0000\") -> \(wrong?.name ?? "reply"): \(wrong?.message ?? "")")
            #expect(wrong?.name == KioskError.Code.wrongPasscode.dbusName)
            let failing = try #require(try Self.storage(client))
            print("bus caller: StateStorage = (\(failing.since), \"\(failing.problem)\")")
            #expect(failing.since > 0)
            #expect(failing.problem.contains("the disk said no"), "\(failing.problem)")
            #expect(failing.problem.contains("kept in the runtime directory"), "\(failing.problem)")
            // The count is in the runtime directory while the disk refuses it.
            let kept = try #require(try pending.loadIfPresent())
            #expect(kept.throttles[.uid(0)].failures == 1)
            // Saved by the retries (1 s, then 2 s): StateStorage is empty again, the copy gone.
            let recovered = try await eventually(timeout: .seconds(10)) {
                try Self.storage(client)
            } until: {
                $0?.since == 0
            }
            print("bus caller: StateStorage = (\(recovered?.since ?? 99), \"\(recovered?.problem ?? "?")\")")
            #expect(recovered?.problem == "")
            #expect(manager.store.saved.last?.throttles[.uid(0)].failures == 1)
            #expect(try pending.loadIfPresent() == nil)
            // The journal said it once each way, though two saves failed.
            let log = manager.journal.all
            #expect(
                log.count { $0 == "log Saving the state fails; changes are refused until it works again" } == 1,
                "\(log)")
            #expect(log.count { $0 == "log Saving the state works again" } == 1, "\(log)")
            let changes = manager.changedProperties.all
            #expect(changes.count >= 2, "PropertiesChanged told of the failure and of the recovery: \(changes)")
        } catch {
            await manager.stop()
            throw error
        }
        await manager.stop()
    }

    @Test func aChangeRefusedByTheDiskSaysWhyAndNothingIsKept() async throws {
        let manager = try await InProcessManager(uid: 0, profiles: ["museum": Self.museum], logsToJournal: true)
        do {
            let client = try ManagerClient(address: manager.bus.address)
            manager.store.failNextSave(with: StoreTestError())
            let refused = client.error("StartSession", [.string("museum")])
            print("bus caller: StartSession(\"museum\") -> \(refused?.name ?? "reply"): \(refused?.message ?? "")")
            #expect(refused?.name == "org.freedesktop.DBus.Error.Failed")
            #expect(try client.property("SessionState")?.string == "inactive")
            let failing = try #require(try Self.storage(client))
            #expect(failing.since > 0 && !failing.problem.contains("kept"), "\(failing.problem)")
            // The retry finds the disk working: StateStorage is empty again.
            let recovered = try await eventually(timeout: .seconds(10)) {
                try Self.storage(client)
            } until: {
                $0?.since == 0
            }
            #expect(recovered?.problem == "")
            #expect(try client.property("SessionState")?.string == "inactive")
        } catch {
            await manager.stop()
            throw error
        }
        await manager.stop()
    }

    @Test func aRuntimeDirectoryThatCannotKeepTheCopyIsSaidTooAndTheRetryStillSaves() async throws {
        let manager = try await InProcessManager(uid: 0, profiles: ["museum": Self.museum], logsToJournal: true)
        // A runtime directory that does not exist: the copy cannot be written there.
        let missing = manager.bus.directory.appendingPathComponent("no-such-run").path
        try await manager.onLoop { $0.pendingStore = StateStore(directory: missing, name: StateStore.pendingFileName) }
        do {
            let client = try ManagerClient(address: manager.bus.address)
            try client.call("StartSession", [.string("museum")])
            manager.store.failNextSave(with: StoreTestError())
            let wrong = client.error("EndSession", [.string("0000")])
            #expect(wrong?.name == KioskError.Code.wrongPasscode.dbusName)
            let failing = try #require(try Self.storage(client))
            print("bus caller: StateStorage = (\(failing.since), \"\(failing.problem)\")")
            #expect(failing.problem.contains("in memory only (Could not"), "\(failing.problem)")
            #expect(failing.problem.contains("no-such-run"), "\(failing.problem)")
            #expect(manager.journal.all.contains("log Could not keep the unsaved state in the runtime directory"))
            let recovered = try await eventually(timeout: .seconds(10)) {
                try Self.storage(client)
            } until: {
                $0?.since == 0
            }
            #expect(recovered?.problem == "")
            #expect(manager.store.saved.last?.throttles[.uid(0)].failures == 1)
        } catch {
            await manager.stop()
            throw error
        }
        await manager.stop()
    }
}
