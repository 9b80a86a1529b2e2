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
}
