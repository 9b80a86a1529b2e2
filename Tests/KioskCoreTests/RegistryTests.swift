import KioskCore
import PropertyBased
import Testing

func declarations(_ app: String, _ names: [String]) -> [RestrictionDeclaration] {
    names.map { try! RestrictionDeclaration(id: "\(app).\($0)", title: "Title \($0)", detail: "Detail \($0)") }
}

@Suite struct RegistryTests {
    let app = try! AppID("org.example.MuseumMap")

    @Test func declareListsInOrderAllAllowed() throws {
        var registry = Registry()
        try registry.declare(app, restrictions: declarations(app.rawValue, ["zoom", "controls", "audio"]), uid: 1000)
        let listed = try registry.restrictions(of: app)
        #expect(
            listed.map(\.id.rawValue) == [
                "org.example.MuseumMap.zoom", "org.example.MuseumMap.controls", "org.example.MuseumMap.audio",
            ])
        #expect(listed.allSatisfy { $0.state == .allow && !$0.retired })
        #expect(registry.applicationIDs == [app])
        #expect(try registry.application(app).ownerUID == 1000)
    }

    @Test func reDeclaringReconciles() throws {
        var registry = Registry()
        try registry.declare(app, restrictions: declarations(app.rawValue, ["a", "b", "c"]), uid: 1000)
        try registry.setState(.deny, of: RestrictionID("org.example.MuseumMap.b"), in: app)
        try registry.setState(.deny, of: RestrictionID("org.example.MuseumMap.c"), in: app)
        // c retired, d new, b's title changed, order changed.
        var next = declarations(app.rawValue, ["d", "b"])
        next[1] = try RestrictionDeclaration(id: "org.example.MuseumMap.b", title: "New title", detail: "New detail")
        #expect(try registry.declare(app, restrictions: next, uid: 1000))
        let declared = try registry.restrictions(of: app)
        #expect(declared.map(\.id.rawValue) == ["org.example.MuseumMap.d", "org.example.MuseumMap.b"])
        #expect(declared.map(\.state) == [.allow, .deny])
        #expect(declared[1].title == "New title" && declared[1].detail == "New detail")
        let all = try registry.restrictions(of: app, includeRetired: true)
        #expect(
            all.last?.id.rawValue == "org.example.MuseumMap.c" && all.last?.retired == true && all.last?.state == .deny)
        #expect(try registry.state(of: RestrictionID("org.example.MuseumMap.c"), in: app) == .deny)
        // c comes back with its state.
        try registry.declare(app, restrictions: declarations(app.rawValue, ["c"]), uid: 1000)
        #expect(try registry.restrictions(of: app).map(\.state) == [.deny])
    }

    @Test func sameDeclarationTwiceIsANoOp() throws {
        var registry = Registry()
        #expect(try registry.declare(app, restrictions: declarations(app.rawValue, ["a"]), uid: 1000))
        #expect(try registry.declare(app, restrictions: declarations(app.rawValue, ["a"]), uid: 1000) == false)
    }

    @Test func anotherUIDCannotTakeAnAppButAnAdminCan() throws {
        var registry = Registry()
        try registry.declare(app, restrictions: declarations(app.rawValue, ["a"]), uid: 1000)
        let before = registry
        #expect {
            try registry.declare(app, restrictions: [], uid: 1001)
        } throws: { ($0 as? KioskError)?.code == .accessDenied }
        #expect(registry == before)
        try registry.declare(app, restrictions: declarations(app.rawValue, ["a", "b"]), uid: 0, isAdmin: true)
        #expect(try registry.application(app).ownerUID == 1000)
    }

    @Test func setStateReportsChangeAndNoOp() throws {
        var registry = Registry()
        try registry.declare(app, restrictions: declarations(app.rawValue, ["a"]), uid: 1000)
        let id = try RestrictionID("org.example.MuseumMap.a")
        #expect(try registry.setState(.deny, of: id, in: app))
        #expect(try registry.setState(.deny, of: id, in: app) == false)
        #expect(registry.deniedCount == 1)
    }

    /// Invalid calls: each throws the documented error and leaves the registry as it was.
    @Test(arguments: ["unknownApp", "unknownRestriction", "tooMany", "duplicate", "tooManyApps"])
    func invalidCallsChangeNothing(_ kind: String) throws {
        var registry = Registry()
        try registry.declare(app, restrictions: declarations(app.rawValue, ["a"]), uid: 1000)
        if kind == "tooManyApps" {
            for i in 1..<KioskWire.Limits.applications {
                // Root's: the cap of 1,024 is everyone's; a uid other than root stops at 32 of its own.
                try registry.declare(AppID("org.example.Filler\(i)"), restrictions: [], uid: 0)
            }
        }
        let before = registry
        let expected: KioskError.Code
        do {
            switch kind {
            case "unknownApp":
                expected = .unknownApplication
                try registry.setState(.deny, of: RestrictionID("org.example.Other.a"), in: AppID("org.example.Other"))
            case "unknownRestriction":
                expected = .unknownRestriction
                try registry.setState(.deny, of: RestrictionID("org.example.MuseumMap.nope"), in: app)
            case "tooMany":
                expected = .invalidArgument
                try registry.declare(
                    app, restrictions: declarations(app.rawValue, (0...256).map { "r\($0)" }), uid: 1000)
            case "duplicate":
                expected = .invalidArgument
                try registry.declare(app, restrictions: declarations(app.rawValue, ["x", "y", "x"]), uid: 1000)
            default:
                expected = .invalidArgument
                try registry.declare(AppID("org.example.OneTooMany"), restrictions: [], uid: 1000)
            }
            Issue.record("\(kind) did not throw")
            return
        } catch {
            #expect(error.code == expected, "\(kind): \(error.message)")
        }
        #expect(registry == before)
    }

    @Test func exactly256RestrictionsAreAllowed() throws {
        var registry = Registry()
        try registry.declare(app, restrictions: declarations(app.rawValue, (0..<256).map { "r\($0)" }), uid: 1000)
        #expect(try registry.restrictions(of: app).count == 256)
    }

    @Test func retiredRestrictionsAreCapped() throws {
        var registry = Registry()
        for round in 0..<3 {
            try registry.declare(
                app, restrictions: declarations(app.rawValue, (0..<200).map { "g\(round)r\($0)" }), uid: 1000)
        }
        let all = try registry.restrictions(of: app, includeRetired: true)
        #expect(all.count { $0.retired } == KioskWire.Limits.retiredPerApp)
        // The most recently retired are the ones kept.
        #expect(all.contains { $0.id.rawValue == "org.example.MuseumMap.g1r0" })
        #expect(!all.contains { $0.id.rawValue == "org.example.MuseumMap.g0r199" })
    }

    /// An owner retired 256 ids, then 256 more, then declared `controls` again, and
    /// got it back as `allow` where an admin had denied it.
    @Test func aDeniedRestrictionIsNeverForgottenByRetiringOthers() throws {
        var registry = Registry()
        try registry.declare(app, restrictions: declarations(app.rawValue, ["controls"]), uid: 1000)
        try registry.setState(.deny, of: try RestrictionID("org.example.MuseumMap.controls"), in: app)
        for batch in ["a", "b"] {
            try registry.declare(
                app, restrictions: declarations(app.rawValue, (0..<256).map { "\(batch)\($0)" }), uid: 1000)
        }
        let retired = try registry.restrictions(of: app, includeRetired: true).filter(\.retired)
        #expect(retired.count == KioskWire.Limits.retiredPerApp)
        #expect(retired.contains { $0.id.rawValue == "org.example.MuseumMap.controls" && $0.state == .deny })
        // An allow one made room instead: 255 of the 256 a's are kept.
        #expect(retired.count { $0.id.rawValue.hasPrefix("org.example.MuseumMap.a") } == 255)
        try registry.declare(app, restrictions: declarations(app.rawValue, ["controls"]), uid: 1000)
        #expect(try registry.state(of: try RestrictionID("org.example.MuseumMap.controls"), in: app) == .deny)
    }

    @Test func aRegistrationThatWouldForgetDeniedRestrictionsIsRefusedAndChangesNothing() throws {
        var registry = Registry()
        let denied = (0..<KioskWire.Limits.retiredPerApp + 1).map { "d\($0)" }
        try registry.declare(app, restrictions: declarations(app.rawValue, Array(denied.prefix(200))), uid: 1000)
        try registry.declare(app, restrictions: declarations(app.rawValue, Array(denied.dropFirst(200))), uid: 1000)
        for id in denied {
            try registry.setState(.deny, of: try RestrictionID("org.example.MuseumMap.\(id)"), in: app)
        }
        let before = registry
        let error = try #require(throws: KioskError.self) {
            try registry.declare(app, restrictions: declarations(app.rawValue, ["other"]), uid: 1000)
        }
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("257 restrictions that an admin or a profile denied"), "\(error)")
        #expect(registry == before)
    }
}

