import KioskCore
import KioskInput
import KioskTraces
import Testing

/// `kioskctl replay` models cleaning the screen as the kiosk does: the recording's cleaning
/// gesture starts it (`# Cleaning 20s`), nothing is forwarded meanwhile but what the profile's
/// `[accessibility]` lets through, and it ends at the first event after its time
/// (`# CleaningEnded`), after which a key pressed during it is still swallowed until let go.
@Suite struct ReplayCleaningTests {
    static let keyboard = DeviceDescription(name: "kbd", codes: [1: Set(1..<0x100)])

    /// A press and a release of `code` at `second` (a frame each, 20 ms apart), or only the
    /// press or the release.
    static func key(_ code: UInt16, at second: Double, press: Bool = true, release: Bool = true) -> [InputEvent] {
        var events: [InputEvent] = []
        for (offset, value, wanted) in [(Int64(0), Int32(1), press), (20_000, 0, release)] where wanted {
            let time = 1_000_000 + Int64(second * 1_000_000) + offset
            let (s, u) = (Int(time / 1_000_000), Int(time % 1_000_000))
            events += [
                InputEvent(seconds: s, microseconds: u, type: 1, code: code, value: value),
                InputEvent(seconds: s, microseconds: u, type: 0, code: 0, value: 0),
            ]
        }
        return events
    }

    @Test func theGestureHoldsAllButTheAllowedKeysUntilItsTimeIsUp() throws {
        let profile = try ProfileParser.parse(
            source: """
                [buttons]
                keyboard = "allowed"
                [session]
                exit-gesture = { key = "KEY_F11", presses = 3, within = "1.5s" }
                cleaning-gesture = { key = "KEY_F12", presses = 3, within = "1.5s" }
                cleaning-time = "20s"
                [accessibility]
                allowed-keys = ["KEY_SPACE"]
                """, file: "clean.toml")
        let (a, b, c, space, f12) = (UInt16(30), UInt16(48), UInt16(46), UInt16(57), UInt16(88))
        // KEY_A passes at 0 s; three F12 at 1 s start the cleaning (20 s: until 21.2 s); during it
        // KEY_B is held, Space passes, KEY_C goes down at 20 s and up after the end (swallowed);
        // KEY_A at 30 s passes again.
        var events = Self.key(a, at: 0)
        for second in [1.0, 1.1, 1.2] { events += Self.key(f12, at: second) }
        events += Self.key(b, at: 5) + Self.key(space, at: 6) + Self.key(c, at: 20, release: false)
        events += Self.key(c, at: 25, press: false) + Self.key(a, at: 30)
        let frames = Replay.frames(
            trace: Trace(devices: [Trace.Device(description: Self.keyboard, events: events)]),
            policy: profile.filterPolicy, session: profile.session)
        #expect(frames.compactMap(\.note) == ["Cleaning 20s", "CleaningEnded"], "\(frames)")
        let shown = frames.map { frame in
            frame.note.map { "# \($0)" }
                ?? frame.events.filter { $0.type == 1 }.map { "\($0.code) \($0.value)" }.joined(separator: ", ")
        }
        #expect(
            shown == [
                "30 1", "30 0",  // KEY_A
                "88 1", "88 0", "88 1", "88 0", "88 1",  // the gesture's presses pass (keyboard allowed);
                "88 0",  // the last one, down when the hold came, released on the clone at once
                "# Cleaning 20s",  // (its own release is swallowed)
                "57 1", "57 0",  // Space, allowed
                "# CleaningEnded",
                "30 1", "30 0",  // KEY_A again; KEY_B and KEY_C never reached the kiosk
            ], "\(shown)")
    }
}
