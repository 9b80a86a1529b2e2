import BusTestSupport
import Foundation
import KioskCore
import KioskDaemon
import KioskDaemonTestSupport
import KioskInput
import KioskTestSupport
import SystemdKit
import Testing

/// What a visitor's wrong PINs at the kiosk can do to staff (docs/threat-model.md § What a
/// visitor can do to staff): make them wait at most 5 minutes, never into the next session,
/// and never past an admin's `ResetPasscodeThrottle` or `ForceEndSession`. In process: the
/// prompt's keys are driven on the manager's loop, as the input broker does.
@Suite(.serialized) struct StaffLockoutTests {
    static let museum = PromptTests.museum

    func type(_ manager: InProcessManager, _ text: String) async throws {
        try await manager.onLoop { $0.requestExit() }
        for key in text.map({ PromptKey.digit(UInt8(String($0))!) }) + [.enter] {
            try await manager.onLoop { $0.promptKey(key) }
        }
    }

    /// Types `text` at the kiosk and waits for the prompt to close with `reason`.
    func attempt(_ manager: InProcessManager, _ text: String, expecting reason: String) async throws -> Bool {
        manager.journal.removeAll()
        try await type(manager, text)
        return manager.journal.waitFor("signal PromptClosed \(reason)")
    }

    /// How long the kiosk must wait now, from `PromptRetryAfter` and the manager's clock.
    func kioskWait(_ manager: InProcessManager, _ client: ManagerClient) throws -> Duration {
        let after = try #require(try client.property("PromptRetryAfter")?.uint64)
        guard after > 0 else { return .zero }
        return .microseconds(Int64(after) - manager.clock.now().microseconds)
    }

    @Test("thirteen wrong PINs at the kiosk make staff wait 5 minutes, not an hour")
    func theWaitAtTheKioskIsCapped() async throws {
        let manager = try await InProcessManager(uid: 0, profiles: ["museum": Self.museum])
        let client = try ManagerClient(address: manager.bus.address)
        try client.call("StartSession", [.string("museum")])
        for guess in 1...13 {
            #expect(try await attempt(manager, "9999", expecting: "rejected"), "guess \(guess)")
            let wait = try kioskWait(manager, client)
            #expect(wait <= .seconds(300), "guess \(guess) makes the kiosk wait \(wait)")
            manager.clock.advance(by: wait)
        }
        // A uid on the bus still waits up to an hour: its guesses cost only itself.
        #expect(PasscodeThrottle.delay(afterFailures: 13, cap: PasscodeSource.uid(1000).maximumDelay) == .seconds(3600))
        await manager.stop()
    }

    @Test("an admin clears the kiosk's count; ForceEndSession and the next session start clear it too")
    func staffGetBackIn() async throws {
        let manager = try await InProcessManager(uid: 0, profiles: ["museum": Self.museum])
        let client = try ManagerClient(address: manager.bus.address)
        try client.call("StartSession", [.string("museum")])
        for _ in 1...6 { #expect(try await attempt(manager, "9999", expecting: "rejected")) }
        #expect(try kioskWait(manager, client) > .zero)
        #expect(try await attempt(manager, "1234", expecting: "throttled"), "staff are made to wait")

        // kioskctl passcode reset-throttle: the wait is gone, and staff's PIN works at once.
        try client.call("ResetPasscodeThrottle", [.string("kiosk")])
        #expect(try kioskWait(manager, client) == .zero)
        #expect(try await attempt(manager, "1234", expecting: "accepted"))

        // Throttled again in a new session, which ForceEndSession ends: the next one starts clear.
        try client.call("StartSession", [.string("museum")])
        for _ in 1...6 { #expect(try await attempt(manager, "9999", expecting: "rejected")) }
        #expect(try kioskWait(manager, client) > .zero)
        try client.call("ForceEndSession")
        try client.call("StartSession", [.string("museum")])
        #expect(try kioskWait(manager, client) == .zero)
        #expect(manager.store.saved.last?.throttles[.kiosk].failures == 0)
        await manager.stop()
    }

    @Test("only manage-session resets a count; a bad source is InvalidArgs; nothing counted writes nothing")
    func resettingIsAnAdminsAndChecked() async throws {
        let manager = try await InProcessManager(
            uid: 0, authorize: .result(.denied), profiles: ["museum": Self.museum])
        let client = try ManagerClient(address: manager.bus.address)
        try client.call("StartSession", [.string("museum")])
        for _ in 1...6 { #expect(try await attempt(manager, "9999", expecting: "rejected")) }
        let saved = manager.store.saved.count
        manager.identity.become(1000)
        #expect(client.errorName("ResetPasscodeThrottle", [.string("kiosk")]) == KioskError.Code.accessDenied.dbusName)
        #expect(manager.store.saved.count == saved)
        #expect(try kioskWait(manager, client) > .zero)
        for bad in ["", "uid", "uid x", "uid -1", "Kiosk", "uid 1000 "] {
            #expect(client.errorName("ResetPasscodeThrottle", [.string(bad)]) == KioskError.Code.invalidArgument.dbusName, "\(bad)")
        }
        manager.identity.become(0)
        manager.journal.removeAll()
        try client.call("ResetPasscodeThrottle", [.string("uid 4242")])
        #expect(manager.store.saved.count == saved, "nothing counted for uid 4242: nothing written")
        try client.call("ResetPasscodeThrottle", [.string("all")])
        #expect(manager.store.saved.count == saved + 1)
        #expect(try kioskWait(manager, client) == .zero)
        await manager.stop()
    }
}
