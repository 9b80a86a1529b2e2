import KioskAPI
import KioskCore
import Testing

/// ``SessionMachine`` alone, on explicit times: an admin's changes to a live session and the
/// session's own time (the kiosk's prompt is run through the daemon and replay alike by
/// KioskSequenceTests).
@Suite struct SessionMachineTests {
    static let start = Timestamp(microseconds: 1_700_000_000_000_000)

    /// A session of a profile with `limit` and warnings at 5 and 1 minutes left.
    func machine(limit: Duration? = .seconds(600), trial: Duration? = nil) throws -> SessionMachine {
        var profile = Profile()
        profile.session.timeLimit = limit
        profile.session.warnings = [.seconds(300), .seconds(60)]
        var state = KioskState()
        _ = try state.startSession(profileName: "p", profile: profile, at: Self.start, trial: trial)
        return SessionMachine(state: state, profile: profile)
    }

    @Test func anExtensionSavesThenTellsAndTheMarksAheadStayPending() throws {
        var machine = try machine()
        // 8 minutes in: the end moved 30 s earlier, to 9:30. The 5-minute mark is behind (not
        // sent late), the 1-minute mark ahead, at 8:30.
        let now = Self.start + .seconds(480)
        #expect(try machine.apply(.extend(by: .seconds(-30)), at: now) == [.save(keepIfSaveFails: false), .deadlineChanged])
        #expect(machine.state.session.deadline == Self.start + .seconds(570))
        #expect(machine.handle(.sessionTime, at: Self.start + .seconds(509)) == [])
        #expect(
            machine.handle(.sessionTime, at: Self.start + .seconds(510))
                == [.save(keepIfSaveFails: true), .timeLimitWarning(secondsLeft: 60)])
    }

    @Test func anEndInThePastExpiresTheSessionAndRemovingTheLimitRevivesIt() throws {
        var machine = try machine()
        let now = Self.start + .seconds(10)
        #expect(try machine.apply(.deadline(now), at: now) == [.save(keepIfSaveFails: false), .deadlineChanged])
        #expect(machine.state.session.state == .expired)
        #expect(try machine.apply(.deadline(nil), at: now) == [.save(keepIfSaveFails: false), .deadlineChanged])
        #expect(machine.state.session.state == .active && machine.state.session.deadline == nil)
    }

    @Test func theSessionsRulesRefuseAndNothingChanges() throws {
        var untimed = try machine(limit: nil)
        let before = untimed
        #expect(throws: KioskError.self) { try untimed.apply(.extend(by: .seconds(60)), at: Self.start) }
        #expect(throws: KioskError.self) { try untimed.apply(.confirmTrial, at: Self.start) }
        #expect(untimed == before)
        var none = SessionMachine(state: KioskState(), profile: nil)
        #expect(throws: KioskError.self) { try none.apply(.deadline(nil), at: Self.start) }
    }

    @Test func aTrialIsConfirmedOrEndsByItself() throws {
        var confirmed = try machine(trial: .seconds(60))
        #expect(try confirmed.apply(.confirmTrial, at: Self.start) == [.save(keepIfSaveFails: false), .trialConfirmed])
        #expect(confirmed.handle(.sessionTime, at: Self.start + .seconds(61)) == [])
        var unconfirmed = try machine(trial: .seconds(60))
        let effects = unconfirmed.handle(.sessionTime, at: Self.start + .seconds(61))
        #expect(effects.first == .save(keepIfSaveFails: true))
        #expect(effects.count == 2 && !unconfirmed.state.session.isActive)
    }

    @Test func theSessionsTimeWarnsThenExpiresSavingEvenIfTheSaveFails() throws {
        var machine = try machine()
        #expect(machine.handle(.sessionTime, at: Self.start + .seconds(100)) == [])
        #expect(
            machine.handle(.sessionTime, at: Self.start + .seconds(300))
                == [.save(keepIfSaveFails: true), .timeLimitWarning(secondsLeft: 300)])
        #expect(
            machine.handle(.sessionTime, at: Self.start + .seconds(600))
                == [.save(keepIfSaveFails: true), .sessionExpired])
        #expect(machine.state.session.state == .expired)
    }
}
