import BusTestSupport
import Foundation
import KioskCore
import KioskDaemonTestSupport
import KioskTestSupport
import Synchronization
import SystemdKit
import Testing

@testable import KioskDaemon

/// A live session's time limit changed without ending it (`ExtendSession`,
/// `SetSessionDeadline`), and `ListProfiles`; in process, on the manager's manual clock.
@Suite(.serialized) struct LiveSessionTests {
    static let timed = """
        description = "Ten minutes a turn"
        [session]
        time-limit = "10m"
        warnings = ["5m"]
        """
    static let untimed = "description = \"No limit\"\n"
    static let broken = "[buttons]\npowr = \"locked\"\n"

    func withManager(
        authorize: ScriptedAuthorizer.Answer = .result(.allowed),
        _ body: (InProcessManager, ManagerClient) async throws -> Void
    ) async throws {
        let manager = try await InProcessManager(
            authorize: authorize, profiles: ["timed": Self.timed, "untimed": Self.untimed, "broken": Self.broken])
        do {
            try await body(manager, try ManagerClient(address: manager.bus.address))
        } catch {
            await manager.stop()
            throw error
        }
        await manager.stop()
    }

    /// Waits until every change the manager queued is saved and committed (its writer idle, no
    /// change underway); returns whether that happened in time.
    func committed(_ manager: InProcessManager) async throws -> Bool {
        try await eventually {
            let idle = Mutex(false)
            try await manager.onLoop { object in idle.withLock { $0 = object.changesUnderway == 0 && object.writer.isIdle } }
            return idle.withLock { $0 }
        }
    }

    func deadline(_ client: ManagerClient) throws -> Int64 {
        Int64(try client.property("SessionDeadline")?.uint64 ?? 0)
    }

    @Test("ExtendSession moves the end both ways; an end in the past expires; extending an expired session revives it")
    func extend() async throws {
        try await withManager { manager, client in
            #expect(client.errorName("ExtendSession", [.int64(60)]) == KioskError.Code.noSession.dbusName)
            try client.call("StartSession", [.string("timed")])
            let start = try deadline(client)
            #expect(start == manager.clock.now().microseconds + 600_000_000)
            try client.call("ExtendSession", [.int64(900)])
            #expect(try deadline(client) == start + 900_000_000)
            try client.call("ExtendSession", [.int64(-300)])
            #expect(try deadline(client) == start + 600_000_000)
            // Bad input changes nothing.
            for bad: Int64 in [0, 7 * 86400 + 1, -7 * 86400 - 1, .max, .min] {
                #expect(client.errorName("ExtendSession", [.int64(bad)]) == KioskError.Code.invalidArgument.dbusName)
            }
            #expect(try deadline(client) == start + 600_000_000)
            // Shortened into the past: expired now.
            try client.call("ExtendSession", [.int64(-3600)])
            #expect(try client.property("SessionState")?.string == "expired")
            // More time for an expired session counts from now.
            manager.clock.advance(by: .seconds(100))
            try client.call("ExtendSession", [.int64(300)])
            #expect(try client.property("SessionState")?.string == "active")
            #expect(try deadline(client) == manager.clock.now().microseconds + 300_000_000)
        }
    }

    @Test("SetSessionDeadline sets, removes and expires; a session without a limit cannot be extended")
    func setDeadline() async throws {
        try await withManager { manager, client in
            try client.call("StartSession", [.string("untimed")])
            #expect(client.errorName("ExtendSession", [.int64(60)]) == KioskError.Code.invalidArgument.dbusName)
            let inAnHour = UInt64(manager.clock.now().microseconds + 3_600_000_000)
            try client.call("SetSessionDeadline", [.uint64(inAnHour)])
            #expect(try client.property("SessionDeadline")?.uint64 == inAnHour)
            let tooFar = UInt64(manager.clock.now().microseconds + 8 * 86_400_000_000)
            #expect(client.errorName("SetSessionDeadline", [.uint64(tooFar)]) == KioskError.Code.invalidArgument.dbusName)
            #expect(try client.property("SessionDeadline")?.uint64 == inAnHour)
            try client.call("SetSessionDeadline", [.uint64(0)])
            #expect(try client.property("SessionDeadline")?.uint64 == 0)
            try client.call("SetSessionDeadline", [.uint64(1)])
            #expect(try client.property("SessionState")?.string == "expired")
        }
    }

    @Test("listing profiles needs manage-session, as starting a session does")
    func needsTheAdmin() async throws {
        try await withManager(authorize: .result(.denied)) { _, client in
            #expect(client.errorName("ListProfiles") == KioskError.Code.accessDenied.dbusName)
        }
    }

