import BusTestSupport
import Foundation
import Glibc
import KioskdProcessTestSupport
import SystemdKit
import Testing

/// Losing the bus: a kioskd whose bus goes away says so and exits non-zero, so
/// that systemd starts it again; the session's locks come back with it.
@Suite(.serialized) struct KioskdBusLossTests {
    @Test func kioskdExitsNonZeroWhenTheBusGoesAwayAndItsSessionComesBackLocked() throws {
        try withKioskd(profiles: ["museum": KioskdSessionTests.museum]) { kioskd, bus in
            let client = try ManagerClient(address: bus.address)
            try KioskdBusTests.registerSample(client)
            try client.call("SetPasscode", [.string(""), .string("1234")])
            try client.call("StartSession", [.string("museum")])

            try bus.restart()  // dbus-daemon stops (every connection drops) and a new one starts
            // Waits for the exit itself (a kioskd that stays deaf is killed after 10 s: 137).
            #expect(kioskd.waitForExit() == 1)
            #expect(kioskd.log.contains("The bus connection was lost"), "\(kioskd.log)")

            // What systemd's Restart= does: the session is still there, every lock in place.
            try kioskd.start()
            let again = try ManagerClient(address: bus.address)
            #expect(try again.property("SessionState") == .string("active"))
            #expect(try again.state(KioskdSessionTests.app, KioskdSessionTests.share) == "deny")
            try again.call("EndSession", [.string("1234")])
            #expect(try again.state(KioskdSessionTests.app, KioskdSessionTests.share) == "allow")
        }
    }
}
