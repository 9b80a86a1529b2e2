import BusTestSupport
import Foundation
import Glibc
import KioskCore
import KioskdProcessTestSupport
import SystemdKit
import Testing

/// Sessions over the bus: presets applied and restored, an admin's change kept, the
/// throttle's schedule across restarts, ForceEndSession, a session surviving SIGKILL, and the
/// passcode never leaving kioskd.
@Suite(.serialized) struct KioskdSessionTests {
    static let app = KioskdBusTests.app
    static let controls = KioskdBusTests.controls
    static let share = KioskdBusTests.share
    static let museum = """
        [restrictions."org.example.MuseumMap"]
        "org.example.MuseumMap.share" = "deny"
        "org.example.MuseumMap.controls" = "deny"
        """

    /// kioskd with `profile` as `museum` and the sample app registered (`withKioskd`).
    func withSession(
        profile: String = museum, _ body: (Kioskd, ManagerClient, PrivateBus) throws -> Void
    ) throws {
        try withKioskd(profiles: ["museum": profile]) { kioskd, bus in
            let client = try ManagerClient(address: bus.address)
            try KioskdBusTests.registerSample(client)
            try body(kioskd, client, bus)
        }
    }

    @Test func presetsAreAppliedAndRestoredExceptWhatAnAdminChangedDuringTheSession() throws {
        try withSession { _, client, _ in
            try client.call("SetPasscode", [.string(""), .string("1234")])
            #expect(try client.state(Self.app, Self.share) == "allow")
            #expect(try client.state(Self.app, Self.controls) == "allow")

            try client.call("StartSession", [.string("museum")])
            #expect(try client.state(Self.app, Self.share) == "deny")
            #expect(try client.state(Self.app, Self.controls) == "deny")
            // The admin lets the controls go, then locks them again: an admin decision, kept at the end
            // (deny), where an untouched preset goes back to its state from before (allow).
            try client.call("SetRestrictionState", [.string(Self.app), .string(Self.controls), .string("allow")])
            try client.call("SetRestrictionState", [.string(Self.app), .string(Self.controls), .string("deny")])
            try client.call("EndSession", [.string("1234")])
            #expect(try client.property("SessionState") == .string("inactive"))
            #expect(try client.property("ActiveProfile") == .string(""))
            #expect(try client.state(Self.app, Self.share) == "allow")
            #expect(try client.state(Self.app, Self.controls) == "deny")

            // A second cycle: the presets are taken from the states of now.
            try client.call("StartSession", [.string("museum")])
            try client.call("EndSession", [.string("1234")])
            #expect(try client.state(Self.app, Self.share) == "allow")
            #expect(try client.state(Self.app, Self.controls) == "deny")
        }
    }

    /// "Too many wrong passcodes (N in a row); try again in S s." → (N, S).
    static func throttle(_ error: BusError?) -> (failures: Int, seconds: Int)? {
        guard let error, error.name == KioskError.Code.throttled.dbusName else { return nil }
        let numbers = error.message.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        return numbers.count == 2 ? (numbers[0], numbers[1]) : nil
    }

