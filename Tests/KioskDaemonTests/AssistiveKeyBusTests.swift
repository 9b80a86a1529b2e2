import BusTestSupport
import Foundation
import KioskDaemonTestSupport
import KioskTestSupport
import SystemdKit
import Testing

@testable import KioskDaemon

/// A session whose profile's group locks swallow a screen reader's or sticky keys' keys says so
/// in the journal when it starts, naming each key and the lock; the locks stay as they are.
@Suite(.serialized) struct AssistiveKeyBusTests {
    @Test func theSwallowedKeysAreJournaledWhenTheSessionStarts() async throws {
        let manager = try await InProcessManager(
            uid: 0,
            profiles: ["locked": "[buttons]\nkeyboard = \"locked\"\n", "open": "[buttons]\nhome = \"allowed\"\n"],
            logsToJournal: true)
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        try client.call("StartSession", [.string("locked")])
        let logged = manager.journal.all.filter { $0.contains(" is swallowed by ") }
        #expect(logged.count == 4, "\(manager.journal.all)")
        #expect(
            logged.contains {
                $0.hasPrefix("log KEY_INSERT (the Orca key on desktop layouts) is swallowed by keyboard")
            })
        try client.call("ForceEndSession")
        let before = manager.journal.all.count
        try client.call("StartSession", [.string("open")])
        #expect(
            !manager.journal.all[before...].contains { $0.contains(" is swallowed by ") },
            "nothing swallowed, nothing said")
    }
}
