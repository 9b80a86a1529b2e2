import KioskCore
import KioskTestSupport
import Testing

@Suite struct PasscodeThrottleTests {
    /// The documented schedule (README § Passcode throttle).
    @Test(arguments: [
        (1, 0), (4, 0), (5, 0), (6, 30), (7, 60), (8, 120), (9, 240), (10, 480), (11, 960), (12, 1920), (13, 3600),
        (40, 3600), (10_000, 3600),
    ])
    func schedule(failures: Int, seconds: Int) {
        #expect(PasscodeThrottle.delay(afterFailures: failures) == .seconds(seconds))
    }

    @Test func fiveFreeAttemptsThenAWaitThatRunsDown() throws {
        let clock = ManualClock()
        var throttle = PasscodeThrottle()
        for _ in 0..<5 {
            try throttle.check(at: clock.now())
            throttle.recordFailure(at: clock.now())
        }
        try throttle.check(at: clock.now())
        throttle.recordFailure(at: clock.now())  // the 6th
        #expect {
            try throttle.check(at: clock.now())
        } throws: { error in
            let error = error as? KioskError
            return error?.code == .throttled && error?.message.contains("try again in 30 s") == true
        }
        clock.advance(by: .seconds(20))
        #expect(throttle.waitRemaining(at: clock.now()) == .seconds(10))
        clock.advance(by: .seconds(10))
        try throttle.check(at: clock.now())
        throttle.recordSuccess()
        #expect(throttle.failures == 0)
        try throttle.check(at: clock.now())
    }

    @Test func settingTheClockBackDoesNotShortenTheWait() {
        let clock = ManualClock()
        var throttle = PasscodeThrottle()
        for _ in 0..<7 { throttle.recordFailure(at: clock.now()) }
        clock.advance(by: .seconds(-3600))
        #expect(throttle.waitRemaining(at: clock.now()) == .seconds(60))
    }

    @Test func theCounterIsPartOfTheState() throws {
        var state = KioskState()
        state.throttles.recordFailure(from: .uid(1000), at: Timestamp(microseconds: 5))
        #expect(state != KioskState())
    }
}

@Suite struct GuidedSessionTests {
    let app = try! AppID("org.example.MuseumMap")

    func registry() throws -> Registry {
        var registry = Registry()
        try registry.declare(app, restrictions: declarations(app.rawValue, ["controls", "zoom", "audio"]), uid: 1000)
        try registry.setState(.deny, of: RestrictionID("org.example.MuseumMap.zoom"), in: app)
        return registry
    }

