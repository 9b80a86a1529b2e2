import BusTestSupport
import Foundation
import KioskCore
import KioskDaemonTestSupport
import KioskTestSupport
import SystemdKit
import Testing

@testable import KioskDaemon

/// The offer of more time at the kiosk through kioskd's manager in process, on its manual clock
/// (docs/dbus-api.md § Time the visitor can extend): `TimeOffer` and `VisitorExtensionsLeft` as a
/// display reads them, the visitor taking it (what the filter does on a key or touch), the
/// `TimeExtended` signal and the journal entry, and a restart during the offer.
@Suite(.serialized) struct VisitorExtensionBusTests {
    static let profile = """
        [session]
        time-limit = "3m"
        visitor-extensions = 10
        extend-by = "2m"
        warn-before = "30s"
        """

    /// Moves the manager's clock by `seconds`, runs the session's timer and waits for `signal`.
    func tick(_ manager: InProcessManager, by seconds: Int64, until signal: String) async throws {
        manager.clock.advance(by: .seconds(seconds))
        try await manager.onLoop { $0.sessionTick() }
        #expect(manager.journal.waitFor(signal), "\(manager.journal.all)")
    }

    @Test func theOfferComesAtWarnBeforeAndTheVisitorTakesItUntilNoneAreLeft() async throws {
        let manager = try await InProcessManager(uid: 0, profiles: ["visitor": Self.profile], logsToJournal: true)
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        try client.call("StartSession", [.string("visitor")])
        #expect(try client.property("TimeOffer")?.string == "closed")
        let end = try #require(try client.property("SessionDeadline")?.uint64)

        // Nothing to take before the offer: the visitor's key changes nothing.
        try await manager.onLoop { $0.visitorExtends() }
        try await manager.signalsSent()
        #expect(!manager.journal.all.contains { $0.hasPrefix("signal TimeExtended") })

        try await tick(manager, by: 150, until: "signal TimeLimitWarning 30")
        try await manager.signalsSent()
        #expect(try client.property("TimeOffer")?.string == "open")
        #expect(try client.property("VisitorExtensionsLeft")?.uint64 == 10)

        try await manager.onLoop { $0.visitorExtends() }
        #expect(manager.journal.waitFor("signal TimeExtended 120 9"), "\(manager.journal.all)")
        try await manager.signalsSent()
        #expect(try client.property("TimeOffer")?.string == "closed")
        #expect(try client.property("SessionDeadline")?.uint64 == end + 120_000_000)
        #expect(manager.journal.all.contains("log Session time extended at the kiosk"), "\(manager.journal.all)")
        #expect(manager.store.saved.last?.session.visitorExtensionsUsed == 1)

        // Nine more, each at its offer; then the offer says none are left and nothing extends.
        for left in (0...8).reversed() {
            try await tick(manager, by: 120, until: "signal TimeLimitWarning 30")
            try await manager.onLoop { $0.visitorExtends() }
            #expect(manager.journal.waitFor("signal TimeExtended 120 \(left)"), "\(manager.journal.all)")
        }
        manager.clock.advance(by: .seconds(120))
        try await manager.onLoop { $0.sessionTick() }
        try await manager.signalsSent()
        #expect(try client.property("TimeOffer")?.string == "exhausted")
        #expect(try client.property("VisitorExtensionsLeft")?.uint64 == 0)
        let before = manager.journal.all.count
        try await manager.onLoop { $0.visitorExtends() }
        try await manager.signalsSent()
        #expect(!manager.journal.all[before...].contains { $0.hasPrefix("signal TimeExtended") })
        // Silence: the limit expires, and the offer goes with it.
        manager.clock.advance(by: .seconds(30))
        try await manager.onLoop { $0.sessionTick() }
        #expect(eventually { (try? client.property("SessionState")?.string) == "expired" })
        #expect(try client.property("TimeOffer")?.string == "closed")
    }

    @Test func aRestartDuringTheOfferKeepsTheCountAndTheEnd() async throws {
        let first = try await InProcessManager(uid: 0, profiles: ["visitor": Self.profile])
        let client = try ManagerClient(address: first.bus.address)
        try client.call("StartSession", [.string("visitor")])
        try await tick(first, by: 150, until: "signal TimeLimitWarning 30")
        try await first.onLoop { $0.visitorExtends() }
        #expect(first.journal.waitFor("signal TimeExtended 120 9"))
        let saved = try #require(first.store.saved.last)
        let end = try #require(try client.property("SessionDeadline")?.uint64)
        await first.stop()

        // kioskd comes back with what it wrote; 275 s in, the offer is up again, not reset.
        let second = try await InProcessManager(uid: 0, state: saved, profiles: ["visitor": Self.profile])
        defer { Task { await second.stop() } }
        let again = try ManagerClient(address: second.bus.address)
        #expect(try again.property("SessionDeadline")?.uint64 == end)
        second.clock.advance(by: .seconds(275))
        try await second.onLoop { $0.sessionTick() }
        #expect(eventually { (try? again.property("TimeOffer")?.string) == "open" })
        #expect(try again.property("VisitorExtensionsLeft")?.uint64 == 9)
        #expect(try again.property("SessionDeadline")?.uint64 == end)
    }
}
