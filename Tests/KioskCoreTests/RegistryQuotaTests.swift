import KioskCore
import Testing

/// No uid can fill the registry for everyone, and an admin can take an id back.
@Suite struct RegistryQuotaTests {
    static func app(_ n: Int) -> AppID { try! AppID("org.example.App\(n)") }

    /// One restriction whose text (id + title + detail) is about `bytes` long.
    static func large(_ app: AppID, _ bytes: Int) -> [RestrictionDeclaration] {
        [try! RestrictionDeclaration(id: "\(app).r", title: "t", detail: String(repeating: "x", count: bytes))]
    }

    @Test func aUIDOtherThanRootOwnsAtMost32Apps() throws {
        var registry = Registry()
        for n in 0..<KioskWire.Limits.applicationsPerUID {
            try registry.declare(Self.app(n), restrictions: declarations(Self.app(n).rawValue, ["a"]), uid: 65534)
        }
        let before = registry
        let error = try #require(throws: KioskError.self) {
            try registry.declare(Self.app(99), restrictions: [], uid: 65534)
        }
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("uid 65534 already owns 32 applications"), "\(error)")
        #expect(registry == before)
        // Its own apps it may still re-declare; other uids and root are not held back by it.
        try registry.declare(Self.app(0), restrictions: declarations(Self.app(0).rawValue, ["b"]), uid: 65534)
        try registry.declare(Self.app(100), restrictions: [], uid: 1000)
        for n in 200..<240 { try registry.declare(Self.app(n), restrictions: [], uid: 0) }
        #expect(registry.applications.count == 32 + 1 + 40)
    }

    @Test func aUIDOtherThanRootKeepsAtMostOneMiBOfText() throws {
        var registry = Registry()
        // Four apps of 255,000 bytes: 1,020,000 of 1,048,576.
        for n in 0..<4 { try registry.declare(Self.app(n), restrictions: Self.large(Self.app(n), 4000), uid: 1000) }
        // The details are at most 4096 bytes: grow one app to many restrictions instead.
        func many(_ app: AppID, _ count: Int) -> [RestrictionDeclaration] {
            (0..<count).map {
                try! RestrictionDeclaration(
                    id: "\(app).r\($0)", title: "t", detail: String(repeating: "x", count: 4000))
            }
        }
        for n in 0..<4 { try registry.declare(Self.app(n), restrictions: many(Self.app(n), 63), uid: 1000) }
        let before = registry
        let error = try #require(throws: KioskError.self) {
            try registry.declare(Self.app(9), restrictions: many(Self.app(9), 10), uid: 1000)
        }
        #expect(error.message.contains("more than the 1048576 bytes a uid other than root may keep"), "\(error)")
        #expect(registry == before)
        // Shrinking is always taken; root is held to the global cap only.
        try registry.declare(Self.app(0), restrictions: many(Self.app(0), 1), uid: 1000)
        try registry.declare(Self.app(10), restrictions: many(Self.app(10), 250), uid: 0)
    }

    @Test func allAppsTogetherKeepAtMost16MiBOfText() throws {
        var registry = Registry()
        func many(_ app: AppID) -> [RestrictionDeclaration] {
            (0..<256).map {
                try! RestrictionDeclaration(
                    id: "\(app).r\($0)", title: "t", detail: String(repeating: "x", count: 4096))
            }
        }
        var n = 0
        var refusal: KioskError?
        while refusal == nil, n < 40 {
            do { try registry.declare(Self.app(n), restrictions: many(Self.app(n)), uid: 0) } catch { refusal = error }
            n += 1
        }
        let error = try #require(refusal)
        #expect(error.message.contains("more than the 16777216 bytes kioskd keeps"), "\(error)")
        #expect(n == 16)  // 15 apps of 1.05 MB fit
    }

    @Test func unregisterForgetsTheAppAndItsOwnerAndKeepsTheOthersFindable() throws {
        var registry = Registry()
        for n in [5, 1, 3, 2, 4] {
            try registry.declare(Self.app(n), restrictions: declarations(Self.app(n).rawValue, ["a"]), uid: 65534)
        }
        try registry.unregister(Self.app(3))
        #expect(registry.applicationIDs == [5, 1, 2, 4].map(Self.app))
        for n in [5, 1, 2, 4] { #expect(try registry.application(Self.app(n)).id == Self.app(n)) }
        #expect(throws: KioskError.self) { try registry.application(Self.app(3)) }
        #expect(registry.owner(of: Self.app(3)) == nil)
        #expect(throws: KioskError.self) { try registry.unregister(Self.app(3)) }
        // Anyone may register the id again, and owns it.
        try registry.declare(Self.app(3), restrictions: [], uid: 1000)
        #expect(registry.owner(of: Self.app(3)) == 1000)
    }

    @Test func anAppTheSessionPresetsCannotBeForgotten() throws {
        let museum = try AppID("org.example.MuseumMap")
        var state = KioskState()
        try state.declare(museum, restrictions: declarations(museum.rawValue, ["controls"]), uid: 1000, isAdmin: false)
        try state.declare(Self.app(1), restrictions: [], uid: 1000, isAdmin: false)
        let profile = try ProfileParser.parse(
            source: "[restrictions.\"org.example.MuseumMap\"]\n\"org.example.MuseumMap.controls\" = \"deny\"\n",
            file: "museum.toml")
        _ = try state.session.start(
            profileName: "museum", profile: profile, at: Timestamp(microseconds: 1), registry: &state.registry)
        let error = try #require(throws: KioskError.self) { try state.unregister(museum) }
        #expect(error.code == .sessionActive)
        try state.unregister(Self.app(1))  // not preset: fine
        #expect(state.registry.applicationIDs == [museum])
    }
}
