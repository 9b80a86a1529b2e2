import BusTestSupport
import Foundation
import Glibc
import InputTestSupport
import KioskCore
import KioskdProcessTestSupport
import SystemdKit
import Testing

/// The wall clock is set 2 hours ahead, then 4 hours back (only in
/// the throw-away VM: the host's clock is never touched). A throttle wait and a session's time
/// limit run on CLOCK_BOOTTIME and move with neither jump; only SessionDeadline, the deadline as
/// wall-clock time, moves, and kioskd announces it anew.
@Suite(
    "Real kernel: wall-clock jumps move no wait and no limit (VM, root)", .serialized,
    .enabled(if: VM.isEnabled, Comment(rawValue: VM.skipMessage)))
struct WallClockVMTests {
    /// The wall clock minus CLOCK_MONOTONIC, in seconds: what ``restoreWallClock(_:)`` puts back.
    static func wallClockOffset() -> Int {
        var real = timespec(), mono = timespec()
        clock_gettime(CLOCK_REALTIME, &real)
        clock_gettime(CLOCK_MONOTONIC, &mono)
        return real.tv_sec - mono.tv_sec
    }

    /// Sets the wall clock back to `offset` from CLOCK_MONOTONIC, however the test ended.
    static func restoreWallClock(_ offset: Int) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        now.tv_sec += offset
        _ = clock_settime(CLOCK_REALTIME, &now)
    }

    static func setWallClock(by seconds: Int) throws {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        now.tv_sec += seconds
        guard clock_settime(CLOCK_REALTIME, &now) == 0 else { throw HarnessError("clock_settime: \(errno)") }
    }

    static func deadline(_ kioskd: KioskdUnderTest) throws -> Int64 {
        let text = try kioskd.property("SessionDeadline")  // `t 1795...`
        return try #require(Int64(text.split(separator: " ").last ?? ""))
    }

    /// The wait of a throttled EndSession, in seconds ("… try again in N s.").
    static func wait(_ kioskd: KioskdUnderTest) throws -> Int? {
        do {
            try kioskd.endSession(passcode: "0000")
            return nil
        } catch let error as BusError where error.name == KioskError.Code.throttled.dbusName {
            return error.message.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }.last
        }
    }

    /// Prints the names of the properties in each PropertiesChanged, a line each.
    static func propertiesListener(address: String) throws -> LineCollector {
        try signalListener(
            address: address, member: "PropertiesChanged", interface: "org.freedesktop.DBus.Properties",
            line: #""changed " + " ".join(sorted(str(k) for k in args[1]))"#)
    }

    @Test func wallClockJumpsInEitherDirectionMoveNeitherTheThrottleNorTheTimeLimit() throws {
        let profile = "[session]\ntime-limit = \"1h\"\n[passcode]\nhash = \"\(KioskdProcess.passcodeHash)\"\n"
        try withKioskd(profiles: ["timed": profile]) { kioskd, bus in
            let offset = Self.wallClockOffset()
            defer { Self.restoreWallClock(offset) }  // the later tests in the VM see the right time
            try kioskd.call("StartSession", "s", ["timed"])
            for _ in 0..<6 { #expect(throws: BusError.self) { try kioskd.endSession(passcode: "0000") } }
            let shown = try Self.deadline(kioskd)
            let monitor = try Self.propertiesListener(address: bus.address)
            defer { monitor.stop() }

            try Self.setWallClock(by: 2 * 3600)
            // kioskd tells of the new wall-clock deadline: an event to wait on, not a sleep.
            _ = try monitor.wait("PropertiesChanged after the jump ahead (kioskd: \(kioskd.log.suffix(600)))") {
                $0.contains { $0.contains("SessionDeadline") }
            }
            let ahead = try Self.deadline(kioskd)
            #expect(abs(ahead - shown - 7200 * 1_000_000) < 2_000_000, "shown \(shown), then \(ahead)")
            #expect(try kioskd.property("SessionState") == #"s "active""#, "2 hours ahead did not expire it")
            let waitAhead = try #require(try Self.wait(kioskd))
            #expect((25...30).contains(waitAhead), "the 30 s wait was not cut short: \(waitAhead) s")

            let seen = monitor.lines.count
            try Self.setWallClock(by: -4 * 3600)
            _ = try monitor.wait("PropertiesChanged after the jump back") {
                $0.dropFirst(seen).contains { $0.contains("SessionDeadline") }
            }
            let back = try Self.deadline(kioskd)
            #expect(abs(back - shown + 7200 * 1_000_000) < 2_000_000, "shown \(shown), then \(back)")
            let waitBack = try #require(try Self.wait(kioskd))
            #expect(waitBack <= waitAhead, "the wait was not stretched: \(waitBack) s")
            #expect(try kioskd.property("SessionState") == #"s "active""#)
        }
    }
}
