import KioskCore
import KioskInput
import KioskTraces
import Testing

/// `kioskctl replay` runs a profile's keyboard access features as the kiosk does, slow keys'
/// deadline on the recording's clock (docs/profiles.md#keyboard-access-features).
@Suite struct ReplayKeyAccessTests {
    static let keyboard = DeviceDescription(name: "kbd", codes: [1: Set(1..<0x100)])

    /// A key event and its frame's SYN_REPORT at `seconds`.
    static func key(_ code: UInt16, _ value: Int32, at seconds: Double) -> [InputEvent] {
        let time = Int64((seconds * 1_000_000).rounded())
        let (s, u) = (Int(time / 1_000_000), Int(time % 1_000_000))
        return [
            InputEvent(seconds: s, microseconds: u, type: 1, code: code, value: value),
            InputEvent(seconds: s, microseconds: u, type: 0, code: 0, value: 0),
        ]
    }

    @Test("sticky, slow and bounce keys on a recording: held keys count at their deadline, in time order")
    func stickySlowAndBounceKeys() throws {
        let profile = try ProfileParser.parse(
            source: """
                [buttons]
                home = "allowed"
                [accessibility]
                sticky-keys = true
                slow-keys = "300ms"
                bounce-keys = "200ms"
                """, file: "access.toml")
        let (a, b, c, shift): (UInt16, UInt16, UInt16, UInt16) = (30, 48, 46, 42)
        var events: [InputEvent] = []
        events += Self.key(a, 1, at: 1.0) + Self.key(a, 0, at: 1.1)  // let go too soon: never counted
        events += Self.key(b, 1, at: 2.0) + Self.key(b, 0, at: 2.5)  // counts at 2.3
        events += Self.key(shift, 1, at: 3.0) + Self.key(shift, 0, at: 3.4)  // latched
        events += Self.key(c, 1, at: 4.0) + Self.key(c, 0, at: 4.4)  // Shift+C at 4.3
        events += Self.key(c, 1, at: 4.5) + Self.key(c, 0, at: 4.9)  // 100 ms after C's release: a bounce
        events += Self.key(c, 1, at: 5.0) + Self.key(c, 0, at: 5.4)  // counts at 5.3
        let frames = Replay.frames(
            trace: Trace(devices: [Trace.Device(description: Self.keyboard, events: events)]),
            policy: profile.filterPolicy)
        let seen = frames.map { frame in
            let keys = frame.events.filter { $0.type == 1 }.map { "\($0.code) \($0.value)" }
            let time = frame.events.last.map { Double($0.time) / 1_000_000 } ?? -1
            return "\(time): \(keys.joined(separator: ", "))"
        }
        #expect(
            seen == [
                "2.3: 48 1", "2.5: 48 0", "4.3: 42 1, 46 1", "4.4: 46 0, 42 0", "5.3: 46 1", "5.4: 46 0",
            ], "\(seen)")
    }

    @Test("without the features a recording replays as before: every press at once")
    func offByDefault() throws {
        let profile = try ProfileParser.parse(source: "[buttons]\nhome = \"allowed\"\n", file: "plain.toml")
        let events =
            Self.key(30, 1, at: 1.0) + Self.key(30, 0, at: 1.1) + Self.key(42, 1, at: 1.2)
            + Self.key(42, 0, at: 1.3)
        let frames = Replay.frames(
            trace: Trace(devices: [Trace.Device(description: Self.keyboard, events: events)]),
            policy: profile.filterPolicy)
        #expect(frames.map { $0.events.first { $0.type == 1 }?.value } == [1, 0, 1, 0])
    }
}
