import BusTestSupport
import Foundation
import KioskCore
import KioskDaemonTestSupport
import KioskTestSupport
import SystemdKit
import Testing

/// Exam mode (docs/client.md): an app locks the kiosk to itself (`RequestSession`) and lets it go
/// (`ReleaseSession`); only its owner, only for a profile made for it that allows it; no other
/// app can release it. In process; every caller is uid 1000.
@Suite(.serialized) struct RequestedSessionTests {
    static let exam = try! AppID("org.example.Exam")
    static let other = try! AppID("org.example.Other")
    static let profiles = [
        "exam": "app = \"org.example.Exam\"\napp-owner = 1000\n[session]\napp-may-request = true\n",
        "admin-only": "app = \"org.example.Exam\"\napp-owner = 1000\n",
        "others": "app = \"org.example.Other\"\napp-owner = 2000\n[session]\napp-may-request = true\n",
    ]

    /// A state where uid 1000 owns the exam app and uid 2000 the other one.
    static func state() throws -> KioskState {
        var state = KioskState()
        try state.declare(exam, restrictions: [], uid: 1000, isAdmin: false)
        try state.declare(other, restrictions: [], uid: 2000, isAdmin: false)
        return state
    }

    func denied(_ client: ManagerClient, _ member: String, _ arguments: [String]) -> String? {
        client.errorName(member, arguments.map(DBusValue.string))
    }

    @Test("the owner requests a session of a profile made for its app and releases it; ActiveApp names it")
    func requestAndRelease() async throws {
        let manager = try await InProcessManager(state: try Self.state(), profiles: Self.profiles)
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        let accessDenied = KioskError.Code.accessDenied.dbusName
        #expect(denied(client, "RequestSession", ["org.example.Exam", "admin-only"]) == accessDenied)
        #expect(denied(client, "RequestSession", ["org.example.Exam", "others"]) == accessDenied)
        #expect(denied(client, "RequestSession", ["org.example.Other", "others"]) == accessDenied, "not its owner")
        #expect(denied(client, "RequestSession", ["not an id", "exam"]) == KioskError.Code.invalidArgument.dbusName)
        #expect(try client.property("SessionState")?.string == "inactive")
        try client.call("RequestSession", [.string("org.example.Exam"), .string("exam")])
        #expect(try client.property("SessionState")?.string == "active")
        #expect(try client.property("ActiveApp")?.string == "org.example.Exam")
        // Another app cannot release it, nor can a caller who does not own the app.
        #expect(denied(client, "ReleaseSession", ["org.example.Other"]) == accessDenied)
        #expect(try client.property("SessionState")?.string == "active")
        try client.call("ReleaseSession", [.string("org.example.Exam")])
        #expect(try client.property("SessionState")?.string == "inactive")
        #expect(try client.property("ActiveApp")?.string == "")
        // A session an admin started is not the app's to release.
        try client.call("StartSession", [.string("exam")])
        #expect(denied(client, "ReleaseSession", ["org.example.Exam"]) == accessDenied)
        #expect(try client.property("SessionState")?.string == "active")
        await manager.stop()
    }

    @Test("request-session is a polkit action of its own")
    func polkitDecides() async throws {
        let manager = try await InProcessManager(
            authorize: .result(.denied), state: try Self.state(), profiles: Self.profiles)
        let client = try ManagerClient(address: manager.bus.address)
        #expect(denied(client, "RequestSession", ["org.example.Exam", "exam"]) == KioskError.Code.accessDenied.dbusName)
        #expect(manager.journal.all.contains { $0.contains(KioskWire.Action.requestSession) }, "\(manager.journal.all)")
        await manager.stop()
    }
}
