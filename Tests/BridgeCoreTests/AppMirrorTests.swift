import BridgeCore
import Foundation
import KioskAPI
import KioskCore
import Testing

/// What a page is sent: the snapshot, the changes, and what a `Last-Event-ID` brings back.
@Suite struct AppMirrorTests {
    var mirror = AppMirror(manifest: BridgeRouterTests.manifest)
    static let video = "org.example.MuseumGuide.video"
    static let print = "org.example.MuseumGuide.print"

    @Test func statesStartUnknownAndChangeOnce() {
        var mirror = mirror
        #expect(mirror.states == [nil, nil])
        let first = mirror.apply(restriction: Self.video, state: .allow)
        #expect(first == .init(restriction: Self.video, state: .allow))
        let again = mirror.apply(restriction: Self.video, state: .allow)
        #expect(again == nil, "the same state again is no change")
        let foreign = mirror.apply(restriction: "org.example.MuseumGuide.other", state: .deny)
        #expect(foreign == nil, "not in the manifest")
        let snapshot = mirror.apply(snapshot: [Self.video: .deny, Self.print: .allow])
        #expect(
            snapshot == [.init(restriction: Self.video, state: .deny), .init(restriction: Self.print, state: .allow)])
        let forgotten = mirror.apply(snapshot: nil)
        #expect(forgotten == [.init(restriction: Self.video, state: nil), .init(restriction: Self.print, state: nil)])
    }

    @Test func aNewManifestKeepsTheStatesOfTheRestrictionsItStillLists() throws {
        var mirror = mirror
        _ = mirror.apply(snapshot: [Self.video: .deny, Self.print: .allow])
        let edited = try WebAppManifest.parse(
            source: """
                id = "org.example.MuseumGuide"
                origins = ["https://guide.museum.example"]

                [[restriction]]
                id = "org.example.MuseumGuide.audio"
                title = "Audio guide"
                detail = ""

                [[restriction]]
                id = "org.example.MuseumGuide.video"
                title = "Exhibit videos"
                detail = ""
                """, file: "org.example.MuseumGuide.toml")
        let carried = mirror.carried(to: edited)
        #expect(carried.manifest == edited)
        #expect(carried.states == [nil, .deny], "the new one unknown until kioskd is read, video kept, print gone")
        #expect(carried.fingerprint != mirror.fingerprint, "another list of restrictions: old event ids are not its")
        #expect(mirror.carried(to: mirror.manifest) == mirror)
    }

    @Test func theSnapshotCarriesEveryRestriction() {
        var mirror = mirror
        _ = mirror.apply(snapshot: [Self.video: .allow])
        let opening = mirror.opening(lastEventID: nil)
        let id = mirror.eventID()
        #expect(id.hasPrefix("v1.") && id.hasSuffix(".au"))
        #expect(
            opening == """
                retry: 1000

                event: snapshot
                id: \(id)
                data: {"app":"org.example.MuseumGuide","id":"\(id)","reset":false,"restrictions":[{"id":"org.example.MuseumGuide.video","title":"Exhibit videos","detail":"Visitors may play the video beside each exhibit.","state":"allow"},{"id":"org.example.MuseumGuide.print","title":"Printing","detail":"","state":null}]}


                """)
    }

    @Test func aLastEventIDBringsWhatChangedSince() {
        var mirror = mirror
        _ = mirror.apply(snapshot: [Self.video: .allow, Self.print: .allow])
        let seen = mirror.eventID()
        _ = mirror.apply(restriction: Self.video, state: .deny)
        _ = mirror.apply(restriction: Self.print, state: .deny)
        let opening = mirror.opening(lastEventID: seen)
        let fp = mirror.fingerprint
        #expect(
            opening == """
                retry: 1000

                event: change
                id: v1.\(fp).da
                data: {"app":"org.example.MuseumGuide","restriction":"org.example.MuseumGuide.video","state":"deny"}

                event: change
                id: v1.\(fp).dd
                data: {"app":"org.example.MuseumGuide","restriction":"org.example.MuseumGuide.print","state":"deny"}


                """)
        #expect(mirror.opening(lastEventID: mirror.eventID()) == "retry: 1000\n\n", "nothing missed, nothing sent")
    }

    @Test(arguments: ["", "v1", "v2.00000000.aa", "v1.00000000.aa", "v1.FP.a", "v1.FP.ax", "v1.FP.aaa"])
    func anIDNotOfThisAppBringsASnapshotMarkedReset(id: String) {
        let id = id.replacingOccurrences(of: "FP", with: mirror.fingerprint)
        #expect(mirror.states(seenIn: id) == nil)
        #expect(mirror.opening(lastEventID: id).contains("event: snapshot"))
        #expect(mirror.opening(lastEventID: id).contains("\"reset\":true"))
    }

    @Test func textIsEscapedToOneLine() throws {
        let manifest = WebAppManifest(
            app: try AppID("org.example.A"),
            restrictions: [
                try RestrictionDeclaration(
                    id: "org.example.A.b", title: "say \"hi\" \\ ok", detail: "two\nlines\tand\u{2028}")
            ],
            origins: [try WebOrigin("https://a.example")])
        let json = AppMirror(manifest: manifest).snapshotJSON()
        #expect(json.contains(#""title":"say \"hi\" \\ ok","detail":"two\nlines\tand\u2028""#))
        #expect(!json.contains("\n"))
    }
}

/// When a snapshot read may be believed.
@Suite struct SnapshotReadsTests {
    @Test func aReadDisturbedByASignalIsReadAgain() {
        var reads = SnapshotReads()
        let r1 = reads.begin("a")
        #expect(r1)
        let r2 = reads.begin("a")
        #expect(!r2, "one read at a time")
        reads.signal("a")
        reads.signal("b")  // not being read: nothing to do
        let r3 = reads.finish("a")
        #expect(r3 == .retry)
        let r4 = reads.finish("a")
        #expect(r4 == .apply(again: true), "undisturbed; a second begin asked for another")
        let r5 = reads.begin("a")
        #expect(r5)
        let r6 = reads.finish("a")
        #expect(r6 == .apply(again: false))
    }

    @Test func aReadDisturbedEveryTimeIsAppliedAtLast() {
        var reads = SnapshotReads()
        let r7 = reads.begin("a")
        #expect(r7)
        for _ in 1..<SnapshotReads.maxAttempts {
            reads.signal("a")
            let r8 = reads.finish("a")
            #expect(r8 == .retry)
        }
        reads.signal("a")
        let r9 = reads.finish("a")
        #expect(r9 == .apply(again: false))
    }
}

/// `--listen`: loopback only.
@Suite struct ListenAddressTests {
    @Test func loopbackAddresses() throws {
        #expect(try ListenAddress("127.0.0.1:7770") == ListenAddress("127.0.0.1:7770"))
        let v6 = try ListenAddress("[::1]:7770")
        #expect(v6.isIPv6 && v6.host == "::1" && v6.port == 7770 && v6.description == "[::1]:7770")
    }

    @Test(arguments: [
        "0.0.0.0:7770", "192.168.1.2:80", "[::]:7770", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:70000", "localhost:7770",
        "[::1]7770",
    ])
    func anythingElseIsRefused(text: String) {
        #expect(throws: ListenAddressError.self) { try ListenAddress(text) }
    }
}
