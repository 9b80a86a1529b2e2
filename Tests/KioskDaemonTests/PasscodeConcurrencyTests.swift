import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskdProcessTestSupport
import SystemdKit
import Testing

/// yescrypt runs off the loop: other callers are served while a passcode is checked, and
/// parallel attempts still meet the throttle one at a time.
@Suite(.serialized) struct PasscodeConcurrencyTests {
    static let app = KioskdBusTests.app
    static let controls = KioskdBusTests.controls

    /// kioskd with the sample app, passcode 1234 and a session of `museum` running.
    static func withSession(_ body: (Kioskd, ManagerClient, PrivateBus) throws -> Void) throws {
        try withKioskd(
            profiles: [
                "museum": """
                [restrictions."org.example.MuseumMap"]
                "org.example.MuseumMap.share" = "deny"
                """
            ]
        ) { kioskd, bus in
            let client = try ManagerClient(address: bus.address)
            try KioskdBusTests.registerSample(client)
            try client.call("SetPasscode", [.string(""), .string("1234")])
            try client.call("StartSession", [.string("museum")])
            try body(kioskd, client, bus)
        }
    }

    @Test func otherCallersAreAnsweredWhileAPasscodeIsChecked() throws {
        try Self.withSession { kioskd, _, bus in
            // Four wrong passcodes (within the free attempts) keep kioskd hashing for ~4 yescrypt
            // times; meanwhile GetRestrictionState is called over and over, one call after another.
            let out = try Python.run(
                """
                app, rid = sys.argv[2], sys.argv[3]
                ctx = GLib.MainContext.default()
                ends = []
                start = time.monotonic()
                def ended(*a):
                    ends.append((time.monotonic() - start, a[0].get_dbus_name() if a else "ok"))
                for _ in range(4):
                    m.EndSession("0000", reply_handler=ended, error_handler=ended)
                latencies = []
                while len(ends) < 4 and time.monotonic() - start < 20:
                    t = time.monotonic()
                    m.GetRestrictionState(app, rid)
                    if len(ends) < 4:
                        latencies.append(time.monotonic() - t)
                    while ctx.iteration(False):
                        pass
                latencies.sort()
                print("gets", len(latencies))
                print("ends", [name for _, name in ends])
                print("get_p50_ms %.3f" % (latencies[len(latencies) // 2] * 1e3))
                print("get_max_ms %.3f" % (latencies[-1] * 1e3))
                print("first_end_ms %.3f" % (ends[0][0] * 1e3))
                """, bus: bus, arguments: [Self.app, Self.controls])
            let figures = Dictionary(
                out.stdout.split(separator: "\n").compactMap { line -> (String, String)? in
                    let parts = line.split(separator: " ", maxSplits: 1)
                    return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
                }
            ) { a, _ in a }
            let wrong = KioskError.Code.wrongPasscode.dbusName
            #expect(figures["ends"] == "['\(wrong)', '\(wrong)', '\(wrong)', '\(wrong)']", "\(out)\n\(kioskd.log)")
            let gets = Int(figures["gets"] ?? "") ?? 0
            let p50 = Double(figures["get_p50_ms"] ?? "") ?? .infinity
            let firstEnd = Double(figures["first_end_ms"] ?? "") ?? 0
            // Served on the loop while yescrypt ran: many calls, each far quicker than one hash.
            #expect(gets >= 20, "\(out)")
            #expect(p50 * 5 < firstEnd, "\(out)")
            print(
                "GetRestrictionState during 4 passcode checks: \(out.stdout.replacingOccurrences(of: "\n", with: "; "))"
            )
        }
    }

