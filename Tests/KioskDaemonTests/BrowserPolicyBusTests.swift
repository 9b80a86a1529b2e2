import BusTestSupport
import Foundation
import Glibc
import KioskAPI
import KioskCore
import KioskDaemonTestSupport
import KioskTestSupport
import Synchronization
import SystemdKit
import Testing

@testable import KioskDaemon

/// The browsers' policy written by kioskd's manager in process (docs/browsers.md § What kioskd
/// writes where and when), into temporary directories standing for /etc/chromium, /etc/firefox,
/// and /var/lib/kioskd: a session's denials in the files before it is reported,
/// gone at its end; an admin's deny and allow; Firefox's own keys merged into the admin's file
/// and taken out again; a restart writing what the persisted state says; the reserved ids; a
/// browser whose policy directory is missing or not root's runs no session.
@Suite(.serialized) struct BrowserPolicyBusTests {
    static let chromium = Browser.chromium.app.rawValue
    static let firefox = Browser.firefox.app.rawValue

    static let profiles = [
        "web": """
        app = "org.chromium.Chromium"
        [browser]
        allowed-urls = ["https://museum.example", "example.org/tickets"]
        [restrictions."org.chromium.Chromium"]
        "org.chromium.Chromium.devtools" = "deny"
        """,
        "fox": """
        app = "org.mozilla.firefox"
        [browser]
        allowed-urls = ["https://museum.example"]
        """,
    ]

    /// The admin's Firefox policies, with keys kioskd must keep as they are.
    static let adminFirefox =
        #"{"policies": {"Homepage": {"URL": "https://museum.example", "Locked": true}, "PrintingEnabled": true}}"#

    /// Temporary stand-ins for the machine's directories, removed by ``remove()``.
    struct Directories {
        let root: URL
        let paths: BrowserPolicyPaths

        init(firefox: Bool = true) throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("browser-\(UUID().uuidString)")
            let chromiumDirectory = root.appendingPathComponent("etc/chromium/policies/managed")
            let firefoxDirectory = root.appendingPathComponent("etc/firefox/policies")
            let state = root.appendingPathComponent("var/lib/kioskd")
            for directory in [chromiumDirectory, state] + (firefox ? [firefoxDirectory] : []) {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            }
            paths = BrowserPolicyPaths(
                chromiumDirectory: chromiumDirectory.path, firefoxDirectory: firefoxDirectory.path,
                firefoxHeldFile: state.appendingPathComponent("firefox-policy-keys.json").path)
            if firefox {
                try Data(BrowserPolicyBusTests.adminFirefox.utf8).write(to: URL(fileURLWithPath: paths.firefoxFile))
            }
        }

        func remove() { try? FileManager.default.removeItem(at: root) }

        /// Chromium's file, `kioskd.json` in its managed directory.
        func chromium() throws -> JSONValue {
            try JSONValue.parse(
                Array(try Data(contentsOf: URL(fileURLWithPath: paths.chromiumDirectory + "/kioskd.json"))))
        }

