import KioskCore
import KioskInput
import KioskTraces
import Testing

/// `kioskctl replay` models the offer of more time as the kiosk does: offered at `warn-before`
/// (a warning and the offer's note), taken by a key pressed and let go during it (swallowed, the
/// end moved), offered again before the new end, and the limit expiring when nobody answers.
@Suite struct ReplayOfferTests {
    static let keyboard = DeviceDescription(name: "kbd", codes: [1: Set(1..<0x100)])

    @Test func aKeyDuringTheOfferTakesItAndIsSwallowed() throws {
        let profile = try ProfileParser.parse(
            source: """
                [session]
                time-limit = "3m"
                visitor-extensions = 10
                extend-by = "2m"
                warn-before = "30s"
                """, file: "offer.toml")
        // KEY_B (48) at 0 s; at 150 s (the offer comes, 30 s before the end: the key takes it,
        // the end moves to 300 s); at 160 s (no offer: it passes); at 299 s (a recording's clock
        // moves only with its events: the offer comes late, with 1 s left, and the key takes it:
        // the end is 420 s); at 430 s, after an offer nobody answered: the limit expired.
        let events = keyPresses(48, at: [0, 150, 160, 299, 430])
        let frames = Replay.frames(
            trace: Trace(devices: [Trace.Device(description: Self.keyboard, events: events)]),
            policy: profile.filterPolicy, session: profile.session)
        let notes = frames.compactMap(\.note)
        #expect(
            notes == [
                "TimeLimitWarning 30", "TimeOffer 10 left", "TimeExtended 2m, 9 left", "TimeOffer closed",
                "TimeLimitWarning 1", "TimeOffer 9 left", "TimeExtended 2m, 8 left", "TimeOffer closed",
                "SessionExpired",
            ], "\(notes)")
        let forwarded = frames.filter { $0.note == nil }.compactMap {
            $0.events.first { $0.type == 1 && $0.value == 1 }
        }
        .map { $0.seconds - 1 }
        // The keys that took the offer never reached the kiosk; the one at 160 s did.
        #expect(forwarded == [0, 160], "\(forwarded)")
    }
}
