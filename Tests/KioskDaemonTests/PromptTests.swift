import BusTestSupport
import Foundation
import KioskCore
import KioskDaemon
import KioskDaemonTestSupport
import KioskInput
import KioskTestSupport
import SystemdKit
import Testing

/// kioskd's passcode prompt at the kiosk, in process: the broker's callbacks
/// (`requestExit`, `promptKey`) driven on the manager's loop, what a display reads and hears
/// on the bus, and the kiosk's own throttle count. The filter's side (which keys are read, the
/// pad, nothing forwarded) is in the scenarios; the whole path on real devices in the VM.
@Suite(.serialized) struct PromptTests {
    /// The demo passcode 1234.
    static let hash = "$y$j9T$wu5EV0ZTWsGnMUW7dRD.v/$rUAZoDJKaSqm6adNI/J85tr9e.L1CawC/ZXm0damhMC"
    static let museum = """
        [session]
        exit-gesture = { key = "KEY_POWER", presses = 3, within = "1.5s" }
        speak-warnings = true
        language = "de"
        [passcode]
        hash = "\(hash)"
        """

    func withSession(_ body: (InProcessManager, ManagerClient) async throws -> Void) async throws {
        let manager = try await InProcessManager(uid: 0, profiles: ["museum": Self.museum])
        do {
            let client = try ManagerClient(address: manager.bus.address)
            try client.call("StartSession", [.string("museum")])
            try await body(manager, client)
        } catch {
            await manager.stop()
            throw error
        }
        await manager.stop()
    }

    func type(_ manager: InProcessManager, _ keys: [PromptKey]) async throws {
        for key in keys { try await manager.onLoop { $0.promptKey(key) } }
    }

    func digits(_ text: String) -> [PromptKey] { text.map { .digit(UInt8(String($0))!) } }

    @Test("the right PIN typed at the kiosk ends the session; the display saw the prompt open, the dots and the close")
    func rightPasscodeEndsTheSession() async throws {
        try await withSession { manager, client in
            #expect(try client.property("PromptState")?.string == "closed")
            #expect(try client.property("SpeakWarnings")?.bool == true)
            #expect(try client.property("Language")?.string == "de", "the profile's [session] language")
            try await manager.onLoop { $0.requestExit() }
            #expect(try client.property("PromptState")?.string == "open")
            #expect((try client.property("PromptDeadline")?.uint64 ?? 0) > 0)
            // A letter is refused and a digit taken back: what is checked is 1234.
            try await type(manager, digits("129") + [.refused, .backspace] + digits("34"))
            #expect(try client.property("PromptLength")?.uint64 == 4)
            try await type(manager, [.enter])
            #expect(manager.journal.waitFor("signal PromptClosed accepted"), "\(manager.journal.all)")
            #expect(try client.property("SessionState")?.string == "inactive")
            #expect(try client.property("PromptState")?.string == "closed")
            #expect(try client.property("PromptLength")?.uint64 == 0)
            #expect(try client.property("Language")?.string == "", "no session: the kiosk's locale")
            #expect(manager.journal.all.contains("signal ExitRequested"))
        }
    }

    @Test("a wrong PIN closes the prompt and leaves the session; the gesture opens another; Esc cancels")
    func wrongThenCancelThenRight() async throws {
        try await withSession { manager, client in
            try await manager.onLoop { $0.requestExit() }
            try await type(manager, digits("9999") + [.enter])
            #expect(manager.journal.waitFor("signal PromptClosed rejected"), "\(manager.journal.all)")
            #expect(try client.property("SessionState")?.string == "active")
            #expect(try client.property("PromptState")?.string == "closed")
            // Keys with the prompt closed do nothing.
            try await type(manager, digits("1234") + [.enter])
            #expect(try client.property("PromptState")?.string == "closed")
            try await manager.onLoop { $0.requestExit() }
            try await type(manager, digits("12") + [.cancel])
            #expect(manager.journal.waitFor("signal PromptClosed cancelled"))
            #expect(try client.property("SessionState")?.string == "active")
            try await manager.onLoop { $0.requestExit() }
            try await type(manager, digits("1234") + [.enter])
            #expect(manager.journal.waitFor("signal PromptClosed accepted"))
            #expect(try client.property("SessionState")?.string == "inactive")
        }
    }

