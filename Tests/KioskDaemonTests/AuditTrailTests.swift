import BusTestSupport
import Foundation
import KioskTestSupport
import KioskdProcessTestSupport
import KioskAPI
import SystemdKit
import Testing

@testable import KioskDaemon

/// Every kind of audit entry has a stable `MESSAGE_ID`, explained in the catalog
/// the package installs; kioskd's entries carry it (read here from kioskd's structured lines on
/// stderr: the CI host has no journald; the boot test reads them with journalctl).
@Suite struct AuditTrailTests {
    static func catalog() throws -> [String: String] {
        let text = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("packaging/catalog/kioskd.catalog"), encoding: .utf8)
        var subjects: [String: String] = [:]
        var current: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("-- ") {
                current = String(line.dropFirst(3))
            } else if let id = current, line.hasPrefix("Subject: ") {
                subjects[id] = String(line.dropFirst("Subject: ".count))
            }
        }
        return subjects
    }

    @Test("the catalog explains every MESSAGE_ID kioskd writes, and nothing else")
    func catalogMatchesTheIDs() throws {
        let subjects = try Self.catalog()
        #expect(Set(subjects.keys) == Set(MessageID.allCases.map(\.rawValue)))
        #expect(subjects.values.allSatisfy { !$0.isEmpty })
        #expect(MessageID.allCases.allSatisfy { $0.rawValue.count == 32 && $0.rawValue.allSatisfy(\.isHexDigit) })
    }

    @Test("a session's start, a refused passcode and its end carry their MESSAGE_IDs")
    func entriesCarryTheirIDs() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let kioskd = try KioskdProcess(bus: bus)
        try kioskd.writeTestProfile("museum", app: "org.example.MuseumMap", denied: [])
        try kioskd.start()
        defer { kioskd.stop() }
        let client = try ManagerClient(address: bus.address)
        try client.call("StartSession", [.string("museum")])
        // Six wrong passcodes start the throttle's wait; the seventh attempt is refused unchecked.
        for _ in 0..<6 { _ = client.errorName("EndSession", [.string("0000")]) }
        #expect(client.errorName("EndSession", [.string("0000")]) == KioskError.Code.throttled.dbusName)
        try client.call("ForceEndSession")
        let log = eventually { kioskd.log } until: { $0.contains("Session force-ended") }
        for (message, id) in [
            ("Session started", MessageID.sessionStarted), ("Wrong passcode", .wrongPasscode),
            ("Passcode attempt refused by the throttle", .passcodeThrottled), ("Session force-ended", .sessionForceEnded),
        ] {
            let line = log.split(separator: "\n").first { $0.contains(": \(message)") }
            #expect(line?.contains("MESSAGE_ID=\(id.rawValue)") == true, "\(message): \(line ?? "no line")\n\(log)")
        }
    }
}