    func profile(limit: String? = nil, warnings: [String] = []) throws -> Profile {
        var source = """
            [restrictions."org.example.MuseumMap"]
            "org.example.MuseumMap.controls" = "deny"
            "org.example.MuseumMap.zoom" = "allow"
            "org.example.MuseumMap.later" = "deny"
            """
        if let limit {
            source +=
                "\n[session]\ntime-limit = \"\(limit)\"\nwarnings = [\(warnings.map { "\"\($0)\"" }.joined(separator: ", "))]\n"
        }
        return try ProfileParser.parse(source: source, file: "p.toml")
    }

    @Test func startAppliesPresetsAndEndRestoresThem() throws {
        let clock = ManualClock()
        var registry = try registry()
        let before = registry
        var session = GuidedSession()
        let applied = try session.start(
            profileName: "museum-map", profile: profile(), at: clock.now(), registry: &registry)
        #expect(
            applied.map(\.restriction.rawValue) == ["org.example.MuseumMap.controls", "org.example.MuseumMap.zoom"])
        #expect(session.state == .active && session.profileName == "museum-map" && session.deadline == nil)
        #expect(try registry.state(of: RestrictionID("org.example.MuseumMap.controls"), in: app) == .deny)
        #expect(try registry.state(of: RestrictionID("org.example.MuseumMap.zoom"), in: app) == .allow)

        let restored = try session.end(registry: &registry)
        #expect(restored.count == 2)
        #expect(registry == before)
        #expect(session == GuidedSession())
    }

    @Test func anAdminChangeDuringTheSessionSurvivesItsEnd() throws {
        var registry = try registry()
        var session = GuidedSession()
        _ = try session.start(profileName: "p", profile: profile(), at: ManualClock().now(), registry: &registry)
        let controls = try RestrictionID("org.example.MuseumMap.controls")
        try registry.setState(.allow, of: controls, in: app)
        session.noteAdminChange(of: controls, in: app)
        _ = try session.end(registry: &registry)
        #expect(try registry.state(of: controls, in: app) == .allow)
        #expect(try registry.state(of: RestrictionID("org.example.MuseumMap.zoom"), in: app) == .deny)
    }

    @Test func aPresetForARestrictionDeclaredLaterAppliesWhenItIsDeclared() throws {
        var registry = try registry()
        var session = GuidedSession()
        _ = try session.start(profileName: "p", profile: profile(), at: ManualClock().now(), registry: &registry)
        let later = try RestrictionID("org.example.MuseumMap.later")
        try registry.declare(
            app, restrictions: declarations(app.rawValue, ["controls", "zoom", "audio", "later"]), uid: 1000
        ) {
            session.initialState(for: $0, in: app)
        }
        #expect(try registry.state(of: later, in: app) == .deny)
        _ = try session.end(registry: &registry)
        #expect(try registry.state(of: later, in: app) == .allow)
    }

    @Test func startingTwiceIsSessionActiveAndEndingNothingIsNoSession() throws {
        var registry = try registry()
        var session = GuidedSession()
        #expect { try session.end(registry: &registry) } throws: { ($0 as? KioskError)?.code == .noSession }
        _ = try session.start(profileName: "p", profile: profile(), at: ManualClock().now(), registry: &registry)
        let during = (session, registry)
        #expect {
            try session.start(profileName: "q", profile: profile(), at: ManualClock().now(), registry: &registry)
        } throws: { ($0 as? KioskError)?.code == .sessionActive }
        #expect(session == during.0 && registry == during.1)
    }

    @Test func timeLimitWarnsThenExpiresAndOnlyEndLeavesExpired() throws {
        let clock = ManualClock()
        var registry = try registry()
        var session = GuidedSession()
        _ = try session.start(
            profileName: "p", profile: profile(limit: "10m", warnings: ["5m", "1m"]), at: clock.now(),
            registry: &registry)
        #expect(session.deadline == clock.now() + .seconds(600))
        #expect(session.nextWakeup == clock.now() + .seconds(300))
        clock.advance(by: .seconds(299))
        #expect(session.advance(to: clock.now()) == [])
        clock.advance(by: .seconds(1))
        #expect(session.advance(to: clock.now()) == [.warning(secondsLeft: 300)])
        #expect(session.nextWakeup == clock.now() + .seconds(240))
        clock.advance(by: .seconds(240))
        #expect(session.advance(to: clock.now()) == [.warning(secondsLeft: 60)])
        clock.advance(by: .seconds(60))
        #expect(session.advance(to: clock.now()) == [.expired])
        #expect(session.state == .expired && session.nextWakeup == nil)
        clock.advance(by: .seconds(3600))
        #expect(session.advance(to: clock.now()) == [])
        #expect(session.state == .expired)
        _ = try session.end(registry: &registry)
        #expect(session.state == .inactive)
    }

    @Test func aLateWakeupSkipsStaleWarningsButExpires() throws {
        let clock = ManualClock()
        var registry = try registry()
        var session = GuidedSession()
        _ = try session.start(
            profileName: "p", profile: profile(limit: "10m", warnings: ["5m", "1m"]), at: clock.now(),
            registry: &registry)
        clock.advance(by: .seconds(570))  // 30 s left: both marks are due, one warning says what is left
        #expect(session.advance(to: clock.now()) == [.warning(secondsLeft: 30)])
        #expect(session.nextWakeup == clock.now() + .seconds(30))
        clock.advance(by: .seconds(3600))
        #expect(session.advance(to: clock.now()) == [.expired])
    }

    /// A deadline moved during the session sends the profile's warnings again for the
    /// marks still ahead of the new end; one moved into the past expires the session at once.
    @Test func aMovedDeadlineRearmsTheWarningsAheadOfIt() throws {
        var registry = Registry()
        let clock = ManualClock()
        var session = GuidedSession()
        let warnings: [Duration] = [.seconds(300), .seconds(60)]
        _ = try session.start(
            profileName: "p", profile: profile(limit: "10m", warnings: ["5m", "1m"]), at: clock.now(),
            registry: &registry)
        clock.advance(by: .seconds(301))
        #expect(session.advance(to: clock.now()) == [.warning(secondsLeft: 299)])
        // Ten minutes more: 14 m 59 s left; both marks are ahead again.
        let later = try session.extendedDeadline(by: .seconds(600), at: clock.now())
        #expect(try session.setDeadline(later, warnings: warnings, at: clock.now()) == [])
        #expect(session.pendingWarnings == warnings)
        clock.advance(by: .seconds(600))
        #expect(session.advance(to: clock.now()) == [.warning(secondsLeft: 299)])
        // Into the past: expired now; more time from now revives it.
        #expect(try session.setDeadline(clock.now() + .seconds(-1), warnings: warnings, at: clock.now()) == [.expired])
        #expect(session.state == .expired)
        let revived = try session.extendedDeadline(by: .seconds(120), at: clock.now())
        #expect(revived == clock.now() + .seconds(120))
        #expect(try session.setDeadline(revived, warnings: warnings, at: clock.now()) == [])
        #expect(session.state == .active && session.pendingWarnings == [.seconds(60)])
    }
}