    @Test("ListProfiles names every profile, says which can start a session and which hold a hash")
    func list() async throws {
        try await withManager { manager, client in
            // A hash in a file others can read: listed, but it cannot start a session.
            let shared = manager.profileDirectory.appendingPathComponent("shared.toml")
            try Data("[passcode]\nhash = \"\(PromptTests.hash)\"\n".utf8).write(to: shared)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: shared.path)
            let entries = try #require(try client.call("ListProfiles").first?.array)
            let rows = entries.compactMap { $0.fields }.map { fields in
                "\(fields[0].string ?? "") | \(fields[1].string ?? "") | \(fields[2].bool ?? false) | \(fields[3].bool ?? true)"
            }
            #expect(
                rows == [
                    "broken |  | false | false", "shared |  | false | true", "timed | Ten minutes a turn | true | false",
                    "untimed | No limit | true | false",
                ])
        }
    }

    /// Writes a profile file into the manager's profile directory (private, as installed).
    func write(_ manager: InProcessManager, _ name: String, _ text: String) throws {
        let url = manager.profileDirectory.appendingPathComponent(name + ".toml")
        try Data(text.utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
    }

    @Test("ReloadProfiles: an edited time limit counts from the start; a broken file keeps the last good profile, also across a restart")
    func reload() async throws {
        let saved: KioskState
        do {
            let manager = try await InProcessManager(profiles: ["timed": Self.timed])
            let client = try ManagerClient(address: manager.bus.address)
            try client.call("ReloadProfiles")  // no session: nothing to do
            try client.call("StartSession", [.string("timed")])
            let start = try deadline(client) - 600_000_000
            manager.clock.advance(by: .seconds(120))
            // Edited: 20 minutes, counted from the session's start.
            try write(manager, "timed", "[session]\ntime-limit = \"20m\"\n")
            try client.call("ReloadProfiles")
            #expect(try deadline(client) == start + 1_200_000_000)
            // Broken: the reload fails with the reason, nothing changes, SessionWarnings says so.
            try write(manager, "timed", "[session]\ntime-limit = \"soon\"\n")
            #expect(client.errorName("ReloadProfiles") == KioskError.Code.invalidArgument.dbusName)
            #expect(try deadline(client) == start + 1_200_000_000)
            let warnings = try #require(try client.property("SessionWarnings")?.strings)
            #expect(warnings.count == 1 && warnings[0].contains("could not be reloaded"), "\(warnings)")
            #expect(try client.property("SessionProblem")?.string == "")
            saved = try #require(manager.store.saved.last)
            #expect(saved.session.retainedProfileSource?.contains("20m") == true)
            await manager.stop()
        }
        // A restart with the file still broken: the last good profile, not the strictest locks.
        let restarted = try await InProcessManager(state: saved, profiles: ["timed": "[session]\ntime-limit = \"soon\"\n"])
        let client = try ManagerClient(address: restarted.bus.address)
        #expect(try client.property("SessionProblem")?.string == "")
        #expect(try client.property("SessionWarnings")?.strings?.first?.contains("could not be reloaded") == true)
        // Fixed and reloaded: the warning goes, and the state no longer keeps a copy.
        try write(restarted, "timed", Self.timed)
        try client.call("ReloadProfiles")
        #expect(try client.property("SessionWarnings")?.strings == [])
        #expect(restarted.store.saved.last?.session.retainedProfileSource == nil)
        await restarted.stop()
    }

    @Test("a trial session ends by itself unless confirmed; confirmed, it stays")
    func trial() async throws {
        try await withManager { manager, client in
            for bad: UInt64 in [0, 9, 86_401] {
                #expect(
                    client.errorName("StartTrialSession", [.string("timed"), .uint64(bad)])
                        == KioskError.Code.invalidArgument.dbusName)
            }
            try client.call("StartTrialSession", [.string("untimed"), .uint64(60)])
            #expect(try client.property("TrialDeadline")?.uint64 == UInt64(manager.clock.now().microseconds + 60_000_000))
            // Not confirmed in time: its tick ends it.
            manager.clock.advance(by: .seconds(61))
            try await manager.onLoop { $0.sessionTick() }
            #expect(try eventually { try client.property("SessionState")?.string == "inactive" })
            #expect(try client.property("TrialDeadline")?.uint64 == 0)
            // Confirmed: it stays past its trial time; a second confirm is refused.
            try client.call("StartTrialSession", [.string("untimed"), .uint64(60)])
            try client.call("ConfirmSession")
            #expect(try client.property("TrialDeadline")?.uint64 == 0)
            #expect(client.errorName("ConfirmSession") == KioskError.Code.invalidArgument.dbusName)
            manager.clock.advance(by: .seconds(61))
            try await manager.onLoop { $0.sessionTick() }
            // Whatever the tick changed is saved and committed before the state is read: a read
            // that beat an ending's save would see "active" too.
            #expect(try await committed(manager))
            #expect(try client.property("SessionState")?.string == "active")
        }
    }
}