    @Test func parallelWrongPasscodesAllCountAndMeetTheThrottle() throws {
        try Self.withSession { kioskd, client, bus in
            // Eight wrong attempts at once: the first five are free, the sixth is recorded and
            // starts the 30 s wait, so the seventh and eighth are Throttled, not guessed.
            let out = try Python.run(
                """
                loop = GLib.MainLoop()
                results = []
                def done(*a):
                    results.append(a[0].get_dbus_name() if a else "ok")
                    if len(results) == 8:
                        loop.quit()
                for _ in range(8):
                    m.EndSession("0000", reply_handler=done, error_handler=done)
                GLib.timeout_add(20000, loop.quit)
                loop.run()
                print(sorted(results))
                """, bus: bus)
            let wrong = KioskError.Code.wrongPasscode.dbusName, throttled = KioskError.Code.throttled.dbusName
            let expected = ([throttled, throttled] + Array(repeating: wrong, count: 6)).map { "'\($0)'" }
            #expect(out.stdout == "[\(expected.joined(separator: ", "))]\n", "\(out)")
            #expect(try Self.failures(kioskd) == 6)
            #expect(try client.property("SessionState") == .string("active"))
        }
    }

    @Test func aRightPasscodeRacingForceEndSessionAndANewSessionEndsOnlyTheFirst() throws {
        try Self.withSession { kioskd, client, bus in
            // EndSession(right) is hashed for ~25 ms; meanwhile ForceEndSession ends the session and
            // StartSession begins another. The late verdict must not end the new session. (Should the
            // hash win the race instead, EndSession ends the first session and ForceEndSession finds
            // none: the outcome below holds in either order.)
            let out = try Python.run(
                """
                loop = GLib.MainLoop()
                results = {}
                def done(*a):
                    results["end"] = a[0].get_dbus_name() if a else "ok"
                    loop.quit()
                m.EndSession("1234", reply_handler=done, error_handler=done)
                results["force"] = error_name(m.ForceEndSession)
                results["start"] = error_name(m.StartSession, "museum")
                GLib.timeout_add(20000, loop.quit)
                loop.run()
                print(results["start"], sorted([results["end"], results["force"]]))
                """, bus: bus)
            #expect(out.stdout == "ok ['ok', '\(KioskError.Code.noSession.dbusName)']\n", "\(out)\n\(kioskd.log)")
            #expect(try client.property("SessionState") == .string("active"), "\(kioskd.log)")
            #expect(try client.state(Self.app, KioskdBusTests.share) == "deny")
            try client.call("EndSession", [.string("1234")])
            #expect(try client.property("SessionState") == .string("inactive"))
            #expect(try client.state(Self.app, KioskdBusTests.share) == "allow")
        }
    }

    @Test func parallelSetPasscodeCallsEachCheckTheHashTheLastOneLeft() throws {
        try Self.withSession { _, client, bus in
            // 1234 → 5678 and 1234 → 9999 at once: one wins, the other finds 1234 no longer right.
            let out = try Python.run(
                """
                loop = GLib.MainLoop()
                results = {}
                def done(name):
                    def handler(*a):
                        results[name] = a[0].get_dbus_name() if a else "ok"
                        if len(results) == 2:
                            loop.quit()
                    return handler
                m.SetPasscode("1234", "5678", reply_handler=done("a"), error_handler=done("a"))
                m.SetPasscode("1234", "9999", reply_handler=done("b"), error_handler=done("b"))
                GLib.timeout_add(20000, loop.quit)
                loop.run()
                print(results["a"], results["b"])
                """, bus: bus)
            #expect(out.stdout == "ok \(KioskError.Code.wrongPasscode.dbusName)\n", "\(out)")
            #expect(client.errorName("EndSession", [.string("9999")]) == KioskError.Code.wrongPasscode.dbusName)
            try client.call("EndSession", [.string("5678")])
        }
    }

    /// The persisted count of wrong passcodes from this test's uid (each uid has its own).
    static func failures(_ kioskd: Kioskd) throws -> Int? {
        let json = try JSONSerialization.jsonObject(with: kioskd.stateBytes ?? Data()) as? [String: Any]
        let state = json?["state"] as? [String: Any]
        let bySource = state?["throttles"] as? [String: Any]
        return ((bySource?["uid \(geteuid())"] as? [String: Any])?["failures"] as? Int) ?? 0
    }
}
