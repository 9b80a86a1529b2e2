import KioskCore
import Testing

/// What kioskd decides when the disk fails (docs/state-store.md § When the disk fails): what a
/// start restores, when a restored session comes back expired, and how saves are retried.
@Suite struct StateStorageTests {
    static let t0 = Timestamp(microseconds: 1_800_000_000_000_000)

    /// A state checkpointed at `at`, with `wrong` wrong passcodes from the kiosk, and a session of
    /// 1 hour when `limit`.
    static func state(at: Timestamp, wrong: Int = 0, limit: Bool = true) throws -> KioskState {
        var state = KioskState()
        let source = limit ? "[session]\ntime-limit = \"1h\"\n" : ""
        let profile = try ProfileParser.parse(source: source, file: "p.toml")
        _ = try state.session.start(profileName: "p", profile: profile, at: t0, registry: &state.registry)
        for _ in 0..<wrong { state.throttles.recordFailure(from: .kiosk, at: at) }
        state.clockCheckpoint = at
        return state
    }

    @Test func theRuntimeCopyWinsWhenItIsNewerSoAWrongPasscodeIsNotForgotten() throws {
        let disk = try Self.state(at: Self.t0, wrong: 2)
        let pending = try Self.state(at: Self.t0 + .seconds(5), wrong: 7)
        let (state, fromPending) = StateStorage.restore(disk: disk, pending: pending)
        #expect(fromPending)
        #expect(state.throttles[.kiosk].failures == 7)
    }

    @Test func aRuntimeCopyOlderThanTheDiskIsIgnored() throws {
        let disk = try Self.state(at: Self.t0 + .seconds(9), wrong: 8)
        let pending = try Self.state(at: Self.t0 + .seconds(5), wrong: 7)
        let (state, fromPending) = StateStorage.restore(disk: disk, pending: pending)
        #expect(!fromPending)
        #expect(state.throttles[.kiosk].failures == 8)
    }

    @Test func withoutARuntimeCopyTheDiskIsTheState() throws {
        let disk = try Self.state(at: Self.t0, wrong: 3)
        #expect(StateStorage.restore(disk: disk, pending: nil) == (disk, false))
    }

    @Test(arguments: [
        // newBoot, writable, time limit, expires
        (true, false, true, true),
        (true, true, true, false),
        (false, false, true, false),
        (true, false, false, false),
    ])
    func aRebootOnAnUnwritableDiskExpiresASessionWithATimeLimit(
        newBoot: Bool, writable: Bool, limit: Bool, expires: Bool
    ) throws {
        let session = try Self.state(at: Self.t0, limit: limit).session
        #expect(StateStorage.mustExpireRestoredSession(session, newBoot: newBoot, writable: writable) == expires)
    }

    @Test func anInactiveSessionIsNeverExpired() {
        #expect(!StateStorage.mustExpireRestoredSession(GuidedSession(), newBoot: true, writable: false))
    }

    @Test func retriesWaitOneSecondDoublingToAMinuteAndStopOnceASaveWorks() {
        var storage = StateStorage()
        #expect(storage.retryDelay == nil)
        #expect(storage.description == "")
        #expect(storage.failed("Could not write x: No space left on device.", at: Self.t0) == .broke)
        var delays: [Duration] = []
        for _ in 0..<9 {
            delays.append(storage.retryDelay!)
            #expect(storage.failed("Could not write x: No space left on device.", at: Self.t0, retry: true) == nil)
        }
        #expect(delays == [1, 2, 4, 8, 16, 32, 60, 60, 60].map { Duration.seconds($0) })
        #expect(storage.failingSince == Self.t0)
        #expect(storage.saved() == .recovered)
        #expect(storage.retryDelay == nil)
        #expect(storage.saved() == nil)
        #expect(storage.failingSince == nil)
    }

    @Test func theProblemSaysWhatWaitsAndWhere() {
        var storage = StateStorage()
        _ = storage.failed("Could not write x: Read-only file system.", at: Self.t0)
        #expect(storage.description == "The state cannot be saved: Could not write x: Read-only file system.")
        storage.keptUnsaved(shadowError: nil)
        #expect(storage.hasUnsaved)
        #expect(storage.description.hasSuffix("are kept in the runtime directory until they are saved."))
        storage.keptUnsaved(shadowError: "Could not write /run/kioskd/pending-state.json: No space left on device.")
        #expect(storage.description.contains("in memory only (Could not write /run/kioskd/pending-state.json"))
    }
}

