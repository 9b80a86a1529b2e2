import KioskCore
import KioskInput
import KioskTraces
import Testing

/// `kioskctl replay` models idle time as the kiosk does, on the recording's clock: "Still
/// there?" before the reset (answered by a key, swallowed), the reset once per idle period, the
/// display dark after `blank-after`, and the key that wakes it reaching nothing.
@Suite struct ReplayIdleTests {
    static let keyboard = DeviceDescription(name: "kbd", codes: [1: Set(1..<0x100)])

    @Test func stillThereTheResetTheDarkDisplayAndTheSwallowedWake() throws {
        let profile = try ProfileParser.parse(
            source: """
                [idle]
                reset-after = "2m"
                reset-warning = "20s"
                blank-after = "5m"
                """, file: "idle.toml")
        // KEY_B at 0 s; at 110 s ("Still there?" came at 100 s: the key answers it, swallowed);
        // at 115 s (passes); at 600 s: the screen came at 215 s, the reset at 235 s, the display
        // went dark at 415 s, so this key only wakes it; at 601 s it passes.
        let frames = Replay.frames(
            trace: Trace(devices: [
                Trace.Device(description: Self.keyboard, events: keyPresses(48, at: [0, 110, 115, 600, 601]))
            ]),
            policy: profile.filterPolicy, idle: profile.idle)
        let notes = frames.compactMap(\.note)
        #expect(
            notes == [
                "IdleWarning, reset at 120.0 s", "IdleWarning closed", "IdleWarning, reset at 235.0 s",
                "IdleWarning closed", "IdleReset at 235.0 s", "Blank at 415.0 s", "Wake (swallowed)",
            ], "\(notes)")
        let forwarded = frames.filter { $0.note == nil }.compactMap {
            $0.events.first { $0.type == 1 && $0.value == 1 }
        }
        .map { $0.seconds - 1 }
        #expect(forwarded == [0, 115, 601], "\(forwarded)")
        // And as kioskctl replay prints them.
        let printed = Replay.run(
            trace: Trace(devices: [
                Trace.Device(description: Self.keyboard, events: keyPresses(48, at: [0, 600]))
            ]),
            policy: profile.filterPolicy, idle: profile.idle)
        #expect(printed.contains("# IdleReset at 120.0 s\n# Blank at 300.0 s\n# Wake (swallowed)\n"), "\(printed)")
    }
}
