import KioskCore
import Testing

/// One uid cannot flood the journal; what it was not told is summarised.
@Suite struct RepeatLimiterTests {
    @Test func theFirstBurstIsLoggedTheRestCountedAndSummarisedOnceTheWindowIsOver() {
        var limiter = RepeatLimiter(burst: 3, window: .seconds(60))
        let nobody = RepeatLimiter.Key(uid: 65534, message: "Application registered")
        let other = RepeatLimiter.Key(uid: 1000, message: "Application registered")
        let logged = (0..<100).map { limiter.admit(nobody, at: .seconds(1) + .milliseconds($0)) }
        #expect(logged.count { $0 } == 3)
        let otherLogged = limiter.admit(other, at: .seconds(2))
        #expect(otherLogged, "another uid is not held back by it")
        let early = limiter.summaries(at: .seconds(30))
        #expect(early.isEmpty, "not before the window is over")
        #expect(limiter.hasPending)
        let due = limiter.summaries(at: .seconds(61))
        #expect(due.map(\.key) == [nobody])
        #expect(due.map(\.suppressed) == [97])
        let again = limiter.summaries(at: .seconds(200))
        #expect(again.isEmpty, "told once")
        let fresh = limiter.admit(nobody, at: .seconds(200))
        #expect(fresh, "a new window")
    }

    @Test func aLineAfterTheWindowKeepsTheCountDueForTheSummary() {
        var limiter = RepeatLimiter(burst: 1, window: .seconds(10))
        let key = RepeatLimiter.Key(uid: 7, message: "Wrong passcode")
        let verdicts = [0, 1, 11].map { limiter.admit(key, at: .seconds($0)) }
        #expect(verdicts == [true, false, true])
        let due = limiter.summaries(at: .seconds(21))
        #expect(due.map(\.suppressed) == [1])
    }
}
