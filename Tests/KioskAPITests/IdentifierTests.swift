import KioskAPI
import Testing

@Suite struct IdentifierTests {
    @Test(arguments: ["org.example.MuseumMap", "a.b", "org.example.Museum_Map-2", "Org.Example.X", "_a.b"])
    func validIDs(_ id: String) throws {
        #expect(try AppID(id).rawValue == id)
        #expect(try RestrictionID(id).rawValue == id)
    }

    /// Each invalid id, and a word its message must contain (the rule it breaks).
    @Test(arguments: [
        ("", "empty"),
        ("org", "one label"),
        ("org.", "empty label"),
        (".org.example", "empty label"),
        ("org..example", "empty label"),
        ("org.3example", "starting with a digit"),
        ("1org.example", "starting with a digit"),
        ("org.exa mple", "a space"),
        ("org.example/App", "'/'"),
        ("org.exämple", "U+00E4"),
        ("org.example.\u{0}", "U+0000"),
        ("a." + String(repeating: "b", count: 254), "256 bytes"),
    ])
    func invalidIDs(_ id: String, rule: String) {
        for make in [{ _ = try AppID($0) }, { _ = try RestrictionID($0) }] as [(String) throws -> Void] {
            #expect {
                try make(id)
            } throws: { error in
                guard let error = error as? KioskError else { return false }
                return error.code == .invalidArgument && error.message.contains(rule)
            }
        }
    }

    @Test func idOf255BytesIsTheLongestAllowed() throws {
        let id = "a." + String(repeating: "b", count: 253)
        #expect(id.utf8.count == 255)
        _ = try AppID(id)
    }

    @Test(arguments: [
        [0x6F, 0x72, 0x67, 0x2E, 0xFF, 0x78] as [UInt8], [0xC3, 0x28, 0x2E, 0x61], [0x61, 0x2E, 0xE2, 0x82],
    ])
    func invalidUTF8IsRefusedNotRepaired(_ bytes: [UInt8]) {
        #expect {
            try AppID(utf8: bytes)
        } throws: { error in
            (error as? KioskError)?.message.contains("not valid UTF-8") == true
        }
    }

    @Test func validUTF8BytesDecode() throws {
        #expect(try AppID(utf8: Array("org.example.App".utf8)).rawValue == "org.example.App")
    }

    @Test(arguments: [
        ("title", String(repeating: "t", count: 257), "257 bytes"),
        ("title", "two\nlines", "U+000A"),
        ("title", "bell\u{7}", "U+0007"),
        ("detail", String(repeating: "d", count: 4097), "4097 bytes"),
        ("detail", "escape\u{1B}[31m", "U+001B"),
    ])
    func badTitlesAndDetails(field: String, value: String, rule: String) {
        #expect {
            if field == "title" {
                _ = try RestrictionDeclaration(id: "org.example.A.x", title: value, detail: "")
            } else {
                _ = try RestrictionDeclaration(id: "org.example.A.x", title: "T", detail: value)
            }
        } throws: { error in
            (error as? KioskError)?.message.contains(rule) == true
        }
    }

    /// The control-character check compares code points; it must match Unicode's category Cc
    /// for every scalar (the quick byte test must not miss one).
    @Test func controlCharactersAreExactlyCategoryCc() throws {
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let isCc = scalar.properties.generalCategory == .control
            if Text.isControl(scalar) != isCc { Issue.record("U+\(String(value, radix: 16))"); return }
            if isCc || value % 4099 == 0 {
                let refused =
                    (try? Text.validate("a\(Character(scalar))b", what: "t", maxBytes: 16, multiline: false)) == nil
                #expect(refused == isCc, "U+\(String(value, radix: 16))")
            }
        }
    }

    @Test func detailsMaySpanLinesAndLimitsAreInclusive() throws {
        _ = try RestrictionDeclaration(
            id: "org.example.A.x", title: String(repeating: "é", count: 128), detail: "line 1\nline 2\ttabbed")
        _ = try RestrictionDeclaration(id: "org.example.A.x", title: "T", detail: String(repeating: "d", count: 4096))
    }

    @Test(arguments: ["allow", "deny"]) func knownStates(_ text: String) throws {
        #expect(try RestrictionState(parsing: text).rawValue == text)
    }

    @Test(arguments: ["", "Allow", "DENY", "denied", "allow "]) func unknownStates(_ text: String) {
        #expect(throws: KioskError.self) { try RestrictionState(parsing: text) }
    }

    @Test func errorCodesMapToTheirDBusNamesAndBack() {
        for code in KioskError.Code.all {
            #expect(KioskError.Code(dbusName: code.dbusName) == code)
        }
        #expect(KioskError.Code.invalidArgument.dbusName == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(KioskError.Code.throttled.dbusName == "org.kioskd.GuidedAccess1.Error.Throttled")
        #expect(KioskError.Code.failed.dbusName == "org.freedesktop.DBus.Error.Failed")
        #expect(KioskError.Code(dbusName: "org.example.Nope") == nil)
    }
}
