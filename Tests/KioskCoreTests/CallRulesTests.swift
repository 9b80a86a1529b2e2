import KioskCore
import KioskTestSupport
import Testing

/// The rules the daemon's methods follow, held by KioskCore (the daemon only sequences them).
@Suite struct CallRulesTests {
    let app = try! AppID("org.example.MuseumMap")
    static let profileHash = "$y$j9T$abcdefghijklmnopqrstu.$0123456789abcdefghijklmnopqrstuvwxyzABCDE"
    static let setHash = "$y$j9T$ABCDEFGHIJKLMNOPQRSTU.$0123456789abcdefghijklmnopqrstuvwxyzabcde"

    func profile(passcodeHash: String? = nil) throws -> Profile {
        var source = """
            [restrictions."org.example.MuseumMap"]
            "org.example.MuseumMap.later" = "deny"
            """
        if let passcodeHash { source += "\n[passcode]\nhash = \"\(passcodeHash)\"\n" }
        return try ProfileParser.parse(source: source, file: "p.toml")
    }

    // MARK: Ownership

    @Test func onlyAnotherNonRootUIDNeedsAuthorizationToRegister() throws {
        var registry = Registry()
        #expect(!registry.needsAuthorization(app: app, uid: 1000))  // nobody owns it yet
        try registry.declare(app, restrictions: declarations(app.rawValue, ["a"]), uid: 1000)
        #expect(!registry.needsAuthorization(app: app, uid: 1000))  // its owner
        #expect(!registry.needsAuthorization(app: app, uid: 0))  // root
        #expect(registry.needsAuthorization(app: app, uid: 1001))  // anyone else
    }

    // MARK: Authorization

    @Test func onlyRootIsNeverAskedOfPolkit() {
        #expect(!Authorization.needsAsking(uid: 0))
        #expect(Authorization.needsAsking(uid: 1000))
        #expect(Authorization.needsAsking(uid: 65534))
    }

    @Test(
        arguments: [
            (Authorization.Answer.allowed, nil),
            (.denied, "uid 1000 may not start a session (polkit action org.kioskd.GuidedAccess1.manage-session)."),
            (.challenge, "uid 1000 may not start a session (polkit action org.kioskd.GuidedAccess1.manage-session)."),
            (.unavailable, "uid 1000 may not start a session: polkit is not running, so only root may."),
            (.failed, "uid 1000 may not start a session: polkit could not be asked."),
        ] as [(Authorization.Answer, String?)])
    func polkitsAnswerDecides(_ answer: Authorization.Answer, _ refusal: String?) {
        let error = Authorization.refusal(
            answer, uid: 1000, action: KioskWire.Action.manageSession, doing: "start a session")
        #expect(error?.message == refusal)
        #expect(error.map { $0.code == .accessDenied } ?? true)
    }