    /// Moves this test uid's persisted last failure `seconds` into the past, as if that much time
    /// had passed while kioskd was stopped (kioskd reads the real wall clock; a test cannot wait
    /// an hour).
    static func ageLastFailure(_ kioskd: Kioskd, by seconds: Int64) throws {
        var json = try #require(try JSONSerialization.jsonObject(with: kioskd.stateBytes ?? Data()) as? [String: Any])
        var state = try #require(json["state"] as? [String: Any])
        var bySource = try #require(state["throttles"] as? [String: Any])
        let source = "uid \(geteuid())"
        var throttle = try #require(bySource[source] as? [String: Any])
        let last = try #require(throttle["lastFailure"] as? Int64)
        throttle["lastFailure"] = last - seconds * 1_000_000
        bySource[source] = throttle
        state["throttles"] = bySource
        json["state"] = state
        try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]).write(
            to: URL(fileURLWithPath: kioskd.statePath))
    }

    @Test func wrongPasscodesAreThrottledOnTheScheduleAndTheCountSurvivesRestarts() throws {
        try withSession { kioskd, client, bus in
            try client.call("SetPasscode", [.string(""), .string("1234")])
            try client.call("StartSession", [.string("museum")])
            let wrong = KioskError.Code.wrongPasscode.dbusName
            // 1–5 are free, the 6th is still checked (and starts the 30 s wait).
            for attempt in 1...6 {
                #expect(client.error("EndSession", [.string("000\(attempt)")])?.name == wrong, "attempt \(attempt)")
            }
            // Even the right passcode waits now; the message says how long is left.
            var throttled = Self.throttle(client.error("EndSession", [.string("1234")]))
            #expect(throttled?.failures == 6)
            #expect((25...30).contains(throttled?.seconds ?? -1), "\(String(describing: throttled))")

            // A restart does not reset the count.
            #expect(kioskd.stop(SIGTERM) == 0)
            try kioskd.start()
            var again = try ManagerClient(address: bus.address)
            throttled = Self.throttle(again.error("EndSession", [.string("1234")]))
            #expect(
                throttled?.failures == 6 && (20...30).contains(throttled?.seconds ?? -1),
                "\(String(describing: throttled))"
            )

            // 31 s later: one attempt; wrong again (7th), so the wait doubles to 1 min.
            kioskd.stop(SIGTERM)
            try Self.ageLastFailure(kioskd, by: 31)
            try kioskd.start()
            again = try ManagerClient(address: bus.address)
            #expect(again.error("EndSession", [.string("0007")])?.name == wrong)
            throttled = Self.throttle(again.error("EndSession", [.string("1234")]))
            #expect(
                throttled?.failures == 7 && (55...60).contains(throttled?.seconds ?? -1),
                "\(String(describing: throttled))"
            )
            #expect(PasscodeThrottle.delay(afterFailures: 7) == .seconds(60))

            // 61 s later: the right passcode ends the session and resets the count.
            kioskd.stop(SIGTERM)
            try Self.ageLastFailure(kioskd, by: 61)
            try kioskd.start()
            again = try ManagerClient(address: bus.address)
            try again.call("EndSession", [.string("1234")])
            #expect(try again.property("SessionState") == .string("inactive"))
            #expect(try PasscodeConcurrencyTests.failures(kioskd) == 0)
        }
    }

    @Test func wrongPasscodesCountEvenWhenTheDiskRefusesTheSave() throws {
        try withSession { kioskd, client, _ in
            try client.call("SetPasscode", [.string(""), .string("1234")])
            try client.call("StartSession", [.string("museum")])
            // No save can succeed now. A failure the disk refuses still counts (fail closed): without
            // that, a full or read-only disk would give unlimited guesses.
            try FileManager.default.removeItem(at: kioskd.stateDirectory)
            let wrong = KioskError.Code.wrongPasscode.dbusName
            for attempt in 1...6 {
                #expect(client.error("EndSession", [.string("000\(attempt)")])?.name == wrong, "attempt \(attempt)")
            }
            let throttled = Self.throttle(client.error("EndSession", [.string("1234")]))
            #expect(throttled?.failures == 6, "\(String(describing: throttled))\n\(kioskd.log)")
            #expect(try client.property("SessionState") == .string("active"))
            #expect(kioskd.log.contains("Could not save the state"), "\(kioskd.log)")
        }
    }

    @Test(.enabled(if: Root.isRoot, Comment(rawValue: Root.needs("to call as nobody through setpriv"))))
    func forceEndSessionWorksForRootAndIsDeniedToNobody_needsRoot() throws {
        try withSession { kioskd, client, bus in
            try client.call("StartSession", [.string("museum")])
            let before = kioskd.stateBytes
            let nobody = try Python.run("print(error_name(m.ForceEndSession))", bus: bus, as: 65534)
            #expect(nobody.stdout == "\(KioskError.Code.accessDenied.dbusName)\n", "\(nobody)")
            #expect(kioskd.stateBytes == before)
            #expect(try client.property("SessionState") == .string("active"))

            try client.call("ForceEndSession")
            #expect(try client.property("SessionState") == .string("inactive"))
            #expect(try client.state(Self.app, Self.share) == "allow")
            #expect(kioskd.log.contains("Session force-ended"), "journaled as forced: \(kioskd.log)")
        }
    }

    @Test func aSessionSurvivesSIGKILLWithItsProfileAndDeadline() throws {
        try withSession(
            profile: Self.museum + """

                [session]
                time-limit = "1h"
                warnings = ["5m"]
                """
        ) { kioskd, client, bus in
            try client.call("SetPasscode", [.string(""), .string("1234")])
            try client.call("StartSession", [.string("museum")])
            let deadline = try client.property("SessionDeadline")
            #expect((deadline?.uint64 ?? 0) > 0)

            #expect(kioskd.stop(SIGKILL) == 128 + SIGKILL)
            try kioskd.start()
            let again = try ManagerClient(address: bus.address)
            #expect(try again.property("SessionState") == .string("active"))
            #expect(try again.property("ActiveProfile") == .string("museum"))
            #expect(try again.property("SessionDeadline") == deadline)
            #expect(try again.state(Self.app, Self.share) == "deny")
            // …and it still ends with the passcode, restoring the presets.
            try again.call("EndSession", [.string("1234")])
            #expect(try again.state(Self.app, Self.share) == "allow")
            #expect(try again.property("SessionDeadline") == .uint64(0))
        }
    }

    @Test func thePasscodeNeverAppearsInTheLogErrorsArgvOrStateFile() throws {
        try withSession { kioskd, client, _ in
            let token = UUID().uuidString.prefix(8)
            let passcode = "Pc\(token)-right"
            let guesses = ["Pc\(token)-wrong1", "Pc\(token)-wrong2"]
            var errors: [BusError] = []
            func expectError(_ member: String, _ arguments: [DBusValue]) {
                if let error = client.error(member, arguments) {
                    errors.append(error)
                } else {
                    Issue.record("\(member) succeeded")
                }
            }
            // Set in process: no tool's argv ever holds it.
            try client.call("SetPasscode", [.string(""), .string(passcode)])
            try client.call("StartSession", [.string("museum")])
            for guess in guesses { expectError("EndSession", [.string(guess)]) }
            expectError("SetPasscode", [.string(guesses[0]), .string("Pc\(token)-next")])
            expectError("SetPasscode", [.string(passcode), .string("Pc\(token)\u{7}bell")])
            expectError(
                "SetPasscode", [.string(passcode), .string("Pc\(token)" + String(repeating: "x", count: 1100))])

            // During the session: no process's argv.
            var argvHits: [String] = []
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            where entry.allSatisfy(\.isNumber) {
                guard let argv = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
                if String(decoding: argv, as: UTF8.self).contains("Pc\(token)") { argvHits.append(entry) }
            }
            #expect(argvHits == [], "processes with the passcode in argv: \(argvHits)")
            #expect(
                kioskd.process.map { FileManager.default.contents(atPath: "/proc/\($0.pid)/cmdline") != nil } == true,
                "kioskd's own argv was read")

            try client.call("EndSession", [.string(passcode)])
            #expect(try client.property("SessionState") == .string("inactive"))

            #expect(errors.count == 5)
            for error in errors { #expect(!error.message.contains("Pc\(token)"), "\(error)") }
            // The log (the journal's fields; written to stderr here, where there is no journald).
            #expect(!kioskd.log.contains("Pc\(token)"), "\(kioskd.log)")
            #expect(
                kioskd.log.contains("Wrong passcode") && kioskd.log.contains("Session ended"),
                "the log was read: \(kioskd.log)")
            // Every file in the state directory (the state file and any temporary file).
            for file in try FileManager.default.contentsOfDirectory(atPath: kioskd.stateDirectory.path) {
                let bytes =
                    FileManager.default.contents(atPath: kioskd.stateDirectory.appendingPathComponent(file).path)
                    ?? Data()
                #expect(bytes.range(of: Data("Pc\(token)".utf8)) == nil, "\(file)")
            }
            let saved = String(decoding: kioskd.stateBytes ?? Data(), as: UTF8.self)
            #expect(saved.contains("\"passcodeHash\":\"$y$"), "\(saved)")
        }
    }
}
