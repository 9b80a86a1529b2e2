import BusTestSupport
import Foundation
import Glibc
import KioskClient
import KioskTestSupport
import KioskdProcessTestSupport
import Testing

/// `kioskctl clean DURATION` and `clean --stop` against the real kioskd on a private bus (as
/// root: no polkit), and `kioskctl monitor`'s lines for a cleaning (docs/kioskctl.md).
extension KioskctlBusTests {
    @Test func cleanStartsAndStopsAndRefusesWhatKioskdWould() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        let started = try f.ctl("clean", "30s")
        #expect(started.status == 0, "\(started)")
        #expect(
            started.stdout
                == "Cleaning: touch, pointers and keys are held for 30s; `kioskctl clean --stop` ends it early.\n")
        let until = try #require(try await f.manager.status().cleaningUntil)
        let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
        #expect(until.microseconds > now && until.microseconds <= now + 30_000_000)

        // Bad input: a usage error before kioskd is asked; the cleaning runs on as it was.
        let bad = [
            try f.ctl("clean", "4s"), try f.ctl("clean", "5m1s"), try f.ctl("clean", "soon"), try f.ctl("clean"),
            try f.ctl("clean", "30s", "--stop"),
        ]
        for result in bad { #expect(result.status == 64, "\(result)") }
        #expect(try f.ctl("clean", "6m").stderr.contains("Cleaning takes 5s to 5m, not 6m."))
        #expect(try await f.manager.status().cleaningUntil == until)

        // Not root, no polkit: refused, nothing changes.
        let nobody = try f.ctl("clean", "--stop", asNobody: true)
        #expect(nobody.status == 1, "\(nobody)")
        #expect(
            nobody.stderr.hasPrefix("Failed to stop cleaning the screen: uid 65534 may not stop cleaning the screen"))
        #expect(try await f.manager.status().cleaningUntil == until)

        let stopped = try f.ctl("clean", "--stop")
        #expect(stopped.status == 0, "\(stopped)")
        #expect(stopped.stdout == "Cleaning ended: input reaches the kiosk again as the locks say.\n")
        #expect(try await f.manager.status().cleaningUntil == nil)
        #expect(try f.ctl("clean", "--stop").status == 0, "nothing to stop is no error")
        // --json: when it ends, 0 for none.
        let json = try f.ctl("--json", "clean", "1m")
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let usec = try #require(object?["cleaning_until_usec"] as? Int64, "\(json)")
        #expect(usec == (try await f.manager.status().cleaningUntil?.microseconds), "\(json)")
        #expect(try f.ctl("--json", "clean", "--stop").stdout.contains("\"cleaning_until_usec\" : 0"))
    }

    @Test func monitorPrintsACleaningsStartAndEnd() async throws {
        let f = try await Fixture()
        defer { f.stop() }
        let output = f.bus.directory.appendingPathComponent("monitor-cleaning.out").path
        let fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        let monitor = try ChildProcess.spawn(
            BuildProducts.path(of: "kioskctl"), ["monitor"], environment: f.bus.environment, stdout: fd, stderr: fd)
        close(fd)
        func text() -> String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
        await eventually { text().hasSuffix("\n") }  // subscribed
        try await f.manager.startCleaning(seconds: 45)
        try await f.manager.stopCleaning()
        await eventually { text().contains("cleaning ended") }
        monitor.signal(SIGINT)
        #expect(monitor.wait() == 128 + SIGINT)
        let lines = text().split(separator: "\n").filter { $0.hasPrefix("cleaning") }
        #expect(lines == ["cleaning: input held for 45s", "cleaning ended: input flows again"], "\(text())")
    }
}
