import Foundation
import KioskAPI
import Testing

@testable import KioskCore

/// A web app's manifest (`/etc/kioskd/apps/ID.toml`, docs/browsers.md § Web apps): what it
/// declares, and every malformed one refused at its line.
struct WebAppManifestTests {
    static let guide = """
        # The museum guide's web app.
        id = "org.example.MuseumGuide"
        origins = ["https://guide.museum.example", "HTTP://127.0.0.1:8080", "https://guide.museum.example:8443"]

        [[restriction]]
        id = "org.example.MuseumGuide.video"
        title = "Exhibit videos"
        detail = "Visitors may play the video beside each exhibit."

        [[restriction]]
        id = "org.example.MuseumGuide.audio"
        title = "Audio guide"
        detail = "Visitors may listen to the spoken guide."
        """

    @Test func declaresTheRestrictionsInOrderAndTheOrigins() throws {
        let manifest = try WebAppManifest.parse(
            source: Self.guide, file: "/etc/kioskd/apps/org.example.MuseumGuide.toml")
        #expect(manifest.app == (try AppID("org.example.MuseumGuide")))
        #expect(
            manifest.restrictions.map(\.id.rawValue) == [
                "org.example.MuseumGuide.video", "org.example.MuseumGuide.audio",
            ])
        #expect(manifest.restrictions[0].title == "Exhibit videos")
        #expect(
            manifest.origins.map(\.text)
                == ["https://guide.museum.example", "http://127.0.0.1:8080", "https://guide.museum.example:8443"],
            "written as browsers send them in Origin")
    }

    @Test(arguments: [
        ("https://guide.museum.example", "https://guide.museum.example"),
        ("https://Guide.Museum.Example:443", "https://guide.museum.example"),
        ("http://localhost:80", "http://localhost"),
        ("http://[::1]:7733", "http://[::1]:7733"),
        ("http://10.0.0.5:8000", "http://10.0.0.5:8000"),
    ])
    func originsAreNormalisedAsBrowsersSendThem(written: String, sent: String) throws {
        #expect(try WebOrigin(written).text == sent)
    }

    @Test(arguments: [
        ("null", "must start with http:// or https://"),
        ("", "must start with http:// or https://"),
        ("file:///srv/page.html", "must start with http:// or https://"),
        ("https://guide.museum.example/", "has a path"),
        ("https://guide.museum.example/index.html", "no path, query, user or wildcard"),
        ("https://*.museum.example", "no path, query, user or wildcard"),
        ("https://user@guide.museum.example", "no path, query, user or wildcard"),
        ("https://guide.museum.example:0", "port that is not a number from 1 to 65535"),
        ("https://guide.museum.example:99999", "port that is not a number from 1 to 65535"),
        ("https://guide.museum.example:", "port that is not a number from 1 to 65535"),
        ("https://", "not a DNS name or an address"),
        ("https://guide..example", "not a DNS name or an address"),
        ("https://gu_ide.example", "not a DNS name or an address"),
        ("http://[::1", "unclosed"),
        ("http://[zz]", "IPv6 address that is not one"),
    ])
    func originsThatAreNotOneAreRefused(text: String, why: String) {
        #expect(throws: KioskError.self) { try WebOrigin(text) }
        do {
            _ = try WebOrigin(text)
        } catch {
            #expect(error.message.contains(why), "\(error.message)")
            #expect(error.code == .invalidArgument)
        }
    }

    static func edit(_ old: String, _ new: String) -> String { guide.replacingOccurrences(of: old, with: new) }

    /// What is wrong, the line it is reported at, part of the message.
    static let malformed: [(String, Int, String)] = [
        (edit("\"HTTP://127.0.0.1:8080\"", "\"https://*.example\""), 3, "origins: "),
        (edit("id = \"org.example.MuseumGuide\"", "id = \"org.example.Other\""), 2, "name it org.example.Other.toml"),
        (edit("id = \"org.example.MuseumGuide\"", "id = \"9lives\""), 2, "id: "),
        (edit("title = \"Audio guide\"\n", ""), 10, "restriction needs title"),
        (edit("MuseumGuide.audio", "MuseumGuide.video"), 11, "declared twice"),
        (edit("detail = \"Visitors may listen", "details = \"Visitors may listen"), 13, "unknown key"),
        (edit("origins = [", "origin = ["), 3, "unknown key"),
        (
            edit(
                "origins = [\"https://guide.museum.example\", ",
                "origins = [\"https://guide.museum.example\", \"https://guide.museum.example\", "), 3, "twice"
        ),
        (
            edit(
                "[\"https://guide.museum.example\", \"HTTP://127.0.0.1:8080\", \"https://guide.museum.example:8443\"]",
                "[]"), 3, "origins is empty"
        ),
        (edit("title = \"Exhibit videos\"", "title = \"Exhibit\\nvideos\""), 5, "restriction: "),
        (edit("[[restriction]]", "[[restrictions]]"), 5, "unknown key"),
        ("id = \"org.example.MuseumGuide\"\norigins = [\"https://a.example\"]\n", 1, "at least one [[restriction]]"),
        (
            "id = \"org.example.MuseumGuide\"\norigins = \"https://a.example\"\n[[restriction]]\nid = \"a.b\"\ntitle = \"t\"\ndetail = \"d\"\n",
            2, "must be an array"
        ),
        ("id = \"org.example.MuseumGuide\"\norigins = [\n", 2, "TOML syntax"),
    ]

    @Test(arguments: malformed)
    func aMalformedManifestIsRefusedAtItsLine(source: String, line: Int, message: String) {
        do {
            _ = try WebAppManifest.parse(source: source, file: "apps/org.example.MuseumGuide.toml")
            Issue.record("accepted:\n\(source)")
        } catch {
            #expect(error.diagnostics.contains { $0.position.line == line && $0.message.contains(message) }, "\(error)")
            #expect(error.description.hasPrefix("apps/org.example.MuseumGuide.toml:"), "file:line:column")
        }
    }

    @Test func tooManyOriginsOrRestrictionsAreRefused() {
        let origins = (1...(WebAppManifest.maxOrigins + 1)).map { "\"https://o\($0).example\"" }.joined(separator: ", ")
        let many =
            "id = \"a.b\"\norigins = [\(origins)]\n[[restriction]]\nid = \"a.b.c\"\ntitle = \"t\"\ndetail = \"d\"\n"
        #expect(throws: ProfileError.self) { try WebAppManifest.parse(source: many, file: "a.b.toml") }
        let restrictions = (0...KioskWire.Limits.restrictionsPerApp).map {
            "[[restriction]]\nid = \"a.b.r\($0)\"\ntitle = \"t\"\ndetail = \"d\"\n"
        }.joined()
        let tooMany = "id = \"a.b\"\norigins = [\"https://a.example\"]\n" + restrictions
        do {
            _ = try WebAppManifest.parse(source: tooMany, file: "a.b.toml")
            Issue.record("accepted")
        } catch {
            #expect(error.description.contains("more than the \(KioskWire.Limits.restrictionsPerApp)"))
        }
    }

    @Test func bytesThatAreNotUTF8AreRefusedWhereTheyAre() {
        var bytes = Array("id = \"a.b\"\norigins = [\"https://a.example\"]\n# caf".utf8)
        bytes += [0xC3, 0x28]
        do {
            _ = try WebAppManifest.parse(bytes: bytes, file: "a.b.toml")
            Issue.record("accepted")
        } catch {
            #expect(error.diagnostics.first?.position.line == 3)
            #expect(error.diagnostics.first?.message == "the file is not valid UTF-8")
        }
    }
}