/// Reconciliation never loses a state that the new declaration still declares.
@Suite struct ReconciliationProperties {
    static let app = try! AppID("org.example.Prop")
    static let pool = (0..<12).map { "r\($0)" }

    /// A declaration: a subset of the pool, in some order.
    static let declarationGen = Gen.int(in: 0..<12).array(of: 0...12).map { indices in
        var seen = Set<Int>()
        return indices.filter { seen.insert($0).inserted }.map { pool[$0] }
    }
    static let denialsGen = Gen.int(in: 0..<12).array(of: 0...12)

    @Test func declaringAThenBKeepsEveryStateBStillDeclares() async {
        await propertyCheck(count: 300, input: Self.declarationGen, Self.denialsGen, Self.declarationGen) {
            a, denials, b in
            var registry = Registry()
            try! registry.declare(Self.app, restrictions: declarations(Self.app.rawValue, a), uid: 1)
            for index in denials where a.contains(Self.pool[index]) {
                try! registry.setState(
                    .deny, of: RestrictionID("\(Self.app.rawValue).\(Self.pool[index])"), in: Self.app)
            }
            let before = Dictionary(
                uniqueKeysWithValues: try! registry.restrictions(of: Self.app, includeRetired: true).map {
                    ($0.id, $0.state)
                })
            try! registry.declare(Self.app, restrictions: declarations(Self.app.rawValue, b), uid: 1)
            let after = try! registry.restrictions(of: Self.app, includeRetired: true)
            // B's ids come first, in B's order, not retired.
            #expect(after.prefix(b.count).map(\.id.rawValue) == b.map { "\(Self.app.rawValue).\($0)" })
            #expect(after.prefix(b.count).allSatisfy { !$0.retired })
            for restriction in after {
                // Every state that existed before is kept, declared or retired; new ones are allow.
                #expect(restriction.state == before[restriction.id] ?? .allow)
            }
            // Nothing that existed before is dropped (the pool is far below the retired cap).
            #expect(Set(before.keys).isSubset(of: Set(after.map(\.id))))
        }
    }

    @Test func aThenBThenAIsLikeAAlone() async {
        await propertyCheck(count: 200, input: Self.declarationGen, Self.declarationGen) { a, b in
            var once = Registry()
            try! once.declare(Self.app, restrictions: declarations(Self.app.rawValue, a), uid: 1)
            var thrice = once
            try! thrice.declare(Self.app, restrictions: declarations(Self.app.rawValue, b), uid: 1)
            try! thrice.declare(Self.app, restrictions: declarations(Self.app.rawValue, a), uid: 1)
            #expect(try! thrice.restrictions(of: Self.app) == once.restrictions(of: Self.app))
        }
    }
}