        func firefox() throws -> JSONValue {
            try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: paths.firefoxFile))))
        }
    }

    static func browsersDeclared() throws -> KioskState {
        var state = KioskState()
        try state.declareBrowsers()
        return state
    }

    /// An edited profile's presets apply at `ReloadProfiles`, through the same commit as any
    /// change: the states, their signals and the browser's policy file, all before the reply; a
    /// preset removed from the file goes back to its state before the session, and the end
    /// restores the one the reload added (docs/dbus-api.md § Changing a live session).
    @Test func aReloadAppliesTheEditedPresetsToTheStatesTheSignalsAndThePolicy() async throws {
        let directories = try Directories()
        defer { directories.remove() }
        let manager = try await InProcessManager(
            state: try Self.browsersDeclared(), profiles: Self.profiles, browsers: directories.paths)
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        try client.call("StartSession", [.string("web")])
        #expect(try client.state(Self.chromium, Self.chromium + ".devtools") == "deny")
        #expect(try client.state(Self.chromium, Self.chromium + ".printing") == "allow")

        // The admin edits the file: devtools no longer denied, printing denied.
        let edited = Self.profiles["web"]!.replacingOccurrences(
            of: #""org.chromium.Chromium.devtools" = "deny""#, with: #""org.chromium.Chromium.printing" = "deny""#)
        let url = manager.profileDirectory.appendingPathComponent("web.toml")
        try Data(edited.utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        manager.journal.removeAll()
        try client.call("ReloadProfiles")
        #expect(try client.state(Self.chromium, Self.chromium + ".printing") == "deny")
        #expect(try client.state(Self.chromium, Self.chromium + ".devtools") == "allow")
        #expect(try client.state(Self.chromium, Self.chromium + ".navigation") == "deny", "unchanged: untouched")
        #expect(
            try directories.chromium().description
                == #"{"URLBlocklist":["*"],"URLAllowlist":["https://museum.example","example.org/tickets"],"PrintingEnabled":false}"#
        )
        try await manager.signalsSent()
        #expect(
            manager.journal.all.filter { $0 == "signal RestrictionStateChanged" }.count == 2, "\(manager.journal.all)")

        try client.call("ForceEndSession")
        #expect(try client.state(Self.chromium, Self.chromium + ".printing") == "allow")
        #expect(try directories.chromium() == .object([]), "the presets restored: no policy")
    }

    /// The files are written on the state writer's queue, not on the loop (their fsyncs take
    /// seconds on a slow card, and the loop carries the input): while a write is held, kioskd
    /// answers a read; the change's reply waits for the file.
    @Test func theFilesAreWrittenOffTheLoopAndBeforeTheReply() async throws {
        let directories = try Directories()
        defer { directories.remove() }
        let manager = try await InProcessManager(
            state: try Self.browsersDeclared(), profiles: Self.profiles, browsers: directories.paths)
        defer { Task { await manager.stop() } }
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        try await manager.onLoop { manager in
            manager.browserPolicy?.beforeWrite = {
                entered.signal()
                gate.wait()
            }
        }
        let address = manager.bus.address
        let replied = DispatchSemaphore(value: 0)
        let reply = Mutex<String?>(nil)
        DispatchQueue.global().async {
            let outcome: String
            do {
                try ManagerClient(address: address).call(
                    "SetRestrictionState",
                    [.string(Self.chromium), .string(Self.chromium + ".devtools"), .string("deny")])
                outcome = "reply"
            } catch {
                outcome = "\(error)"
            }
            reply.withLock { $0 = outcome }
            replied.signal()
        }
        #expect(entered.wait(timeout: .now() + 10) == .success, "the write of the deny's policy began")
        // The write is held: the loop still answers, and neither the reply nor the file is there.
        let reader = try ManagerClient(address: address)
        #expect(try reader.property("SessionState") == .string("inactive"))
        #expect(reply.withLock { $0 } == nil)
        #expect(try directories.chromium() == .object([]))
        gate.signal()
        #expect(replied.wait(timeout: .now() + 10) == .success)
        #expect(reply.withLock { $0 } == "reply")
        #expect(try directories.chromium().description == #"{"DeveloperToolsAvailability":2}"#)
    }

    @Test func aSessionsDenialsAreInTheFileBeforeItsReplyAndGoneAtItsEnd() async throws {
        let directories = try Directories()
        defer { directories.remove() }
        let manager = try await InProcessManager(
            state: try Self.browsersDeclared(), profiles: Self.profiles, browsers: directories.paths)
        defer { Task { await manager.stop() } }
        manager.changedProperties.watch([KioskWire.Member.browserPolicies])
        let client = try ManagerClient(address: manager.bus.address)
        // kioskd's start wrote what the state says: nothing denied, no policy.
        #expect(try directories.chromium() == .object([]))
        #expect(try client.property("BrowserPolicies") == ManagerObject.browserPoliciesValue([]))

        try client.call("StartSession", [.string("web")])
        // The reply comes once the file is written: the session's denials are in force.
        #expect(
            try directories.chromium().description
                == #"{"URLBlocklist":["*"],"URLAllowlist":["https://museum.example","example.org/tickets"],"DeveloperToolsAvailability":2}"#
        )
        #expect(try client.state(Self.chromium, Self.chromium + ".navigation") == "deny")
        // BrowserPolicies says what is in force and why, with its PropertiesChanged.
        let navigation = Self.chromium + ".navigation"
        let inForce = [
            BrowserPolicy(browser: .chromium, name: "URLBlocklist", value: .strings(["*"]), cause: navigation),
            BrowserPolicy(
                browser: .chromium, name: "URLAllowlist",
                value: .strings(["https://museum.example", "example.org/tickets"]),
                cause: navigation),
            BrowserPolicy(
                browser: .chromium, name: "DeveloperToolsAvailability", value: .int(2),
                cause: Self.chromium + ".devtools"),
        ]
        let value = ManagerObject.browserPoliciesValue(inForce)
        #expect(try client.property("BrowserPolicies") == value)
        #expect(
            manager.changedProperties.waitFor("BrowserPolicies=\(DBusValue.variant(value))"),
            "\(manager.changedProperties.all)")
        #expect(try directories.firefox() == (try JSONValue.parse(Array(Self.adminFirefox.utf8))), "Firefox untouched")

        try client.call("ForceEndSession")
        #expect(try client.property("SessionState")?.string == "inactive")
        #expect(try directories.chromium() == .object([]), "the presets restored: no policy")
        #expect(try client.property("BrowserPolicies") == ManagerObject.browserPoliciesValue([]))
    }

    @Test func anAdminsDenyAndAllowRewriteFirefoxsKeysAndKeepTheAdmins() async throws {
        let directories = try Directories()
        defer { directories.remove() }
        let manager = try await InProcessManager(state: try Self.browsersDeclared(), browsers: directories.paths)
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        let admin = try JSONValue.parse(Array(Self.adminFirefox.utf8))
        #expect(try directories.firefox() == admin, "nothing denied: the admin's file as it was")

        for kind in ["printing", "devtools", "camera"] {
            try client.call(
                "SetRestrictionState", [.string(Self.firefox), .string("\(Self.firefox).\(kind)"), .string("deny")])
        }
        #expect(
            try directories.firefox().description
                == #"{"policies":{"Homepage":{"URL":"https://museum.example","Locked":true},"PrintingEnabled":false,"DisableDeveloperTools":true,"Permissions":{"Camera":{"BlockNewRequests":true,"Locked":true}}}}"#
        )
        for kind in ["printing", "devtools", "camera"] {
            try client.call(
                "SetRestrictionState", [.string(Self.firefox), .string("\(Self.firefox).\(kind)"), .string("allow")])
        }
        #expect(try directories.firefox() == admin, "the admin's PrintingEnabled back, kioskd's keys gone")
        #expect(try directories.chromium() == .object([]))
    }

    @Test func aRestartWritesWhatThePersistedStateSaysBeforeAnythingIsServed() async throws {
        let directories = try Directories()
        defer { directories.remove() }
        var state = try Self.browsersDeclared()
        try state.registry.setState(.deny, of: Browser.chromium.restriction(.printing), in: Browser.chromium.app)
        // A file left over from before (stale), which the restart must replace.
        try Data(#"{"DeveloperToolsAvailability": 2}"#.utf8).write(
            to: URL(fileURLWithPath: directories.paths.chromiumFile))
        let manager = try await InProcessManager(state: state, browsers: directories.paths)
        defer { Task { await manager.stop() } }
        // InProcessManager returns once the bus name is taken: the file was written before.
        #expect(try directories.chromium().description == #"{"PrintingEnabled":false}"#)
    }

    /// Which Firefox keys are kioskd's, and the admin's values they replaced, survive a restart:
    /// the next kioskd gives the admin's value back.
    @Test func firefoxsKeysAreLetGoAfterARestart() async throws {
        let directories = try Directories()
        defer { directories.remove() }
        let admin = try JSONValue.parse(Array(Self.adminFirefox.utf8))
        let first = try await InProcessManager(state: try Self.browsersDeclared(), browsers: directories.paths)
        let client = try ManagerClient(address: first.bus.address)
        try client.call(
            "SetRestrictionState", [.string(Self.firefox), .string(Self.firefox + ".printing"), .string("deny")])
        #expect(try directories.firefox()["policies"]?["PrintingEnabled"] == .bool(false))
        let saved = try #require(first.store.saved.last)
        await first.stop()

        let second = try await InProcessManager(state: saved, browsers: directories.paths)
        defer { Task { await second.stop() } }
        #expect(try directories.firefox()["policies"]?["PrintingEnabled"] == .bool(false), "still denied")
        let again = try ManagerClient(address: second.bus.address)
        try again.call(
            "SetRestrictionState", [.string(Self.firefox), .string(Self.firefox + ".printing"), .string("allow")])
        #expect(try directories.firefox() == admin, "the admin's PrintingEnabled = true back")
    }

    @Test func reservedIdsAreRefusedToRootAndChangeNothing() async throws {
        let manager = try await InProcessManager(uid: 0, state: try Self.browsersDeclared())
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        let register = try #require(
            client.error(
                "RegisterApplication",
                [.string(Self.chromium), .array(elementSignature: "(sss)", [])]))
        #expect(register.name == KioskError.Code.accessDenied.dbusName)
        #expect(register.message.contains("a browser kioskd declares itself"))
        let unregister = try #require(client.error("UnregisterApplication", [.string(Self.firefox)]))
        #expect(unregister.name == KioskError.Code.accessDenied.dbusName)
        let apps = try client.call("ListApplications").first?.array?.compactMap(\.string)
        #expect(apps == [Self.chromium, Self.firefox])
        let restrictions = try client.call("ListRestrictions", [.string(Self.chromium)]).first?.array
        #expect(restrictions?.count == 8)
        #expect(manager.store.saved.isEmpty, "nothing was written")
    }

    @Test func aMissingOrForeignPolicyDirectoryRefusesTheSession() async throws {
        let directories = try Directories(firefox: false)
        defer { directories.remove() }
        let manager = try await InProcessManager(
            state: try Self.browsersDeclared(), profiles: Self.profiles, browsers: directories.paths)
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)

        let missing = try #require(client.error("StartSession", [.string("fox")]))
        #expect(
            missing.message.contains("Firefox's policy directory \(directories.paths.firefoxDirectory) does not exist"))
        #expect(try client.property("SessionState")?.string == "inactive")

        guard geteuid() == 0 else { return }  // chown needs root (CI runs as root)
        #expect(chown(directories.paths.chromiumDirectory, 1000, 1000) == 0)
        let foreign = try #require(client.error("StartSession", [.string("web")]))
        #expect(foreign.message.contains("is owned by uid 1000"), "\(foreign.message)")
        #expect(try client.property("SessionState")?.string == "inactive")

        #expect(chown(directories.paths.chromiumDirectory, 0, 0) == 0)
        #expect(chmod(directories.paths.chromiumDirectory, 0o777) == 0)
        let writable = try #require(client.error("StartSession", [.string("web")]))
        #expect(writable.message.contains("writable by others"), "\(writable.message)")
        #expect(try client.property("SessionState")?.string == "inactive")
        #expect(chmod(directories.paths.chromiumDirectory, 0o755) == 0)
        try client.call("StartSession", [.string("web")])
    }

    /// A write that fails once the session is active (checked before it started): the session
    /// stands with its input locks, SessionProblem says which policy is not in force and why,
    /// BrowserPolicies lists none of that browser's, and the next change writes it again.
    @Test func aWriteThatFailsDuringTheSessionIsTheSessionsProblem() async throws {
        let directories = try Directories()
        defer { directories.remove() }
        let manager = try await InProcessManager(
            state: try Self.browsersDeclared(), profiles: Self.profiles, browsers: directories.paths)
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        try client.call("StartSession", [.string("web")])
        #expect(try client.property("SessionProblem")?.string == "")

        // Chromium's file cannot be replaced: a directory (not empty) where it belongs.
        let file = directories.paths.chromiumFile
        try FileManager.default.removeItem(atPath: file)
        try FileManager.default.createDirectory(atPath: file + "/in-the-way", withIntermediateDirectories: true)
        try client.call(
            "SetRestrictionState", [.string(Self.chromium), .string(Self.chromium + ".printing"), .string("deny")])
        let problem = try #require(try client.property("SessionProblem")?.string)
        #expect(problem.contains("Chromium's policy could not be written"), "\(problem)")
        #expect(try client.property("SessionState")?.string == "active")
        #expect(try client.property("BrowserPolicies") == ManagerObject.browserPoliciesValue([]))

        try FileManager.default.removeItem(atPath: file)
        try client.call(
            "SetRestrictionState", [.string(Self.chromium), .string(Self.chromium + ".camera"), .string("deny")])
        #expect(try client.property("SessionProblem")?.string == "")
        #expect(try directories.chromium()["PrintingEnabled"] == .bool(false))
        #expect(try directories.chromium()["VideoCaptureAllowed"] == .bool(false))
    }

    @Test func anAdminsFileThatIsNotJSONIsLeftAloneAndSaidSo() async throws {
        let directories = try Directories()
        defer { directories.remove() }
        let broken = Data("{\"policies\": {".utf8)
        try broken.write(to: URL(fileURLWithPath: directories.paths.firefoxFile))
        let manager = try await InProcessManager(
            state: try Self.browsersDeclared(), profiles: Self.profiles, browsers: directories.paths)
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        let refused = try #require(client.error("StartSession", [.string("fox")]))
        #expect(refused.message.contains("is not JSON"), "\(refused.message)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: directories.paths.firefoxFile)) == broken)
    }

    // MARK: The web apps' manifests

    static let guide = """
        id = "org.example.MuseumGuide"
        origins = ["https://guide.museum.example"]

        [[restriction]]
        id = "org.example.MuseumGuide.video"
        title = "Exhibit videos"
        detail = "Visitors may play the video beside each exhibit."
        """

    static func writeManifest(_ text: String, to directory: String, name: String = "org.example.MuseumGuide") throws {
        let path = directory + "/" + name + ".toml"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
    }

    /// At the start: the web app declared as root's, its id reserved, its origins in Chromium's
    /// policy. A reload takes a new restriction; a malformed edit, or a file others may write,
    /// changes nothing in force; a manifest claiming a browser's id declares nothing.
    @Test func manifestsDeclareTheirAppsAndAMalformedOneChangesNothing() async throws {
        let directories = try Directories()
        defer { directories.remove() }
        let apps = directories.root.appendingPathComponent("etc/kioskd/apps").path
        try FileManager.default.createDirectory(atPath: apps, withIntermediateDirectories: true)
        try Self.writeManifest(Self.guide, to: apps)
        try Self.writeManifest(
            Self.guide.replacingOccurrences(of: "org.example.MuseumGuide", with: "org.chromium.Chromium"), to: apps,
            name: "org.chromium.Chromium")
        let manager = try await InProcessManager(
            uid: 0, state: try Self.browsersDeclared(), browsers: directories.paths, appsDirectory: apps)
        defer { Task { await manager.stop() } }
        let client = try ManagerClient(address: manager.bus.address)
        let guideID = "org.example.MuseumGuide"

        #expect(try client.call("ListApplications").first?.strings == [Self.chromium, Self.firefox, guideID])
        #expect(manager.store.saved.last?.registry.owner(of: try AppID(guideID)) == 0)
        #expect(
            try client.call("ListRestrictions", [.string(Self.chromium)]).first?.array?.count == 8, "not the manifest's"
        )
        let origins = JSONValue.strings(["https://guide.museum.example"])
        #expect(
            try directories.chromium()
                == .object([
                    .init("LocalNetworkAccessAllowedForUrls", origins), .init("LoopbackNetworkAllowedForUrls", origins),
                ]))
        let squat = try #require(
            client.error("RegisterApplication", [.string(guideID), .array(elementSignature: "(sss)", [])]))
        #expect(squat.name == KioskError.Code.accessDenied.dbusName)
        #expect(squat.message.contains("declared by its manifest"))
        #expect(client.errorName("UnregisterApplication", [.string(guideID)]) == KioskError.Code.accessDenied.dbusName)

        // A new restriction and a new origin: declared (allow), in the policy, once the reload replies.
        try Self.writeManifest(
            Self.guide.replacingOccurrences(
                of: #"origins = ["https://guide.museum.example"]"#,
                with: #"origins = ["https://guide.museum.example", "http://127.0.0.1:8080"]"#)
                + "\n[[restriction]]\nid = \"org.example.MuseumGuide.audio\"\ntitle = \"Audio\"\ndetail = \"The spoken guide.\"\n",
            to: apps)
        try client.call("ReloadProfiles")
        #expect(try client.call("ListRestrictions", [.string(guideID)]).first?.array?.count == 2)
        #expect(try client.state(guideID, guideID + ".audio") == "allow")
        #expect(
            try directories.chromium()["LoopbackNetworkAllowedForUrls"]
                == .strings(["https://guide.museum.example", "http://127.0.0.1:8080"]))

        // Malformed: the reload replies, the app keeps its two restrictions and its origins.
        let before = try client.call("ListRestrictions", [.string(guideID)])
        let policy = try directories.chromium()
        try Self.writeManifest(
            "id = \"org.example.MuseumGuide\"\norigins = [\"https://guide.museum.example/\"]\n", to: apps)
        try client.call("ReloadProfiles")
        #expect(try client.call("ListRestrictions", [.string(guideID)]) == before)
        #expect(try directories.chromium() == policy)
        #expect(
            client.errorName("UnregisterApplication", [.string(guideID)]) == KioskError.Code.accessDenied.dbusName,
            "still reserved")

        // Writable by others: refused the same way.
        try Self.writeManifest(Self.guide, to: apps)
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: apps + "/\(guideID).toml")
        try client.call("ReloadProfiles")
        #expect(try client.call("ListRestrictions", [.string(guideID)]) == before)
    }
}
