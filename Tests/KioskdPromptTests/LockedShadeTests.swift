import KioskClient
import PromptScreen
import Testing

/// What the locked-regions layer fills (`LockedShade`, `LockedRegions`), in the layer's pixels.
@Suite struct LockedShadeTests {
    static let settings = ShadedRegion(
        name: "settings", opacity: 0.5,
        outline: [.init(x: 0.75, y: 0), .init(x: 1, y: 0), .init(x: 1, y: 0.125), .init(x: 0.75, y: 0.125)])
    static let corner = ShadedRegion(
        name: "corner", opacity: 0.4, outline: [.init(x: 0, y: 1), .init(x: 0.25, y: 0.5), .init(x: 0.5, y: 1)])

    static func status(_ regions: [ShadedRegion], session: SessionState = .active) -> KioskStatus {
        var status = KioskStatus(sessionState: session, activeProfile: "map", sessionDeadline: nil, version: "0.1.0")
        status.lockedRegions = regions
        return status
    }

    @Test func noLayerWithoutAnActiveSessionOrRegions() {
        #expect(LockedShade.layer(status: nil, width: 1280, height: 800) == nil)
        #expect(LockedShade.layer(status: Self.status([]), width: 1280, height: 800) == nil)
        #expect(LockedShade.layer(status: Self.status([Self.settings], session: .expired), width: 1280, height: 800) == nil)
        #expect(LockedShade.layer(status: Self.status([Self.settings], session: .inactive), width: 1280, height: 800) == nil)
        #expect(LockedShade.layer(status: Self.status([Self.settings]), width: 0, height: 800) == nil)
        let line = ShadedRegion(name: "line", opacity: 0.4, outline: [.init(x: 0, y: 0), .init(x: 1, y: 1)])
        #expect(LockedShade.layer(status: Self.status([line]), width: 1280, height: 800) == nil, "fills nothing")
    }

    /// None while kioskd reads or holds every touch: the prompt, cleaning, "Still there?", the
    /// offer, staff drawing the regions.
    @Test func noLayerWhileOneOfKioskdsScreensIsUp() {
        let now = Timestamp(microseconds: 1_800_000_000_000_000)
        var prompt = Self.status([Self.settings])
        prompt.prompt = KioskPrompt(state: .open, length: 0, deadline: now, retryAfter: nil)
        var cleaning = Self.status([Self.settings])
        cleaning.cleaningUntil = now
        var stillThere = Self.status([Self.settings])
        stillThere.idleWarning = now
        var offer = Self.status([Self.settings])
        offer.timeOffer = .open
        var drawing = Self.status([Self.settings])
        drawing.drawing = "museum-map"
        for status in [prompt, cleaning, stillThere, offer, drawing] {
            #expect(LockedShade.layer(status: status, width: 1280, height: 800) == nil, "\(status)")
        }
        #expect(LockedShade.layer(status: Self.status([Self.settings]), width: 1280, height: 800) != nil)
    }

    /// A fraction (x, y) is the pixel (x × width, y × height) of the output.
    @Test func fractionsScaleToTheOutput() throws {
        let shade = try #require(
            LockedShade.layer(status: Self.status([Self.settings, Self.corner]), width: 1280, height: 800))
        #expect(shade.fills.map(\.name) == ["settings", "corner"])
        #expect(shade.fills.map(\.opacity) == [0.5, 0.4])
        #expect(
            shade.fills[0].outline == [
                .init(x: 960, y: 0), .init(x: 1280, y: 0), .init(x: 1280, y: 100), .init(x: 960, y: 100),
            ])
        #expect(shade.fills[1].outline == [.init(x: 0, y: 800), .init(x: 320, y: 400), .init(x: 640, y: 800)])
    }

    /// On the shade (edges included) a touch is dropped; just off it, it is not.
    @Test(arguments: [
        (960.0, 0.0, true), (1279.0, 99.0, true), (960.0, 100.0, true), (959.5, 50.0, false), (1000.0, 100.5, false),
        (320.0, 400.0, true), (320.0, 790.0, true), (100.0, 500.0, false), (640.0, 800.0, true), (640.0, 700.0, false),
    ])
    func aPointIsShadedExactlyOnTheRegions(x: Double, y: Double, shaded: Bool) throws {
        let shade = try #require(
            LockedShade.layer(status: Self.status([Self.settings, Self.corner]), width: 1280, height: 800))
        #expect(shade.shades(.init(x: x, y: y)) == shaded)
    }

    /// A newer daemon's values are kept on the output: outlines clamped to it, opacity to 1.
    @Test func outOfRangeValuesStayOnTheOutput() throws {
        let wide = ShadedRegion(
            name: "wide", opacity: 3, outline: [.init(x: -1, y: -1), .init(x: 2, y: -1), .init(x: 2, y: 0.5)])
        let shade = try #require(LockedShade.layer(status: Self.status([wide]), width: 100, height: 100))
        #expect(shade.fills[0].opacity == 1)
        #expect(shade.fills[0].outline == [.init(x: 0, y: 0), .init(x: 100, y: 0), .init(x: 100, y: 50)])
    }
}
