import KioskAPI
import KioskCore
import KioskInput
import Testing

/// ``SessionMachine`` alone, on explicit times: the bus calls' changes to the session (start, end,
/// passcode, reload, an admin's time-limit changes), the restore after a restart, and the
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

    // MARK: Starting and ending

    static let app = try! AppID("org.example.MuseumMap")

    /// Ten minutes, warnings at 5 and 1 minutes left, the map's controls denied.
    static let museum = """
        [restrictions."org.example.MuseumMap"]
        "org.example.MuseumMap.controls" = "deny"
        [session]
        time-limit = "10m"
        warnings = ["5m", "1m"]
        """

    static func loaded(_ source: String = museum) throws -> SessionMachine.LoadedProfile {
        SessionMachine.LoadedProfile(profile: try ProfileParser.parse(source: source, file: "museum.toml"), source: source)
    }

    /// The restriction states an effect says went to, as "id state".
    static func changes(_ effect: SessionMachine.Effect?) -> [String] {
        switch effect {
        case .sessionStarted(let changes)?, .sessionEnded(let changes)?, .profileReloaded(let changes)?:
            changes.map { "\($0.restriction) \($0.state.rawValue)" }
        default: []
        }
    }

    /// No session yet; the museum map has declared its controls.
    func idle() throws -> SessionMachine {
        var state = KioskState()
        try state.declare(Self.app, restrictions: declarations(Self.app.rawValue, ["controls"]), uid: 1000, isAdmin: false)
        return SessionMachine(state: state, profile: nil)
    }

    /// A session of the museum profile, started at `start`.
    func started(trial: Duration? = nil, requestedBy: AppID? = nil) throws -> SessionMachine {
        var machine = try idle()
        _ = try machine.apply(.start("museum", Self.loaded(), trial: trial, requestedBy: requestedBy), at: Self.start)
        return machine
    }

    @Test func aStartSavesThenPresetsAndTakesTheProfile() throws {
        var machine = try idle()
        let effects = try machine.apply(.start("museum", Self.loaded()), at: Self.start)
        #expect(effects.count == 2 && effects.first == .save(keepIfSaveFails: false))
        #expect(Self.changes(effects.last) == ["org.example.MuseumMap.controls deny"])
        #expect(machine.state.session.state == .active && machine.state.session.deadline == Self.start + .seconds(600))
        #expect(machine.profile == (try Self.loaded()).profile && machine.profileSource == Self.museum)
        // A second start is the session's to refuse, and changes nothing.
        let before = machine
        #expect(throws: KioskError.self) { try machine.apply(.start("museum", Self.loaded()), at: Self.start) }
        #expect(machine == before)
    }

    @Test func aForcedEndClosesAnOpenPromptBeforeTheLocksGoBack() throws {
        var machine = try started()
        _ = machine.handle(.exitGesture, at: Self.start + .seconds(1))
        #expect(machine.prompt.state == .open)
        let effects = try machine.apply(.end(.forced), at: Self.start + .seconds(2))
        #expect(effects.count == 3 && effects.prefix(2) == [.save(keepIfSaveFails: false), .promptClosed(.ended)])
        #expect(Self.changes(effects.last) == ["org.example.MuseumMap.controls allow"])
        #expect(machine.prompt.state == .closed && machine.profile == nil && !machine.state.session.isActive)
        // With the prompt closed, an end closes nothing.
        var quiet = try started()
        #expect(try quiet.apply(.end(.forced), at: Self.start).dropFirst().first != .promptClosed(.ended))
    }

    @Test func onlyTheRequestingAppReleasesItsSession() throws {
        var machine = try started(requestedBy: Self.app)
        let before = machine
        #expect(throws: KioskError.self) {
            try machine.apply(.end(.released(by: AppID("org.example.Other"))), at: Self.start)
        }
        #expect(machine == before)
        #expect(try machine.apply(.end(.released(by: Self.app)), at: Self.start).first == .save(keepIfSaveFails: false))
        #expect(!machine.state.session.isActive)
    }

    // MARK: A passcode over the bus

    @Test func aBusPasscodeIsCheckedThenJudgedAgainstItsCallersCount() throws {
        var machine = try started()
        #expect(try machine.apply(.passcode("1234"), at: Self.start) == [.check("1234")])
        let session = machine.state.session.identity
        let caller = PasscodeSource.uid(1000)
        #expect(
            machine.handle(.judged(.wrong, checkedFor: session, from: caller), at: Self.start)
                == [.save(keepIfSaveFails: true), .wrongPasscode(from: caller, failures: 1)])
        #expect(machine.state.throttles[caller].failures == 1 && machine.state.throttles[.kiosk].failures == 0)
        // A right passcode checked for a session that has ended meanwhile ends nothing.
        #expect(machine.handle(.judged(.right, checkedFor: nil, from: caller), at: Self.start).first?.isRefusal == true)
        #expect(machine.state.session.isActive)
        let effects = machine.handle(.judged(.right, checkedFor: session, from: caller), at: Self.start)
        #expect(effects.first == .save(keepIfSaveFails: false) && !machine.state.session.isActive)
        #expect(machine.state.throttles[caller].failures == 0)
        // Without a session there is nothing to check the passcode for.
        #expect(throws: KioskError.self) { try machine.apply(.passcode("1234"), at: Self.start) }
    }

    // MARK: Reloads and restarts: one rule

    @Test func aReloadTakesTheEditFromTheStartAndPromisesNoWarning() throws {
        var machine = try started()
        // 8:30 in, the limit edited to nine minutes: the end is 9:00, both marks are behind, so
        // nothing is due now, nothing pending, and only the expiry is left.
        let now = Self.start + .seconds(510)
        let edited = Self.museum.replacing("10m", with: "9m")
        let effects = try machine.apply(.reload(.success(Self.loaded(edited)), readFor: machine.state.session.identity), at: now)
        #expect(effects == [.save(keepIfSaveFails: false), .profileReloaded([])])
        #expect(machine.state.session.deadline == Self.start + .seconds(540))
        #expect(machine.state.session.pendingWarnings == [])
        #expect(machine.profileSource == edited && machine.state.session.retainedProfileSource == nil)
        #expect(machine.handle(.sessionTime, at: Self.start + .seconds(540)) == [.save(keepIfSaveFails: true), .sessionExpired])
        // A profile read for another session reloads nothing.
        let before = machine
        #expect(throws: KioskError.self) {
            try machine.apply(.reload(.success(Self.loaded()), readFor: nil), at: now)
        }
        #expect(machine == before)
    }

    /// A reload puts the file's presets in force: one added or changed applies now (signalled),
    /// one removed goes back to the state it had before the session (what the end would restore),
    /// one unchanged leaves an admin's change during the session alone; the end restores each
    /// as before the session (docs/dbus-api.md § Changing a live session).
    @Test func aReloadAppliesTheEditedPresetsAndTheEndStillRestores() throws {
        var state = KioskState()
        try state.declare(
            Self.app, restrictions: declarations(Self.app.rawValue, ["controls", "share", "print", "zoom"]), uid: 1000,
            isAdmin: false)
        func id(_ name: String) throws -> RestrictionID { try RestrictionID("org.example.MuseumMap.\(name)") }
        try state.registry.setState(.deny, of: id("share"), in: Self.app)  // before the session
        var machine = SessionMachine(state: state, profile: nil)
        let withZoom = Self.museum.replacing(
            #""org.example.MuseumMap.controls" = "deny""#,
            with: #""org.example.MuseumMap.controls" = "deny"\#n"org.example.MuseumMap.zoom" = "deny""#)
        _ = try machine.apply(.start("museum", Self.loaded(withZoom)), at: Self.start)
        // An admin allows zoom during the session.
        try machine.state.registry.setState(.allow, of: id("zoom"), in: Self.app)
        machine.state.session.noteAdminChange(of: try id("zoom"), in: Self.app)

        // The edit: controls removed, share preset allow, print added, zoom unchanged, a preset
        // of a restriction not declared yet.
        let edited = """
            [restrictions."org.example.MuseumMap"]
            "org.example.MuseumMap.share" = "allow"
            "org.example.MuseumMap.print" = "deny"
            "org.example.MuseumMap.zoom" = "deny"
            "org.example.MuseumMap.later" = "deny"
            [session]
            time-limit = "10m"
            warnings = ["5m", "1m"]
            """
        let effects = try machine.apply(
            .reload(.success(Self.loaded(edited)), readFor: machine.state.session.identity), at: Self.start + .seconds(5))
        #expect(effects.count == 2 && effects.first == .save(keepIfSaveFails: false))
        #expect(
            Self.changes(effects.last) == [
                "org.example.MuseumMap.share allow", "org.example.MuseumMap.print deny",
                "org.example.MuseumMap.controls allow",
            ])
        let registry = machine.state.registry
        #expect(try registry.state(of: id("controls"), in: Self.app) == .allow)
        #expect(try registry.state(of: id("share"), in: Self.app) == .allow)
        #expect(try registry.state(of: id("print"), in: Self.app) == .deny)
        #expect(try registry.state(of: id("zoom"), in: Self.app) == .allow, "the admin's change stands")

        // A restriction the reload preset, declared later in the session, starts as preset.
        #expect(machine.state.session.initialState(for: try id("later"), in: Self.app) == .deny)

        // The end: each back to its state before the session; the admin's zoom stays.
        let ended = try machine.apply(.end(.forced), at: Self.start + .seconds(10))
        #expect(Self.changes(ended.last).sorted() == ["org.example.MuseumMap.print allow", "org.example.MuseumMap.share deny"])
        #expect(try machine.state.registry.state(of: id("controls"), in: Self.app) == .allow)
        #expect(try machine.state.registry.state(of: id("zoom"), in: Self.app) == .allow)
    }

    @Test func aFailedReloadAndARestartKeepTheLastGoodProfileAlike() throws {
        var machine = try started()
        let now = Self.start + .seconds(60)
        let broken = KioskError(.invalidArgument, "The profile \"museum\" is not valid")
        let policy = machine.state.filterPolicy(profile: machine.profile)
        let session = machine.state.session
        let effects = try machine.apply(.reload(.failure(broken), readFor: session.identity), at: now)
        #expect(effects.count == 3 && effects.first == .save(keepIfSaveFails: false))
        #expect(effects[1] == .lastGoodKept(reason: machine.reloadWarning) && effects[2].isRefusal)
        #expect(machine.state.filterPolicy(profile: machine.profile) == policy)
        #expect(machine.state.session.deadline == session.deadline)
        #expect(machine.state.session.pendingWarnings == session.pendingWarnings)
        #expect(machine.state.session.retainedProfileSource == Self.museum)

        // A restart with the file still broken: the kept text is in force again, by the same rule.
        var restarted = SessionMachine(state: machine.state, profile: nil)
        let restored = restarted.handle(.restored(.failure(broken), lastGood: try Self.loaded()), at: now)
        #expect(restored == [.lastGoodKept(reason: machine.reloadWarning)])
        #expect(restarted.state == machine.state)
        #expect(restarted.state.filterPolicy(profile: restarted.profile) == policy)
        #expect(restarted.reloadWarning == machine.reloadWarning && restarted.restoreProblem == "")
    }

    @Test func aRestartWithoutALastGoodCopyFailsClosed() throws {
        let saved = try started().state
        var restarted = SessionMachine(state: saved, profile: nil)
        let effects = restarted.handle(.restored(.failure(KioskError(.unknownProfile, "gone")), lastGood: nil), at: Self.start)
        #expect(effects == [.strictestLocks(reason: "gone")])
        #expect(restarted.profile == nil && !restarted.restoreProblem.isEmpty)
        var good = SessionMachine(state: saved, profile: nil)
        #expect(good.handle(.restored(.success(try Self.loaded()), lastGood: nil), at: Self.start) == [])
        #expect(good.profile == (try Self.loaded()).profile)
    }

    @Test func aTrialRunningOutClosesAnOpenPromptFirst() throws {
        var machine = try started(trial: .seconds(60))
        _ = machine.handle(.exitGesture, at: Self.start + .seconds(30))
        let effects = machine.handle(.sessionTime, at: Self.start + .seconds(60))
        #expect(effects.count == 3 && effects.prefix(2) == [.save(keepIfSaveFails: true), .promptClosed(.ended)])
        #expect(machine.prompt.state == .closed && !machine.state.session.isActive)
    }

    @Test func adoptingAPlannedStepKeepsTheLivePrompt() throws {
        var live = try started()
        var planned = live
        _ = try planned.apply(.end(.forced), at: Self.start)
        // Meanwhile, while the end was saved, the exit gesture opened the prompt.
        _ = live.handle(.exitGesture, at: Self.start)
        live.adopt(planned)
        #expect(!live.state.session.isActive && live.prompt.state == .open)
        #expect(live.handle(.sessionChanged, at: Self.start) == [.promptClosed(.ended)])
    }
}

extension SessionMachine.Effect {
    var isRefusal: Bool { if case .refused = self { true } else { false } }
}
