import Foundation
import KioskClient
import Testing

@testable import KioskctlCommands

/// `kioskctl monitor`'s line and JSON object for the person at the kiosk taking the offer of
/// more time (`TimeExtended`).
@Suite struct MonitorLineTests {
    @Test func theVisitorsExtensionIsOneLineAndOneObject() throws {
        let event = ManagerEvent.timeExtended(secondsAdded: 600, extensionsLeft: 9)
        #expect(MonitorCommand.line(event) == "time extended by the visitor: 10m more, 9 extensions left")
        let data = try JSONEncoder().encode(EventJSON(event))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["event"] as? String == "time-extended")
        #expect(object["seconds_added"] as? Int == 600 && object["extensions_left"] as? Int == 9)
        #expect(object.count == 3, "\(object)")
    }

    @Test func aCleaningsStartAndEndAreOneLineAndOneObjectEach() throws {
        #expect(MonitorCommand.line(.cleaningStarted(seconds: 90)) == "cleaning: input held for 1m30s")
        #expect(MonitorCommand.line(.cleaningEnded) == "cleaning ended: input flows again")
        let started = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(EventJSON(.cleaningStarted(seconds: 90))))
                as? [String: Any])
        #expect(started["event"] as? String == "cleaning-started" && started["seconds"] as? Int == 90)
        #expect(started.count == 2, "\(started)")
        let ended = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(EventJSON(.cleaningEnded))) as? [String: Any])
        #expect(ended as NSDictionary == ["event": "cleaning-ended"])
        // The session's line says until when, while the screen is cleaned.
        var status = KioskStatus(sessionState: .inactive, activeProfile: "", sessionDeadline: nil, version: "0.1.0")
        #expect(MonitorCommand.line(.statusChanged(status)) == "session inactive")
        status.cleaningUntil = Timestamp(microseconds: Int64(Date().timeIntervalSince1970 * 1_000_000) + 30_000_000)
        let line = MonitorCommand.line(.statusChanged(status))
        #expect(line.hasPrefix("session inactive; cleaning until ") && line.hasSuffix(" left"), "\(line)")
        let session = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(EventJSON(.statusChanged(status))))
                as? [String: Any])
        #expect(session["cleaning_until_usec"] as? Int64 == status.cleaningUntil?.microseconds, "\(session)")
    }
}
