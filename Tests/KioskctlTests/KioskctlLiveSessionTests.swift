import BusTestSupport
import Foundation
import KioskClient
import KioskTestSupport
import KioskdProcessTestSupport
import Testing

/// A live session changed from the command line: `kioskctl extend`, `deadline`, `profiles`, against the real
/// kioskd on a private bus (as root: no polkit).
extension KioskctlBusTests {
    @Test func extendAndDeadlineChangeALiveSession() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        try f.kioskd.writeProfile("timed", "description = \"Thirty minutes\"\n[session]\ntime-limit = \"30m\"\n")
        #expect(try f.ctl("extend", "15m").stderr == "Failed to extend the session: No guided-access session is active.\n")
        #expect(try f.ctl("start", "timed").status == 0)
        let before = try #require(try await f.manager.status().sessionDeadline)
        let extended = try f.ctl("extend", "15m")
        #expect(extended.status == 0, "\(extended)")
        #expect(extended.stdout.hasPrefix("The session ends at "), "\(extended)")
        var after = try #require(try await f.manager.status().sessionDeadline)
        #expect(after.microseconds - before.microseconds == 900_000_000)
        #expect(try f.ctl("extend", "--", "-5m").status == 0)
        after = try #require(try await f.manager.status().sessionDeadline)
        #expect(after.microseconds - before.microseconds == 600_000_000)
        // Bad input: a usage error, nothing changed.
        for bad in ["soon", "-", "0m", "15"] {
            let result = try f.ctl("extend", "--", bad)
            #expect(result.status == 64, "\(bad): \(result)")
        }
        #expect(try f.ctl("extend", "8d").status == 1)
        #expect(try await f.manager.status().sessionDeadline == after)
        // Deadline: none removes the limit; then extend has nothing to extend.
        #expect(try f.ctl("deadline", "none").stdout == "The session has no time limit.\n")
        let noLimit = try f.ctl("extend", "5m")
        #expect(noLimit.status == 1)
        #expect(noLimit.stderr.contains("no time limit to extend"), "\(noLimit)")
        #expect(try f.ctl("deadline", "25:00").status == 64)
        // A date far in the past: expired now.
        #expect(try f.ctl("deadline", "2001-01-01 00:00").stdout.hasPrefix("The session has expired"))
        #expect(try await f.manager.status().sessionState == .expired)
        #expect(try f.ctl("extend", "10m").status == 0)
        #expect(try await f.manager.status().sessionState == .active)
    }

    @Test func profilesListsWhatKioskdCanStart() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        try f.kioskd.writeProfile("broken", "[buttons]\npowr = \"locked\"\n")
        let result = try f.ctl("profiles")
        #expect(result.status == 0, "\(result)")
        #expect(
            result.stdout.split(separator: "\n", omittingEmptySubsequences: false) == [
                "profile  checks  hash  description", "broken   NO      no   ", "museum   yes     yes  A test session", "",
            ], "\(result.stdout)")
        let json = try f.ctl("profiles", "--json")
        let decoded = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(decoded?.map { $0["name"] as? String } == ["broken", "museum"])
        #expect(decoded?.first?["checks"] as? Bool == false)
        #expect(try f.ctl("profiles", asNobody: true).status == 1)
    }

    @Test func reloadPutsTheEditedProfileInForceOrFailsWithTheReason() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        try f.kioskd.writeProfile("timed", "[session]\ntime-limit = \"30m\"\n")
        #expect(try f.ctl("reload").stdout == "Reloaded the session's profile.\n")
        #expect(try f.ctl("start", "timed").status == 0)
        let before = try #require(try await f.manager.status().sessionDeadline)
        try f.kioskd.writeProfile("timed", "[session]\ntime-limit = \"45m\"\n")
        #expect(try f.ctl("reload").status == 0)
        #expect(try await f.manager.status().sessionDeadline?.microseconds == before.microseconds + 900_000_000)
        try f.kioskd.writeProfile("timed", "[session]\ntime-limit = 45\n")
        let broken = try f.ctl("reload")
        #expect(broken.status == 1)
        #expect(broken.stderr.contains("could not be reloaded, so the last good one stays in force"), "\(broken)")
        #expect(try f.ctl("status").stdout.contains("warning      The profile \"timed\" could not be reloaded"))
    }

    @Test func aTrialStartIsConfirmedOrEnds() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        #expect(try f.ctl("start", "--trial", "5", "museum").status == 64)
        let started = try f.ctl("start", "--trial", "5m", "museum", "--escape-paths-root", "/nonexistent")
        #expect(started.status == 0, "\(started)")
        #expect(started.stdout.contains("It is a trial: it ends by itself in 5m unless `kioskctl confirm` comes first."))
        #expect(try await f.manager.status().sessionState == .active)
        let confirmed = try f.ctl("confirm")
        #expect(confirmed.stdout == "Confirmed the session: it stays until it is ended.\n", "\(confirmed)")
        let again = try f.ctl("confirm")
        #expect(again.status == 1)
        #expect(again.stderr.contains("not a trial"), "\(again)")
    }
}
