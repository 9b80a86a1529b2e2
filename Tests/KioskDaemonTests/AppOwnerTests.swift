import BusTestSupport
import Foundation
import KioskCore
import KioskDaemonTestSupport
import KioskTestSupport
import SystemdKit
import Testing

/// An app id an installed profile names is its `app-owner`'s (and root's), whoever registered it
/// first (docs/profiles.md § app-owner): no other uid can squat it to keep its app from
/// registering or from locking the kiosk, and no refusal names another uid. In process: the
/// fake identity changes uid between calls.
@Suite(.serialized) struct AppOwnerTests {
    static let exam = try! AppID("org.example.Exam")
    static let profiles = [
        "exam": "app = \"org.example.Exam\"\napp-owner = 1000\n[session]\napp-may-request = true\n",
        "by-name": "app = \"org.example.Named\"\napp-owner = \"nobody\"\n",
        "no-owner": "app = \"org.example.Unowned\"\n",
    ]

    /// uid 3000 squatted the exam app's id before the profile was installed.
    static func squatted() throws -> KioskState {
        var state = KioskState()
        try state.declare(exam, restrictions: [], uid: 3000, isAdmin: false)
        return state
    }

    func register(_ client: ManagerClient, _ app: String) -> BusError? {
        client.error("RegisterApplication", [.string(app), .array(elementSignature: "(sss)", [])])
    }

    @Test("a squatted id keeps neither the app-owner from requesting its session nor from registering")
    func aSquatBlocksNothing() async throws {
        let manager = try await InProcessManager(uid: 3000, state: try Self.squatted(), profiles: Self.profiles)
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)

        // The squatter: refused, and told nothing of who owns the app.
        let request = try #require(client.error("RequestSession", [.string("org.example.Exam"), .string("exam")]))
        #expect(request.name == KioskError.Code.accessDenied.dbusName)
        #expect(!request.message.contains("1000"), "\(request.message)")
        let squat = try #require(register(client, "org.example.Exam"))
        #expect(squat.name == KioskError.Code.accessDenied.dbusName)
        #expect(!squat.message.contains("1000"), "\(squat.message)")

        // The app-owner: requests and releases its session, then takes its id back.
        manager.identity.become(1000)
        try client.call("RequestSession", [.string("org.example.Exam"), .string("exam")])
        #expect(try client.property("ActiveApp")?.string == "org.example.Exam")
        manager.identity.become(3000)
        #expect(client.errorName("ReleaseSession", [.string("org.example.Exam")]) == KioskError.Code.accessDenied.dbusName)
        manager.identity.become(1000)
        try client.call("ReleaseSession", [.string("org.example.Exam")])
        #expect(register(client, "org.example.Exam") == nil)
        #expect(manager.store.saved.last?.registry.owner(of: Self.exam) == 1000)

        // Even polkit's manage-restrictions (allowed here) does not let a third uid take it.
        manager.identity.become(4000)
        #expect(register(client, "org.example.Exam")?.name == KioskError.Code.accessDenied.dbusName)
        #expect(manager.store.saved.last?.registry.owner(of: Self.exam) == 1000)
        // An id no profile names is first come, first served, as before.
        #expect(register(client, "org.example.Free") == nil)
        #expect(manager.store.saved.last?.registry.owner(of: try AppID("org.example.Free")) == 4000)
        await manager.stop()
    }

    @Test("app-owner by user name is looked up; without app-owner only root registers a named app")
    func namesAndNoOwner() async throws {
        let manager = try await InProcessManager(uid: 65534, profiles: Self.profiles)
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        #expect(register(client, "org.example.Named") == nil, "nobody is uid 65534 on Debian")
        #expect(register(client, "org.example.Unowned")?.name == KioskError.Code.accessDenied.dbusName)
        manager.identity.become(0)
        #expect(register(client, "org.example.Unowned") == nil)
        await manager.stop()
    }

    @Test(
        "app-owner must be a uid other than root or a user name, and needs app",
        arguments: [
            ("app = \"org.example.A\"\napp-owner = 0\n", "app-owner 0 is not a uid other than root"),
            ("app = \"org.example.A\"\napp-owner = -1\n", "app-owner -1 is not a uid other than root"),
            ("app = \"org.example.A\"\napp-owner = 4294967295\n", "is not a uid other than root"),
            ("app = \"org.example.A\"\napp-owner = \"root\"\n", "is not a user name other than root"),
            ("app = \"org.example.A\"\napp-owner = \"Bad Name\"\n", "is not a user name other than root"),
            ("app = \"org.example.A\"\napp-owner = true\n", "a uid or a user name"),
            ("app-owner = 1000\n", "app-owner needs the profile's app"),
        ])
    func appOwnerIsChecked(_ text: String, _ message: String) throws {
        #expect {
            try ProfileParser.parse(source: text, file: "p.toml")
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    @Test func aValidAppOwnerParses() throws {
        #expect(try ProfileParser.parse(source: "app = \"org.example.A\"\napp-owner = 1000\n", file: "p.toml").appOwner == .uid(1000))
        #expect(
            try ProfileParser.parse(source: "app = \"org.example.A\"\napp-owner = \"kiosk-app\"\n", file: "p.toml").appOwner
                == .user("kiosk-app"))
    }
}
