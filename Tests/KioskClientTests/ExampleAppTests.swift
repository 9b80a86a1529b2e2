import BusTestSupport
import Foundation
import Glibc
import KioskClient
import KioskTestSupport
import KioskdProcessTestSupport
import Testing

/// `Examples/museum-map-app` (what `make demo` runs) prints what kioskd tells it and exits
/// cleanly on SIGTERM.
@Suite(.serialized) struct ExampleAppTests {
    @Test func theExampleAppPrintsWhatItIsToldAndExitsOnSIGTERM() async throws {
        try await withKioskd(setUp: { kioskd in
            try kioskd.writeTestProfile(
                "museum-map", app: "org.example.MuseumMap", denied: ["org.example.MuseumMap.controls"])
        }) { _, bus in
            let admin = try KioskManager.connect(to: .address(bus.address))
            defer { admin.close() }

            let output = bus.directory.appendingPathComponent("app.out").path
            let fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            let app = try ChildProcess.spawn(
                BuildProducts.path(of: "museum-map-app"), [], environment: bus.environment,
                stdout: fd, stderr: fd)
            close(fd)
            func text() -> String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
            func wait(for line: String) async { await eventually { text().contains(line) } }
            await wait(for: "museum-map: the session is inactive\n")
            try await admin.setRestrictionState(.deny, of: "org.example.MuseumMap.zoom", in: "org.example.MuseumMap")
            try await admin.startSession(profile: "museum-map")
            await wait(for: "museum-map: the session is active\n")
            app.signal(SIGTERM)
            #expect(app.wait() == 0)
            #expect(
                text() == """
                    museum-map: org.example.MuseumMap.controls is allow
                    museum-map: org.example.MuseumMap.zoom is allow
                    museum-map: the session is inactive
                    museum-map: told that org.example.MuseumMap.zoom is now deny
                    museum-map: told that org.example.MuseumMap.controls is now deny
                    museum-map: the session is active
                    museum-map: got signal 15, exiting

                    """)
            #expect(
                try await admin.listRestrictions(of: "org.example.MuseumMap").map(\.title) == [
                    "Admin controls", "Zoom",
                ])
        }
    }

    /// `Examples/exam-app` locks the kiosk to itself for the exam and releases it when told to stop.
    @Test func theExamAppLocksTheKioskToItselfAndReleasesIt() async throws {
        try await withKioskd(setUp: { kioskd in
            try kioskd.writeProfile("exam", "app = \"org.example.Exam\"\n[session]\napp-may-request = true\n")
        }) { _, bus in
            let admin = try KioskManager.connect(to: .address(bus.address))
            defer { admin.close() }
            let output = bus.directory.appendingPathComponent("exam.out").path
            let fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            let app = try ChildProcess.spawn(
                BuildProducts.path(of: "exam-app"), [], environment: bus.environment, stdout: fd, stderr: fd)
            close(fd)
            func text() -> String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
            await eventually { text().contains("locked to the exam") }
            #expect(try await admin.status().activeApp == "org.example.Exam")
            app.signal(SIGTERM)
            #expect(app.wait() == 0)
            #expect(
                text() == """
                    exam: the kiosk is locked to the exam (session for this app: true)
                    exam: the exam is over; the kiosk is released

                    """)
            #expect(try await admin.status().sessionState == .inactive)
        }
    }
}
