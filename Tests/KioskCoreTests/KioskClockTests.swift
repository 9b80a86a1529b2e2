import KioskCore
import Testing

/// Waits and limits on the kiosk clock (CLOCK_BOOTTIME while kioskd runs), which a
/// wall-clock jump does not move; across a reboot a throttle wait restarts in full and a
/// session's time resumes.
@Suite struct KioskClockTests {
    static let path = "/var/lib/kioskd/state.json"
    static let wall = Timestamp(microseconds: 1_800_000_000_000_000)

    /// A session of 1 hour started at kiosk time `at`, with 6 wrong passcodes from uid 1000.
    static func state(at start: Timestamp) throws -> KioskState {
        var state = KioskState()
        let profile = try ProfileParser.parse(source: "[session]\ntime-limit = \"1h\"\n", file: "p.toml")
        _ = try state.session.start(profileName: "p", profile: profile, at: start, registry: &state.registry)
        for _ in 0..<6 { state.throttles.recordFailure(from: .uid(1000), at: start) }
        return state
    }

    @Test func aRestartInTheSameBootKeepsTheClockAndEveryWait() throws {
        var state = try Self.state(at: Self.wall)
        let first = KioskClockMarker.start(
            state: &state, statePath: Self.path, marker: nil, boottime: .seconds(100), realtime: Self.wall)
        #expect(first.newBoot)
        #expect(first.marker.kioskTime(boottime: .seconds(100)) == Self.wall, "a first start: the wall clock")
        let before = state
        // kioskd restarts 10 s later; the wall clock was set 2 hours ahead meanwhile.
        let again = KioskClockMarker.start(
            state: &state, statePath: Self.path, marker: first.marker, boottime: .seconds(110),
            realtime: Self.wall + .seconds(2 * 3600 + 10))
        #expect(!again.newBoot && state == before)
        let now = again.marker.kioskTime(boottime: .seconds(110))
        #expect(now == Self.wall + .seconds(10))
        #expect(state.throttles[.uid(1000)].waitRemaining(at: now) == .seconds(20))
        #expect(state.session.advance(to: now) == [])
    }

    @Test func wallClockJumpsInEitherDirectionMoveNeitherAWaitNorALimit() throws {
        var state = try Self.state(at: Self.wall)
        let (marker, _) = KioskClockMarker.start(
            state: &state, statePath: Self.path, marker: nil, boottime: .seconds(100), realtime: Self.wall)
        // Kiosk time is CLOCK_BOOTTIME + an offset: the wall clock is not read for it at all.
        let soon = marker.kioskTime(boottime: .seconds(105))
        #expect(throws: KioskError.self) { try state.throttles.check(.uid(1000), at: soon) }
        #expect(state.throttles[.uid(1000)].waitRemaining(at: soon) == .seconds(25))
        let almost = marker.kioskTime(boottime: .seconds(3600 + 99))
        #expect(state.session.advance(to: almost) == [], "not expired before its hour")
        let late = marker.kioskTime(boottime: .seconds(3600 + 100))
        #expect(state.session.advance(to: late) == [.expired], "nor a minute after it")
        // Only what is shown moves: the deadline as wall-clock time.
        var shown = marker
        shown.displayOffset += 7200 * 1_000_000
        #expect(shown.display(state.session.deadline!) == marker.display(state.session.deadline!) + .seconds(7200))
    }

    @Test func afterARebootAThrottleWaitRestartsInFullAndTheSessionsTimeResumes() throws {
        var state = try Self.state(at: Self.wall)
        // Saved 20 minutes into the session, then the plug was pulled for a day.
        state.clockCheckpoint = Self.wall + .seconds(1200)
        let (marker, newBoot) = KioskClockMarker.start(
            state: &state, statePath: Self.path, marker: nil, boottime: .seconds(8),
            realtime: Self.wall + .seconds(86_400))
        #expect(newBoot)
        let now = marker.kioskTime(boottime: .seconds(8))
        #expect(now == Self.wall + .seconds(1200), "time powered off does not count")
        #expect(state.session.deadline! - now == .seconds(2400), "40 minutes of the hour are left")
        #expect(state.throttles[.uid(1000)].waitRemaining(at: now) == .seconds(30), "the wait starts again in full")
        #expect(marker.display(state.session.deadline!) == Self.wall + .seconds(86_400 + 2400 - 8) + .seconds(8))
    }

    @Test func aMarkerOfAnotherStateFileIsNotThisBootsAndTheTextRoundTrips() throws {
        var state = KioskState()
        let other = KioskClockMarker(offset: 5, displayOffset: 6, statePath: "/tmp/other/state.json")
        #expect(KioskClockMarker(text: other.text) == other)
        #expect(KioskClockMarker(text: "5 x /p") == nil)
        let (_, newBoot) = KioskClockMarker.start(
            state: &state, statePath: Self.path, marker: other, boottime: .seconds(1), realtime: Self.wall)
        #expect(newBoot)
    }

    /// An unconfirmed trial session does not survive a reboot; a restart keeps it.
    @Test func aRebootEndsAnUnconfirmedTrialSession() throws {
        var state = KioskState()
        var registry = state.registry
        _ = try state.session.start(
            profileName: "p", profile: Profile(), at: Timestamp(microseconds: 1_000_000), registry: &registry,
            trial: .seconds(300))
        let marker = KioskClockMarker(offset: 0, displayOffset: 0, statePath: "/s")
        var restarted = state
        _ = KioskClockMarker.start(
            state: &restarted, statePath: "/s", marker: marker, boottime: .seconds(2), realtime: Timestamp(microseconds: 2_000_000))
        #expect(restarted.session.isActive && restarted.session.trialEnd != nil)
        var rebooted = state
        _ = KioskClockMarker.start(
            state: &rebooted, statePath: "/s", marker: nil, boottime: .seconds(2), realtime: Timestamp(microseconds: 2_000_000))
        #expect(!rebooted.session.isActive)
        // A confirmed one does survive.
        var confirmed = state
        try confirmed.session.confirmTrial()
        _ = KioskClockMarker.start(
            state: &confirmed, statePath: "/s", marker: nil, boottime: .seconds(2), realtime: Timestamp(microseconds: 2_000_000))
        #expect(confirmed.session.isActive)
    }
}
