import Foundation
import Testing

@testable import KioskCore

/// The registry keeps each app's restrictions packed (text in one buffer, a small entry each):
/// what that must not change is what a caller and the state file see.
@Suite struct RegistryStorageTests {
    let app = try! AppID("org.example.MuseumMap")

    func id(_ name: String) -> RestrictionID { try! RestrictionID("org.example.MuseumMap.\(name)") }

    /// The JSON the state file held before the registry was packed, byte for byte.
    @Test func encodingKeepsTheStateFileFormat() throws {
        var registry = Registry()
        try registry.declare(app, restrictions: declarations(app.rawValue, ["zoom", "controls"]), uid: 1000)
        try registry.setState(.deny, of: id("controls"), in: app)
        try registry.declare(app, restrictions: declarations(app.rawValue, ["zoom"]), uid: 1000)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try encoder.encode(registry), as: UTF8.self)
        #expect(
            json == #"{"applications":[{"id":"org.example.MuseumMap","ownerUID":1000,"restrictions":"#
                + #"[["org.example.MuseumMap.zoom","Title zoom","Detail zoom","allow",false],"#
                + #"["org.example.MuseumMap.controls","Title controls","Detail controls","deny",true]]}]}"#)
        #expect(try JSONDecoder().decode(Registry.self, from: Data(json.utf8)) == registry)
    }

    /// Equality is about the restrictions, not about how a registry got them.
    @Test func sameRestrictionsByDifferentPathsAreEqual() throws {
        var direct = Registry()
        try direct.declare(app, restrictions: declarations(app.rawValue, ["a", "b"]), uid: 1000)
        try direct.setState(.deny, of: id("b"), in: app)
        var roundabout = Registry()
        try roundabout.declare(app, restrictions: declarations(app.rawValue, ["b", "c"]), uid: 1000)
        try roundabout.setState(.deny, of: id("b"), in: app)
        try roundabout.declare(app, restrictions: declarations(app.rawValue, ["a", "b", "c"]), uid: 1000)
        try roundabout.declare(app, restrictions: declarations(app.rawValue, ["a", "b"]), uid: 1000)
        #expect(roundabout != direct)  // c is kept as retired
        var withoutC = Registry()
        try withoutC.declare(app, restrictions: declarations(app.rawValue, ["b"]), uid: 1000)
        try withoutC.setState(.deny, of: id("b"), in: app)
        try withoutC.declare(app, restrictions: declarations(app.rawValue, ["a", "b"]), uid: 1000)
        #expect(withoutC == direct)
        #expect(withoutC.hashValue == direct.hashValue)
        let decoded = try JSONDecoder().decode(Registry.self, from: JSONEncoder().encode(direct))
        #expect(decoded == direct && decoded.hashValue == direct.hashValue)
    }

    /// Ids compared in place: prefixes, suffixes and equal lengths do not match each other.
    @Test func lookupsMatchWholeIDsOnly() throws {
        var registry = Registry()
        let names = ["ab", "b", "abc", "ba", "xb", "a-b", "a_b"]
        try registry.declare(app, restrictions: declarations(app.rawValue, names), uid: 1000)
        for (index, name) in names.enumerated() where index % 2 == 0 {
            try registry.setState(.deny, of: id(name), in: app)
        }
        for (index, name) in names.enumerated() {
            #expect(registry.contains(id(name), in: app))
            #expect(try registry.state(of: id(name), in: app) == (index % 2 == 0 ? .deny : .allow), "\(name)")
        }
        for missing in ["a", "abcd", "bb", "cb", "aab", "a.b"] {
            #expect(!registry.contains(id(missing), in: app), "\(missing)")
            #expect(throws: KioskError.self) { try registry.state(of: id(missing), in: app) }
        }
        #expect(registry.deniedCount == 4)
        let listed = try registry.restrictions(of: app)
        #expect(listed.map(\.id.rawValue) == names.map { "\(app.rawValue).\($0)" })
        #expect(
            listed.map(\.title) == names.map { "Title \($0)" } && listed.map(\.detail) == names.map { "Detail \($0)" })
    }

    /// Non-ASCII text and the longest strings the limits allow survive packing unchanged.
    @Test func longestAndNonASCIITextRoundTrips() throws {
        let longID =
            app.rawValue + "." + String(repeating: "x", count: KioskWire.Limits.idBytes - app.rawValue.utf8.count - 1)
        let title = String(repeating: "é", count: KioskWire.Limits.titleBytes / 2)
        let detail = String(repeating: "🗺️\n", count: KioskWire.Limits.detailBytes / "🗺️\n".utf8.count)
        var registry = Registry()
        try registry.declare(
            app,
            restrictions: [
                try RestrictionDeclaration(id: longID, title: title, detail: detail),
                try RestrictionDeclaration(id: "\(app.rawValue).short", title: "Kurz", detail: "Grüße"),
            ], uid: 1000)
        let listed = try registry.restrictions(of: app)
        #expect(listed.map(\.id.rawValue) == [longID, "\(app.rawValue).short"])
        #expect(listed[0].title == title && listed[0].detail == detail && listed[1].detail == "Grüße")
        #expect(try JSONDecoder().decode(Registry.self, from: JSONEncoder().encode(registry)) == registry)
    }

    static let restrictionFile: [(String, String)] = [
        (#"[["org.example.A.x","t","d","allow",false],["org.example.A.x","t","d","deny",true]]"#, "appears twice"),
        (
            #"[["org.example.A.x","\#(String(repeating: "t", count: KioskWire.Limits.titleBytes + 1))","d","allow",false]]"#,
            "is 257 bytes long; at most 256 are allowed"
        ),
        (
            #"[["org.example.A.x","t","\#(String(repeating: "d", count: KioskWire.Limits.detailBytes + 1))","allow",false]]"#,
            "is 4097 bytes long; at most 4096 are allowed"
        ),
        (
            restrictionList(KioskWire.Limits.restrictionsPerApp + 1, retired: false),
            "more restrictions than the limits allow"
        ),
        (restrictionList(KioskWire.Limits.retiredPerApp + 1, retired: true), "more restrictions than the limits allow"),
        (#"[["org.example.A.x","t","d","allow",false,1]]"#, "more than 5 fields"),
        (#"[["org.example.A.x","t","d","maybe",false]]"#, #"The state "maybe" is unknown"#),
        (#"[["org.example.A.x","t\u0000","d","allow",false]]"#, "control character U+0000"),
        (#"[["not an id","t","d","allow",false]]"#, "not an id"),
    ]

    /// `count` restrictions of org.example.A as the state file lists them. (A function of its own:
    /// inline in the table above, Swift 6.2 gave up type-checking the table.)
    static func restrictionList(_ count: Int, retired: Bool) -> String {
        "[" + (0..<count).map { #"["org.example.A.r\#($0)","t","d","allow",\#(retired)]"# }.joined(separator: ",") + "]"
    }

    /// A hand-edited file is held to the limits every call is held to.
    @Test(arguments: restrictionFile)
    func badRestrictionsInAFileAreRejected(restrictions: String, expected: String) {
        let json = #"{"applications":[{"id":"org.example.A","ownerUID":0,"restrictions":\#(restrictions)}]}"#
        #expect {
            try JSONDecoder().decode(Registry.self, from: Data(json.utf8))
        } throws: { error in
            // Swift 6.2 prints a DecodingError's context as a debug string, its quotes escaped;
            // 6.3 prints the message as it is.
            "\(error)".replacingOccurrences(of: "\\\"", with: "\"").contains(expected)
        }
    }

    /// The id index answers as a scan of the list would: for every app, after declarations in
    /// any order, after re-declaring (which must not move an app), and after a decode.
    @Test func lookupByIndexMatchesTheList() throws {
        var registry = Registry()
        let ids = (0..<300).map { try! AppID("org.example.App\(($0 * 7919) % 300)") }
        for (n, appID) in ids.enumerated() {
            try registry.declare(appID, restrictions: declarations(appID.rawValue, ["r\(n % 5)"]), uid: UInt32(n))
            if n % 3 == 0 {
                try registry.declare(
                    ids[n / 2], restrictions: declarations(ids[n / 2].rawValue, ["x"]), uid: UInt32(n / 2))
            }
        }
        let decoded = try JSONDecoder().decode(Registry.self, from: JSONEncoder().encode(registry))
        #expect(decoded == registry && registry.applicationIDs == ids)
        for candidate in [registry, decoded] {
            for (position, app) in candidate.applications.enumerated() {
                #expect(candidate.applications.firstIndex { $0.id == app.id } == position)
                #expect(try candidate.application(app.id) == app)
                #expect(candidate.owner(of: app.id) == app.ownerUID)
                #expect(candidate.contains(app.table.id(at: 0), in: app.id))
            }
            let stranger = try AppID("org.example.App300")
            #expect(candidate.owner(of: stranger) == nil)
            #expect(throws: KioskError.self) { try candidate.application(stranger) }
            #expect(try !candidate.contains(RestrictionID("org.example.App300.r0"), in: stranger))
        }
    }

    /// The limits themselves are allowed in a file.
    @Test func aFileAtTheLimitsIsRead() throws {
        let declared = (0..<KioskWire.Limits.restrictionsPerApp).map {
            #"["org.example.A.d\#($0)","t","d","deny",false]"#
        }
        let retired = (0..<KioskWire.Limits.retiredPerApp).map { #"["org.example.A.r\#($0)","t","d","allow",true]"# }
        let json =
            #"{"applications":[{"id":"org.example.A","ownerUID":7,"restrictions":[\#((declared + retired).joined(separator: ","))]}]}"#
        let registry = try JSONDecoder().decode(Registry.self, from: Data(json.utf8))
        let a = try AppID("org.example.A")
        #expect(try registry.restrictions(of: a).count == KioskWire.Limits.restrictionsPerApp)
        #expect(
            try registry.restrictions(of: a, includeRetired: true).count == KioskWire.Limits.restrictionsPerApp
                + KioskWire.Limits.retiredPerApp)
        #expect(registry.deniedCount == KioskWire.Limits.restrictionsPerApp)
        #expect(try registry.application(a).ownerUID == 7)
    }
}
