import BridgeCore
import KioskAPI
import KioskCore
import Testing

/// The bridge's decisions (docs/browsers.md § The bridge): which request gets what, before any
/// socket is involved.
@Suite struct BridgeRouterTests {
    static let manifest = try! WebAppManifest.parse(
        source: """
            id = "org.example.MuseumGuide"
            origins = ["https://guide.museum.example", "http://127.0.0.1:8080"]

            [[restriction]]
            id = "org.example.MuseumGuide.video"
            title = "Exhibit videos"
            detail = "Visitors may play the video beside each exhibit."

            [[restriction]]
            id = "org.example.MuseumGuide.print"
            title = "Printing"
            detail = ""
            """, file: "org.example.MuseumGuide.toml")

    let router = BridgeRouter(manifests: [Self.manifest])
    static let events = "/v1/apps/org.example.MuseumGuide/events"

    func decide(_ method: String = "GET", _ path: String = events, origins: [String]) -> BridgeDecision {
        router.decide(BridgeRequest(method: method, path: path, origins: origins))
    }

    @Test func anAllowedOriginGetsTheStream() throws {
        let origin = try WebOrigin("https://guide.museum.example")
        #expect(
            decide(origins: ["https://guide.museum.example"])
                == .events(app: "org.example.MuseumGuide", origin: origin, lastEventID: nil))
        #expect(decide(origins: ["https://guide.museum.example"]).allowedOrigin == origin)
        #expect(
            decide("GET", "/v1/apps/org.example.MuseumGuide/state", origins: ["http://127.0.0.1:8080"])
                == .state(app: "org.example.MuseumGuide", origin: try WebOrigin("http://127.0.0.1:8080")))
        #expect(decide("GET", "/kioskd.js", origins: ["http://127.0.0.1:8080"]) == .script(origin: try WebOrigin("http://127.0.0.1:8080")))
        #expect(decide("OPTIONS", origins: ["https://guide.museum.example"]) == .preflight(origin: origin))
    }

    @Test(arguments: [
        ([], "no Origin header"),
        (["null"], "null"),
        (["https://evil.example"], "may not read org.example.MuseumGuide"),
        (["https://guide.museum.example:443"], "not as a browser writes it"),
        (["https://GUIDE.museum.example"], "not as a browser writes it"),
        (["https://guide.museum.example", "https://guide.museum.example"], "2 Origin headers"),
        (["file://"], "must start with http:// or https://"),
    ])
    func aMissingForeignOrNullOriginIsRefused(origins: [String], why: String) {
        guard case .refuse(let status, let reason) = decide(origins: origins) else {
            Issue.record("not refused: \(origins)")
            return
        }
        #expect(status == 403)
        #expect(reason.contains(why), "\(reason)")
        #expect(decide(origins: origins).allowedOrigin == nil)
    }

    @Test(arguments: ["POST", "PUT", "DELETE", "PATCH", "HEAD", "get"])
    func onlyGetAndOptions(method: String) {
        guard case .refuse(405, let reason) = decide(method, origins: ["https://guide.museum.example"]) else {
            Issue.record("\(method) not refused with 405")
            return
        }
        #expect(reason.contains("read-only"))
    }

    @Test(arguments: [
        "/", "/v1/apps/", "/v1/apps/org.example.MuseumGuide", "/v1/apps/org.example.MuseumGuide/events/x",
        "/v1/apps/org.example.MuseumGuide/set", "/v2/apps/org.example.MuseumGuide/events", "/v1/apps/org.example.Other/events",
    ])
    func unknownPathsAndAppsAre404(path: String) {
        guard case .refuse(404, _) = decide("GET", path, origins: ["https://guide.museum.example"]) else {
            Issue.record("\(path) not 404")
            return
        }
    }

    @Test func theScriptNeedsAnOriginOfSomeManifest() {
        guard case .refuse(403, _) = decide("GET", "/kioskd.js", origins: ["https://evil.example"]) else {
            Issue.record("kioskd.js served to a foreign origin")
            return
        }
    }
}

extension BridgeRouterTests {
    @Test func theQueryCarriesTheLastEventIDOfANewEventSource() throws {
        let origin = try WebOrigin("https://guide.museum.example")
        #expect(
            decide("GET", Self.events + "?last-event-id=v1.0a0b0c0d.ad", origins: [origin.text])
                == .events(app: "org.example.MuseumGuide", origin: origin, lastEventID: "v1.0a0b0c0d.ad"))
        #expect(
            router.decide(
                BridgeRequest(method: "GET", path: Self.events + "?last-event-id=x", origins: [origin.text], lastEventID: "y"))
                == .events(app: "org.example.MuseumGuide", origin: origin, lastEventID: "y"), "the header wins")
    }
}
