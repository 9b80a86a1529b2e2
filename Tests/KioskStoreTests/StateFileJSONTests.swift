import Foundation
import KioskAPI
import KioskCore
import Testing

@testable import KioskStore

/// The state file writes the registry's apps from their packed tables (``StateFileJSON``); what
/// it writes must be what `JSONEncoder` writes, which is what a load decodes.
@Suite struct StateFileJSONTests {
    let app = try! AppID("org.example.MuseumMap")

    func id(_ name: String) -> RestrictionID { try! RestrictionID("org.example.MuseumMap.\(name)") }

    func declarations(_ app: String, _ names: [String]) -> [RestrictionDeclaration] {
        names.map { try! RestrictionDeclaration(id: "\(app).\($0)", title: "Title \($0)", detail: "Detail \($0)") }
    }

    /// The state file's strings are written as `JSONEncoder` writes them, for every ASCII byte
    /// and for text beyond it.
    @Test func jsonStringsAreEscapedAsJSONEncoderDoes() throws {
        let strings =
            (0..<0x80).map { String(UnicodeScalar(UInt8($0))) }
            + ["", "é", "🗺️\u{2028}\u{85}", #"a/b\c"d"#, "\u{7F}\u{0}x", String(repeating: "z", count: 300)]
        for string in strings {
            var out: [UInt8] = []
            JSONText.appendString(string, to: &out)
            #expect(out == Array(try JSONEncoder().encode(string)), "\(string.unicodeScalars.map(\.value))")
        }
    }

    /// An app written from its packed table is what `JSONEncoder` writes for it.
    @Test func appsAreWrittenAsJSONEncoderWritesThem() throws {
        var registry = Registry()
        try registry.declare(
            app,
            restrictions: [
                try RestrictionDeclaration(
                    id: "org.example.MuseumMap.a", title: #"Quote " slash / back \ é"#, detail: "Line\n\tTab 🗺️"),
                try RestrictionDeclaration(id: "org.example.MuseumMap.b", title: "", detail: ""),
            ] + declarations(app.rawValue, ["c", "d"]), uid: 4_000_000_000)
        try registry.setState(.deny, of: id("b"), in: app)
        try registry.declare(app, restrictions: declarations(app.rawValue, ["a", "c"]), uid: 4_000_000_000)
        let other = try AppID("org.example.Empty")
        try registry.declare(other, restrictions: [], uid: 0)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for application in registry.applications {
            var out: [UInt8] = []
            StateFileJSON.append(application, to: &out)
            #expect(
                String(decoding: out, as: UTF8.self) == String(decoding: try encoder.encode(application), as: UTF8.self)
            )
        }
    }

}
