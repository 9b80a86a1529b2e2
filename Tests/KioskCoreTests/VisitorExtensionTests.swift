import Foundation
import KioskAPI
import KioskCore
import Testing

/// The offer of more time at the kiosk (`[session] visitor-extensions`) on ``SessionMachine``
/// alone, on explicit times: offered at `warn-before`, taken, taken until none are left, refused
/// then, silence letting the limit expire, a restart during the offer, and the ways it goes.
@Suite struct VisitorExtensionTests {
    static let start = Timestamp(microseconds: 1_700_000_000_000_000)

    /// A 3-minute limit the visitor may extend 10 times by 2 minutes, offered 30 s before the end.
    static func profile() throws -> Profile {
        try ProfileParser.parse(
            source: """
                [session]
                time-limit = "3m"
                visitor-extensions = 10
                extend-by = "2m"
                warn-before = "30s"
                """, file: "visitor.toml")
    }

    func machine() throws -> SessionMachine {
        let profile = try Self.profile()
        var state = KioskState()
        _ = try state.startSession(profileName: "visitor", profile: profile, at: Self.start)
        return SessionMachine(state: state, profile: profile)
    }

    func at(_ seconds: Int) -> Timestamp { Self.start + .seconds(seconds) }

    @Test func offeredAtWarnBeforeWithAWarningThenTakenMovesTheEndAndCounts() throws {
        var machine = try machine()
        #expect(machine.handle(.sessionTime, at: at(149)) == [])
        #expect(machine.offer == nil)
        #expect(machine.handle(.visitorExtends, at: at(149)) == [], "nothing offered yet: nothing taken")
        #expect(
            machine.handle(.sessionTime, at: at(150))
                == [.save(keepIfSaveFails: true), .timeLimitWarning(secondsLeft: 30), .timeOfferChanged])
        #expect(machine.offer == .init(extensionsLeft: 10))
        #expect(
            machine.handle(.visitorExtends, at: at(160))
                == [
                    .save(keepIfSaveFails: false), .visitorExtended(by: .seconds(120), extensionsLeft: 9),
                    .timeOfferChanged,
                ])
        #expect(machine.offer == nil)
        #expect(machine.state.session.deadline == at(300), "from the current end, not from now")
        #expect(machine.state.session.visitorExtensionsUsed == 1)
        // The offer's mark is pending again: offered once more 30 s before the new end.
        #expect(machine.handle(.sessionTime, at: at(269)) == [])
        #expect(
            machine.handle(.sessionTime, at: at(270))
                == [.save(keepIfSaveFails: true), .timeLimitWarning(secondsLeft: 30), .timeOfferChanged])
        #expect(machine.offer == .init(extensionsLeft: 9))
    }

    @Test func extendedTenTimesThenTheOfferSaysNoneAreLeftAndTheLimitExpires() throws {
        var machine = try machine()
        var end = 180
        for taken in 1...10 {
            _ = machine.handle(.sessionTime, at: at(end - 30))
            #expect(machine.offer?.extensionsLeft == 11 - taken)
            let effects = machine.handle(.visitorExtends, at: at(end - 20))
            #expect(effects.contains(.visitorExtended(by: .seconds(120), extensionsLeft: 10 - taken)), "\(effects)")
            end += 120
        }
        #expect(machine.state.session.visitorExtensionsUsed == 10)
        #expect(machine.handle(.sessionTime, at: at(end - 30)).contains(.timeOfferChanged))
        #expect(machine.offer == .init(extensionsLeft: 0), "up, so that the screen says none are left")
        #expect(machine.handle(.visitorExtends, at: at(end - 10)) == [], "refused at the limit: nothing changes")
        #expect(machine.state.session.deadline == at(end))
        // Silence: the limit expires as without extensions, and the offer goes with it.
        #expect(
            machine.handle(.sessionTime, at: at(end))
                == [.save(keepIfSaveFails: true), .sessionExpired, .timeOfferChanged])
        #expect(machine.offer == nil && machine.state.session.state == .expired)
        #expect(machine.handle(.visitorExtends, at: at(end + 1)) == [], "an expired session is not extended")
    }

    @Test func aRestartDuringTheOfferKeepsTheEndAndTheCountAndOffersAgain() throws {
        var machine = try machine()
        _ = machine.handle(.sessionTime, at: at(150))
        _ = machine.handle(.visitorExtends, at: at(155))
        _ = machine.handle(.sessionTime, at: at(270))
        #expect(machine.offer == .init(extensionsLeft: 9))
        // What kioskd wrote, read back by a new kioskd: the offer is in memory only.
        let data = try JSONEncoder().encode(machine.state)
        let state = try JSONDecoder().decode(KioskState.self, from: data)
        #expect(state.session.deadline == at(300) && state.session.visitorExtensionsUsed == 1)
        let profile = try Self.profile()
        var restarted = SessionMachine(state: state, profile: nil)
        _ = restarted.handle(.restored(.success(.init(profile: profile, source: "")), lastGood: nil), at: at(275))
        #expect(restarted.offer == nil)
        #expect(restarted.handle(.sessionTime, at: at(275)) == [.save(keepIfSaveFails: true), .timeOfferChanged])
        #expect(restarted.offer == .init(extensionsLeft: 9), "not reset: the same count, the same end")
        #expect(restarted.state.session.deadline == at(300))
    }

    @Test func theOfferGoesWhenStaffEndTheSessionOrAnAdminMovesTheEnd() throws {
        var moved = try machine()
        _ = moved.handle(.sessionTime, at: at(150))
        #expect(
            try moved.apply(.extend(by: .seconds(600)), at: at(151))
                == [.save(keepIfSaveFails: false), .deadlineChanged, .timeOfferChanged])
        #expect(moved.offer == nil && moved.state.session.visitorExtensionsUsed == 0)
        var ended = try machine()
        _ = ended.handle(.sessionTime, at: at(150))
        let effects = try ended.apply(.end(.forced), at: at(151))
        #expect(effects.contains(.timeOfferChanged) && ended.offer == nil)
        #expect(ended.handle(.visitorExtends, at: at(152)) == [], "a session staff ended is not extended")
    }

    @Test func withoutVisitorExtensionsThereIsNoOffer() throws {
        var profile = Profile()
        profile.session.timeLimit = .seconds(180)
        var state = KioskState()
        _ = try state.startSession(profileName: "p", profile: profile, at: Self.start)
        var machine = SessionMachine(state: state, profile: profile)
        #expect(machine.handle(.sessionTime, at: at(170)) == [])
        #expect(machine.offer == nil && machine.handle(.visitorExtends, at: at(171)) == [])
    }

    @Test func aStateFileWithMoreExtensionsThanAnyProfileAllowsIsRefused() throws {
        var machine = try machine()
        _ = machine.handle(.sessionTime, at: at(150))
        _ = machine.handle(.visitorExtends, at: at(151))
        let text = String(decoding: try JSONEncoder().encode(machine.state), as: UTF8.self)
        #expect(text.contains("\"visitorExtensionsTaken\":1"), "\(text)")
        let corrupt = text.replacingOccurrences(
            of: "\"visitorExtensionsTaken\":1", with: "\"visitorExtensionsTaken\":101")
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(KioskState.self, from: Data(corrupt.utf8)) }
    }
}