    @Test("wrong PINs at the kiosk meet the kiosk's throttle, shown as PromptRetryAfter; a bus caller's failures do not")
    func theKiosksThrottleIsItsOwn() async throws {
        // Every caller is uid 1000 here (polkit allows it to start the session).
        let manager = try await InProcessManager(uid: 1000, profiles: ["museum": Self.museum])
        let client = try ManagerClient(address: manager.bus.address)
        try client.call("StartSession", [.string("museum")])
        for _ in 0..<6 {
            do { try client.call("EndSession", [.string("0000")]) } catch {}
        }
        #expect(throws: (any Error).self) { try client.call("EndSession", [.string("1234")]) }
        // The kiosk is not throttled by that: five wrong PINs cost nothing, the sixth one counts…
        for attempt in 1...6 {
            try await manager.onLoop { $0.requestExit() }
            try await type(manager, digits("9999") + [.enter])
            #expect(manager.journal.waitFor("signal PromptClosed rejected"), "attempt \(attempt)")
            manager.journal.removeAll()
        }
        #expect(try client.property("PromptRetryAfter")?.uint64 ?? 0 > 0)
        // …and the next is refused unchecked while the wait runs, even with the right PIN.
        try await manager.onLoop { $0.requestExit() }
        try await type(manager, digits("1234") + [.enter])
        #expect(manager.journal.waitFor("signal PromptClosed throttled"))
        #expect(try client.property("SessionState")?.string == "active")
        // After the wait, the right one ends the session.
        manager.clock.advance(by: .seconds(31))
        try await manager.onLoop { $0.requestExit() }
        try await type(manager, digits("1234") + [.enter])
        #expect(manager.journal.waitFor("signal PromptClosed accepted"))
        await manager.stop()
    }

    @Test("the prompt times out 30 s after the last key, with every lock as it was")
    func timeout() async throws {
        try await withSession { manager, client in
            try await manager.onLoop { $0.promptTimeout = .milliseconds(200) }
            try await manager.onLoop { $0.requestExit() }
            try await type(manager, digits("12"))
            manager.clock.advance(by: .seconds(1))
            #expect(manager.journal.waitFor("signal PromptClosed timeout"), "\(manager.journal.all)")
            #expect(try client.property("SessionState")?.string == "active")
        }
    }

    @Test("a session ended over the bus while the prompt is open closes it as ended")
    func endedOverTheBus() async throws {
        try await withSession { manager, client in
            try await manager.onLoop { $0.requestExit() }
            try client.call("ForceEndSession", [])
            #expect(manager.journal.waitFor("signal PromptClosed ended"))
            #expect(try client.property("PromptState")?.string == "closed")
        }
    }

    @Test("a prompt that opened while the session's end was being saved closes as ended once it is on disk")
    func openedWhileTheEndWasSaved() async throws {
        try await withSession { manager, client in
            manager.store.closeGate()
            let address = manager.bus.address
            let journal = manager.journal
            DispatchQueue.global().async {
                let other = try? ManagerClient(address: address)
                let error = other.map { $0.errorName("ForceEndSession") }
                journal.note(error == .some(nil) ? "reply" : "error \(String(describing: error))")
            }
            #expect(eventually { manager.store.waitingAtGate == 1 })
            // The end is not on disk yet: the session is still active, so the gesture opens the
            // prompt (the end's own effects were planned with it closed).
            try await manager.onLoop { $0.requestExit() }
            #expect(try client.property("PromptState")?.string == "open")
            manager.store.openGate()
            #expect(manager.journal.waitFor("signal PromptClosed ended"), "\(manager.journal.all)")
            #expect(manager.journal.waitFor("reply"), "\(manager.journal.all)")
            #expect(try client.property("PromptState")?.string == "closed")
            #expect(try client.property("SessionState")?.string == "inactive")
        }
    }
}
