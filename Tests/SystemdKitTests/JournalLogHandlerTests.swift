import Foundation
import Glibc
import Logging
import SystemdKit
import Testing

@Suite struct JournalLogHandlerTests {
    @Test(arguments: [
        ("restriction.id", "RESTRICTION_ID"), ("bus.uid", "BUS_UID"), ("device-path", "DEVICE_PATH"),
        ("_hidden", "HIDDEN"), ("9lives", "M_9LIVES"), ("ünïcode", "_N_CODE"),
    ])
    func metadataKeysBecomeJournalFieldNames(key: String, field: String) {
        #expect(JournalLogHandler.fieldName(key) == (field == "_N_CODE" ? "N_CODE" : field))
    }

    @Test func entriesCarryMessagePriorityAndMetadata() {
        let fields = JournalLogHandler.fields(
            level: .warning, message: "Restriction changed",
            metadata: ["restriction.id": "org.example.A.b", "bus.uid": "1000"],
            label: "kioskd.registry", identifier: "kioskd")
        #expect(
            fields.map { "\($0.0)=\($0.1)" } == [
                "MESSAGE=Restriction changed", "PRIORITY=4", "SYSLOG_IDENTIFIER=kioskd", "LOGGER=kioskd.registry",
                "BUS_UID=1000", "RESTRICTION_ID=org.example.A.b",
            ])
        #expect(JournalLogHandler.priority(.critical) == 2)
        #expect(JournalLogHandler.priority(.trace) == 7)
    }

    @Test func withoutAJournalEntriesGoToTheFallbackFD() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        defer { close(fds[0]) }
        var handler = JournalLogHandler(label: "test", identifier: "t", destination: .fileDescriptor(fds[1]))
        handler.logLevel = .debug
        let logger = Logger(label: "test") { _ in handler }
        logger.info("Line\none", metadata: ["app.id": "org.example.A"])
        logger.trace("not shown")
        close(fds[1])
        var buffer = [UInt8](repeating: 0, count: 1024)
        let n = read(fds[0], &buffer, buffer.count)
        #expect(
            String(decoding: buffer[0..<max(n, 0)], as: UTF8.self) == "info test: Line\\none APP_ID=org.example.A\n")
    }

    @Test func automaticDestinationFollowsTheJournalSocket() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "journal-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("socket").path
        #expect(JournalLogHandler.automaticDestination(journalSocket: socket) == .fileDescriptor(2))
        #expect(FileManager.default.createFile(atPath: socket, contents: nil))
        #expect(JournalLogHandler.automaticDestination(journalSocket: socket) == .journal)
    }
}