    @Test func declareHoldsToTheSameOwnershipRule() throws {
        var state = KioskState()
        try state.declare(app, restrictions: declarations(app.rawValue, ["a"]), uid: 1000, isAdmin: false)
        #expect(throws: KioskError.self) {
            try state.declare(app, restrictions: declarations(app.rawValue, ["b"]), uid: 1001, isAdmin: false)
        }
        #expect(try state.declare(app, restrictions: declarations(app.rawValue, ["b"]), uid: 0, isAdmin: false))
        #expect(try state.declare(app, restrictions: declarations(app.rawValue, ["c"]), uid: 1001, isAdmin: true))
        #expect(try state.registry.application(app).ownerUID == 1000)
    }

    @Test func theSameListAgainIsANoOp() throws {
        var state = KioskState()
        let list = declarations(app.rawValue, ["a", "b"])
        #expect(try state.declare(app, restrictions: list, uid: 1000, isAdmin: false))
        let before = state
        #expect(try !state.declare(app, restrictions: list, uid: 1000, isAdmin: false))
        #expect(state == before)
    }

    @Test func theDeclarationCountIsCheckedBeforeReading() {
        #expect(throws: Never.self) { try Registry.checkDeclarationCount(KioskWire.Limits.restrictionsPerApp, of: app) }
        #expect {
            try Registry.checkDeclarationCount(KioskWire.Limits.restrictionsPerApp + 1, of: app)
        } throws: { ($0 as? KioskError)?.code == .invalidArgument }
    }

    // MARK: The initial state of a restriction declared during a session

    @Test func aRestrictionFirstDeclaredDuringASessionStartsInItsPreset() throws {
        var state = KioskState()
        _ = try state.session.start(
            profileName: "p", profile: profile(), at: ManualClock().now(), registry: &state.registry)
        try state.declare(app, restrictions: declarations(app.rawValue, ["later", "other"]), uid: 1000, isAdmin: false)
        #expect(try state.registry.state(of: RestrictionID("org.example.MuseumMap.later"), in: app) == .deny)
        #expect(try state.registry.state(of: RestrictionID("org.example.MuseumMap.other"), in: app) == .allow)
        _ = try state.endSession(.forced)
        #expect(try state.registry.state(of: RestrictionID("org.example.MuseumMap.later"), in: app) == .allow)
    }

    @Test func withoutASessionEveryNewRestrictionStartsAllowed() throws {
        var state = KioskState()
        try state.declare(app, restrictions: declarations(app.rawValue, ["later"]), uid: 1000, isAdmin: false)
        #expect(try state.registry.state(of: RestrictionID("org.example.MuseumMap.later"), in: app) == .allow)
    }

    // MARK: Which session a passcode ends

    @Test func aPasscodeEndsOnlyTheSessionItWasCheckedFor() throws {
        let clock = ManualClock()
        var state = KioskState()
        #expect(state.session.identity == nil)
        _ = try state.session.start(profileName: "p", profile: profile(), at: clock.now(), registry: &state.registry)
        let checked = state.session.identity
        #expect(checked != nil)
        state.throttles.recordFailure(from: .uid(1000), at: clock.now())

        var other = state  // the session ended and another of the same profile started later
        _ = try other.endSession(.forced)
        clock.advance(by: .seconds(1))
        _ = try other.session.start(profileName: "p", profile: profile(), at: clock.now(), registry: &other.registry)
        #expect {
            try other.endSession(.passcode(checkedFor: checked, from: .uid(1000)))
        } throws: { ($0 as? KioskError)?.code == .noSession }
        #expect(other.session.isActive && other.throttles[.uid(1000)].failures == 1)

        _ = try state.endSession(.passcode(checkedFor: checked, from: .uid(1000)))
        #expect(!state.session.isActive)
        #expect(state.throttles[.uid(1000)].failures == 0)  // a right passcode resets the count
    }

    @Test func forceEndingLeavesTheThrottleAndNeedsASession() throws {
        var state = KioskState()
        #expect { try state.endSession(.forced) } throws: { ($0 as? KioskError)?.code == .noSession }
        _ = try state.session.start(
            profileName: "p", profile: profile(), at: ManualClock().now(), registry: &state.registry)
        state.throttles.recordFailure(from: .uid(1000), at: ManualClock().now())
        _ = try state.endSession(.forced)
        #expect(!state.session.isActive && state.throttles[.uid(1000)].failures == 1)
    }

    @Test func aSessionStartsOnlyWhenNoneIsActive() throws {
        var state = KioskState()
        try state.session.checkCanStart()
        #expect { try state.session.checkActive() } throws: { ($0 as? KioskError)?.code == .noSession }
        _ = try state.session.start(
            profileName: "p", profile: profile(), at: ManualClock().now(), registry: &state.registry)
        try state.session.checkActive()
        #expect { try state.session.checkCanStart() } throws: { ($0 as? KioskError)?.code == .sessionActive }
    }

    // MARK: Which hash a passcode is compared with, and what "no passcode set" means

    @Test func aProfilesHashEndsItsSessionBeforeTheSetOne() throws {
        var state = KioskState()
        state.passcodeHash = Self.setHash
        #expect { try PasscodeCheck(.endSession, in: state, activeProfile: nil) } throws: {
            ($0 as? KioskError)?.code == .noSession
        }
        let withHash = try profile(passcodeHash: Self.profileHash)
        _ = try state.session.start(
            profileName: "p", profile: withHash, at: ManualClock().now(), registry: &state.registry)
        #expect(try PasscodeCheck(.endSession, in: state, activeProfile: withHash).expectedHash == Self.profileHash)
        #expect(try PasscodeCheck(.endSession, in: state, activeProfile: profile()).expectedHash == Self.setHash)
        #expect(try PasscodeCheck(.endSession, in: state, activeProfile: nil).expectedHash == Self.setHash)
        #expect(try PasscodeCheck(.setPasscode, in: state, activeProfile: withHash).expectedHash == Self.setHash)
    }

    @Test func withNoHashEndSessionIsWrongAndSetPasscodeIgnoresTheCurrent() {
        var asked = 0
        let verify: (String, String) -> Bool = { _, _ in
            asked += 1; return true
        }
        let end = PasscodeCheck(purpose: .endSession, expectedHash: nil)
        #expect(!end.accepts("1234", verify: verify))
        #expect(end.wrongPasscode.code == .wrongPasscode && end.wrongPasscode.message.contains("ForceEndSession"))
        #expect(PasscodeCheck(purpose: .setPasscode, expectedHash: nil).accepts("anything", verify: verify))
        #expect(asked == 0)
    }

    @Test func withAHashTheVerifierDecides() {
        for purpose in [PasscodeCheck.Purpose.endSession, .setPasscode] {
            let check = PasscodeCheck(purpose: purpose, expectedHash: Self.setHash)
            #expect(check.accepts("1234") { $0 == "1234" && $1 == Self.setHash })
            #expect(!check.accepts("0000") { $0 == "1234" && $1 == Self.setHash })
            #expect(check.wrongPasscode.message == "The passcode is wrong.")
        }
    }

    @Test func settingThePasscodeResetsTheThrottle() {
        var state = KioskState()
        state.throttles.recordFailure(from: .uid(1000), at: ManualClock().now())
        state.setPasscode(hash: Self.setHash, from: .uid(1000))
        #expect(state.passcodeHash == Self.setHash && state.throttles[.uid(1000)].failures == 0)
    }

    @Test(arguments: [
        ("", false), ("1", true), (String(repeating: "x", count: 511), true),
        (String(repeating: "x", count: 512), false), ("12\t34", false), ("pässcode", true),
    ])
    func aNewPasscode(_ passcode: String, valid: Bool) {
        #expect(((try? PasscodeCheck.validateNew(passcode)) != nil) == valid)
    }

    // MARK: The restored session's fallback

    @Test func theRestoreProblemNamesTheFallbackGesture() {
        #expect(Profile.ExitGesture.fallback.spokenDescription == "three presses of the power button")
        #expect(
            Profile.ExitGesture(key: "KEY_VOLUMEUP", presses: 5, within: .seconds(1)).spokenDescription
                == "five presses of the volume-up button")
        let problem = KioskState.restoreProblem(profileName: "museum", reason: "gone")
        #expect(
            problem
                == "The session's profile \"museum\" could not be loaded, so every key, button and touch stays locked until the session ends (the exit gesture is three presses of the power button): gone"
        )
    }
}
