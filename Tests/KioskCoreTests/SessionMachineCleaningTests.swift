import KioskAPI
import KioskCore
import KioskInput
import Testing

/// Cleaning the screen in ``SessionMachine`` (docs/architecture.md § The session machine): the
/// bus calls' bounds, the gesture, the end by the machine's clock, the prompt taking over, and
/// that nothing of it is saved.
@Suite struct SessionMachineCleaningTests {
    static let start = Timestamp(microseconds: 1_700_000_000_000_000)

    /// A session whose profile has a cleaning gesture of `cleaningTime`.
    func machine(cleaningTime: Duration = .seconds(30), gesture: Bool = true) throws -> SessionMachine {
        var profile = Profile()
        profile.session.exitGesture = Profile.ExitGesture(key: "KEY_POWER", presses: 3, within: .seconds(2))
        if gesture {
            profile.session.cleaningGesture = Profile.ExitGesture(key: "KEY_POWER", presses: 5, within: .seconds(3))
        }
        profile.session.cleaningTime = cleaningTime
        var state = KioskState()
        _ = try state.startSession(profileName: "p", profile: profile, at: Self.start)
        return SessionMachine(state: state, profile: profile)
    }

    @Test func aBusCallStartsItForItsLengthAndTheClockEndsItOnce() throws {
        var machine = try machine()
        let saved = machine.state
        #expect(try machine.apply(.startCleaning(.seconds(20)), at: Self.start) == [.cleaningStarted(.seconds(20))])
        #expect(
            machine.cleaning == CleaningPhase(until: (Self.start + .seconds(20)).microseconds, length: .seconds(20)))
        #expect(machine.state == saved, "nothing of it is persisted")
        #expect(machine.handle(.clock, at: Self.start + .milliseconds(19_999)) == [])
        #expect(machine.handle(.clock, at: Self.start + .seconds(20)) == [.cleaningEnded])
        #expect(machine.cleaning == nil)
        #expect(machine.handle(.clock, at: Self.start + .seconds(21)) == [])
    }

    @Test(arguments: [Duration.seconds(4), .milliseconds(4_999), .milliseconds(300_001), .seconds(3600), .zero])
    func aLengthOutsideFiveSecondsToFiveMinutesIsRefusedAndNothingChanges(length: Duration) throws {
        var machine = try machine()
        let before = machine
        #expect {
            try machine.apply(.startCleaning(length), at: Self.start)
        } throws: { error in
            (error as? KioskError)?.code == .invalidArgument
                && (error as? KioskError)?.message.contains("Cleaning takes 5s to 5m") == true
        }
        #expect(machine == before)
    }

    @Test(arguments: [Duration.seconds(5), .seconds(300)])
    func theBoundsThemselvesAreTaken(length: Duration) throws {
        var machine = try machine()
        #expect(try machine.apply(.startCleaning(length), at: Self.start) == [.cleaningStarted(length)])
    }

    @Test func stoppingEndsItOnceAndStartingAgainMovesTheEnd() throws {
        var machine = try machine()
        _ = try machine.apply(.startCleaning(.seconds(60)), at: Self.start)
        #expect(
            try machine.apply(.startCleaning(.seconds(10)), at: Self.start + .seconds(30))
                == [.cleaningStarted(.seconds(10))])
        #expect(machine.cleaning?.until == (Self.start + .seconds(40)).microseconds)
        #expect(try machine.apply(.stopCleaning, at: Self.start + .seconds(31)) == [.cleaningEnded])
        #expect(try machine.apply(.stopCleaning, at: Self.start + .seconds(32)) == [])
        #expect(machine.handle(.clock, at: Self.start + .seconds(40)) == [])
    }

    @Test func itNeedsNoSession() throws {
        var machine = SessionMachine(state: KioskState(), profile: nil)
        #expect(try machine.apply(.startCleaning(.seconds(30)), at: Self.start) == [.cleaningStarted(.seconds(30))])
        // No profile: no gesture to start it.
        var idle = SessionMachine(state: KioskState(), profile: nil)
        #expect(idle.handle(.cleaningGesture, at: Self.start) == [])
    }

    @Test func theGestureStartsItForTheProfilesTimeOnceAtATime() throws {
        var machine = try machine(cleaningTime: .seconds(45))
        #expect(machine.handle(.cleaningGesture, at: Self.start) == [.cleaningStarted(.seconds(45))])
        #expect(machine.handle(.cleaningGesture, at: Self.start + .seconds(10)) == [], "it runs already")
        #expect(machine.cleaning?.until == (Self.start + .seconds(45)).microseconds)
        var without = try self.machine(gesture: false)
        #expect(without.handle(.cleaningGesture, at: Self.start) == [])
    }

    @Test func theExitGestureEndsItAndOpensThePrompt() throws {
        var machine = try machine()
        _ = machine.handle(.cleaningGesture, at: Self.start)
        let effects = machine.handle(.exitGesture, at: Self.start + .seconds(5))
        #expect(Array(effects.prefix(3)) == [.exitRequested, .cleaningEnded, .promptOpened])
        #expect(machine.cleaning == nil && machine.prompt.state == .open)
        // While the prompt is open, neither the gesture nor a bus call starts it.
        #expect(machine.handle(.cleaningGesture, at: Self.start + .seconds(6)) == [])
        #expect(throws: KioskError.self) { try machine.apply(.startCleaning(.seconds(30)), at: Self.start) }
        #expect(machine.cleaning == nil)
    }

    @Test func theSessionEndingLeavesItRunningAndAdoptingKeepsTheLiveCleaning() throws {
        var machine = try machine()
        let planned = machine  // a change's copy, made before the cleaning started
        _ = try machine.apply(.startCleaning(.seconds(30)), at: Self.start)
        var ended = planned
        _ = try ended.apply(.end(.forced), at: Self.start + .seconds(1))
        machine.adopt(ended)
        #expect(machine.state.session.state == .inactive)
        #expect(machine.cleaning?.length == .seconds(30))
        #expect(machine.handle(.clock, at: Self.start + .seconds(30)) == [.cleaningEnded])
    }

    @Test func aRestartComesBackWithoutCleaning() throws {
        var machine = try machine()
        _ = try machine.apply(.startCleaning(.seconds(30)), at: Self.start)
        // What a restart has: the state as saved, the profile read again.
        let restarted = SessionMachine(state: machine.state, profile: machine.profile)
        #expect(restarted.cleaning == nil)
        #expect(restarted.state.session.state == .active)
    }
}
