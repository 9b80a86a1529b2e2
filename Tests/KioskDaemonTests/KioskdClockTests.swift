import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskdProcessTestSupport
import SystemdKit
import Testing

/// A restart in the same boot keeps every wait and limit
/// running; after a reboot (its runtime directory emptied) a throttle wait restarts in full and
/// the session's remaining time goes on from the last save (time powered off does not count).
@Suite(.serialized) struct KioskdClockTests {
    static let timed = KioskdSessionTests.museum + "\n[session]\ntime-limit = \"1h\"\n"

    /// Throttled for 30 s (6 wrong passcodes), in a session of an hour; then kioskd is down for
    /// 2 s, with a reboot or without. Returns the throttle's wait and the session's time left,
    /// before and after.
    func downFor2s(reboot: Bool) throws -> (waitAfter: Int, leftBefore: Double, leftAfter: Double) {
        try withKioskd(profiles: ["museum": Self.timed]) { kioskd, bus in
            let client = try ManagerClient(address: bus.address)
            try KioskdBusTests.registerSample(client)
            try client.call("SetPasscode", [.string(""), .string("1234")])
            try client.call("StartSession", [.string("museum")])
            for _ in 0..<6 {
                #expect(client.errorName("EndSession", [.string("0000")]) == KioskError.Code.wrongPasscode.dbusName)
            }
            func left(_ client: ManagerClient) throws -> Double {
                let deadline = try #require(try client.property("SessionDeadline")?.uint64)
                return Double(deadline) / 1e6 - Date().timeIntervalSince1970
            }
            let leftBefore = try left(client)
            kioskd.stop()
            usleep(2_000_000)  // kioskd is down (or the machine is off) for 2 s
            if reboot { try kioskd.simulateReboot() }
            try kioskd.start()
            let again = try ManagerClient(address: bus.address)
            let throttled = KioskdSessionTests.throttle(again.error("EndSession", [.string("1234")]))
            let wait = try #require(throttled?.seconds)
            #expect(try again.property("SessionState") == .string("active"))
            return (wait, leftBefore, try left(again))
        }
    }

    @Test func aRestartInTheSameBootKeepsTheWaitAndTheTimeLimitRunning() throws {
        let (wait, before, after) = try downFor2s(reboot: false)
        #expect(wait <= 28, "the wait went on while kioskd was down: \(wait) s left")
        #expect(before - after >= 1.9, "the session's time went on: \(before) s, then \(after) s")
    }

    @Test func afterARebootTheWaitStartsAgainInFullAndTheSessionLosesNoTime() throws {
        let (wait, before, after) = try downFor2s(reboot: true)
        // 30 s from kioskd's start (29 if that start took over a second on a loaded machine); a
        // restart without a reboot leaves at most 28.
        #expect(wait >= 29, "pulling the plug never shortens a wait: \(wait) s left")
        #expect(after >= before - 1.0, "time powered off does not count: \(before) s, then \(after) s")
    }
}
