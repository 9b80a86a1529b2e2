import Foundation
import KioskCore
import Testing

/// One throttle count per source, so that no uid can throttle another (or the staff
/// member at the kiosk), each on the same schedule and persisted.
@Suite struct PasscodeThrottlesTests {
    let now = Timestamp(microseconds: 1_000_000)

    @Test func eachSourceHasItsOwnCount() throws {
        var throttles = PasscodeThrottles()
        for _ in 0..<13 { throttles.recordFailure(from: .uid(65534), at: now) }
        #expect(throws: KioskError.self) { try throttles.check(.uid(65534), at: now) }
        try throttles.check(.uid(0), at: now)
        try throttles.check(.kiosk, at: now)
        // A right passcode from one source leaves the others' counts alone.
        throttles.recordFailure(from: .kiosk, at: now)
        throttles.recordSuccess(from: .kiosk)
        #expect(throttles[.kiosk].failures == 0)
        #expect(throttles[.uid(65534)].failures == 13)
    }

    @Test func aCountFromBeforeThereWasOnePerSourceIsWhereEverySourceStarts() throws {
        let legacy =
            #"{"registry":{"applications":[]},"session":{"state":"inactive","profileName":"","pendingWarnings":[],"saved":[],"pendingPresets":[]},"throttle":{"failures":8,"lastFailure":1000000}}"#
        var state = try JSONDecoder().decode(KioskState.self, from: Data(legacy.utf8))
        #expect(state.throttles[.uid(1000)].failures == 8)
        #expect(state.throttles[.kiosk].failures == 8)
        state.throttles.recordFailure(from: .uid(1000), at: now)
        #expect(state.throttles[.uid(1000)].failures == 9)
        #expect(state.throttles[.kiosk].failures == 8)
        // Written back with both: "throttle" (what an older kioskd reads) and one per source.
        let again = try JSONDecoder().decode(KioskState.self, from: try JSONEncoder().encode(state))
        #expect(again == state)
        let json = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(state)) as? [String: Any])
        #expect((json["throttle"] as? [String: Any])?["failures"] as? Int == 8)
        #expect(((json["throttles"] as? [String: Any])?["uid 1000"] as? [String: Any])?["failures"] as? Int == 9)
        // A right passcode ends the inherited count too.
        state.throttles.recordSuccess(from: .uid(1000))
        #expect(state.throttles[.kiosk].failures == 0)
    }

    @Test func aStateFileWithAnUnknownSourceIsCorrupt() {
        let bad =
            #"{"registry":{"applications":[]},"session":{"state":"inactive","profileName":"","pendingWarnings":[],"saved":[],"pendingPresets":[]},"throttle":{"failures":0},"throttles":{"uid x":{"failures":1}}}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(KioskState.self, from: Data(bad.utf8)) }
    }

    @Test func theSourcesCountedAreCappedAndTheWeakestGoesFirst() {
        var throttles = PasscodeThrottles()
        for _ in 0..<7 { throttles.recordFailure(from: .kiosk, at: now) }
        for uid in 0..<UInt32(PasscodeThrottles.maximumSources + 10) {
            throttles.recordFailure(from: .uid(uid + 1), at: Timestamp(microseconds: Int64(uid)))
        }
        #expect(throttles.counts.count == PasscodeThrottles.maximumSources)
        #expect(throttles[.kiosk].failures == 7, "a source with more failures is kept")
    }
}