/// A reboot with the disk unwritable: a timed session's time is taken as run out (the kiosk
/// clock moves on to its deadline) and every source's free attempts as used.
@Suite struct StateStorageRebootTests {
    static let t0 = StateStorageTests.t0
    static let boottime: Duration = .seconds(12)
    static let wall: Int64 = 1_900_000_000_000_000

    /// The marker of a start whose kiosk time is `t0` at ``boottime``, shown as ``wall``.
    static var marker: KioskClockMarker {
        KioskClockMarker(
            offset: t0.microseconds - boottime.microseconds, displayOffset: wall - t0.microseconds,
            statePath: "/var/lib/kioskd/state.json")
    }

    @Test func aPowerCutGivesNoFreshGuessesWhileTheDiskIsUnwritable() throws {
        var state = try StateStorageTests.state(at: Self.t0, wrong: 2, limit: false)
        state.throttles.recordFailure(from: .uid(1000), at: Self.t0)
        for _ in 0..<8 { state.throttles.recordFailure(from: .uid(1001), at: Self.t0) }
        var marker = Self.marker
        #expect(
            StateStorage.failClosedAfterReboot(
                &state, marker: &marker, boottime: Self.boottime, newBoot: true, writable: false))
        #expect(marker == Self.marker, "no time limit: the clock stays")
        #expect(state.throttles[.kiosk].failures == PasscodeThrottle.freeAttempts)
        #expect(state.throttles[.uid(1000)].failures == PasscodeThrottle.freeAttempts)
        #expect(state.throttles[.uid(1001)].failures == 8, "a higher count is kept")
        // A source never seen starts from the inherited count, used up too.
        #expect(state.throttles[.uid(4242)].failures == PasscodeThrottle.freeAttempts)
        // The next wrong passcode makes the next attempt wait.
        state.throttles.recordFailure(from: .kiosk, at: Self.t0)
        #expect(throws: KioskError.self) { try state.throttles.check(.kiosk, at: Self.t0) }
    }

    @Test func aTimedSessionsClockMovesToItsDeadlineAndTheWaitsRestartThere() throws {
        // Started at t0 with 1 hour, last saved at t0 + 10 min: resumed there after the reboot.
        var state = try StateStorageTests.state(at: Self.t0 + .seconds(600), wrong: 7)
        let resumed = Self.t0 + .seconds(600)
        var marker = KioskClockMarker(
            offset: resumed.microseconds - Self.boottime.microseconds, displayOffset: Self.wall - resumed.microseconds,
            statePath: "/var/lib/kioskd/state.json")
        #expect(
            StateStorage.failClosedAfterReboot(
                &state, marker: &marker, boottime: Self.boottime, newBoot: true, writable: false))
        let deadline = try #require(state.session.deadline)
        #expect(marker.kioskTime(boottime: Self.boottime) == deadline)
        // What is shown as the wall clock stays the wall clock: the deadline shows as now.
        #expect(marker.display(deadline).microseconds == Self.wall)
        // The throttle's wait restarts in full at the new time, not shortened by the move.
        #expect(
            state.throttles.waitRemaining(.kiosk, at: deadline)
                == PasscodeThrottle.delay(afterFailures: 7, cap: .seconds(300)))
        #expect(StateStorage.mustExpireRestoredSession(state.session, newBoot: true, writable: false))
    }

    @Test(arguments: [(true, true), (false, false), (false, true)])
    func otherwiseNothingChanges(newBoot: Bool, writable: Bool) throws {
        var state = try StateStorageTests.state(at: Self.t0, wrong: 2)
        let before = state
        var marker = Self.marker
        #expect(
            !StateStorage.failClosedAfterReboot(
                &state, marker: &marker, boottime: Self.boottime, newBoot: newBoot, writable: writable))
        #expect(state == before)
        #expect(marker == Self.marker)
    }
}
