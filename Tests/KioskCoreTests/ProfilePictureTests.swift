import KioskCore
import Testing

/// What `kioskctl profile show --png` draws, in pixels, before cairo sees it.
@Suite struct ProfilePictureTests {
    typealias Pixel = ProfilePicture.Pixel

    static func profile(_ source: String) throws -> Profile {
        try ProfileParser.parse(source: source, file: "picture.toml")
    }

    /// museum-map's two regions: the rect's fractions scale by the width (x) and the height (y);
    /// the polygon's points keep their order.
    @Test func regionsMapFractionsToPixelsOfEachAxis() throws {
        let profile = try Self.profile(
            """
            [touch]
            mode = "regions"
            [[touch.locked-region]]
            name = "settings gear"
            rect = { x = 0.90, y = 0.00, width = 0.10, height = 0.12 }
            [[touch.locked-region]]
            name = "legend"
            polygon = [[0.0, 0.8], [0.3, 0.8], [0.3, 1.0], [0.0, 1.0]]
            """)
        let picture = ProfilePicture(profile, width: 1280, height: 800)
        #expect(picture.items.map(\.kind) == [.lockedRegion, .lockedRegion])
        #expect(picture.items.map(\.label) == ["settings gear", "legend"])
        let gear = try #require(picture.items.first?.polygons.first)
        #expect(gear.count == 4)
        for (point, expected) in zip(gear, [(1152.0, 0.0), (1280.0, 0.0), (1280.0, 96.0), (1152.0, 96.0)]) {
            #expect(abs(point.x - expected.0) < 1e-9 && abs(point.y - expected.1) < 1e-9, "\(point)")
        }
        #expect(picture.items[1].polygons == [[Pixel(x: 0, y: 640), Pixel(x: 384, y: 640), Pixel(x: 384, y: 800), Pixel(x: 0, y: 800)]])
        // Labels sit inside the shape's top-left corner.
        #expect(picture.items[1].labelAt == Pixel(x: 6, y: 660))
        #expect(
            picture.legend == """
                frame 1280×800 px
                locked region 1 "settings gear": (1152, 0) (1280, 0) (1280, 96) (1152, 96)
                locked region 2 "legend": (0, 640) (384, 640) (384, 800) (0, 800)

                """)
    }

    /// The edge band is the frame less the rectangle inside the margin on each axis (even-odd),
    /// drawn first; a corner exit gesture's square (a tenth of each axis) is drawn last.
    @Test func edgeBandAndExitCorner() throws {
        let profile = try Self.profile(
            """
            [touch]
            edge-margin = 0.05
            [session]
            exit-gesture = { corner = "bottom-left", taps = 5, within = "3s" }
            """)
        let picture = ProfilePicture(profile, width: 1000, height: 500)
        #expect(picture.items.map(\.kind) == [.edgeMargin, .exitCorner])
        let band = picture.items[0]
        #expect(band.polygons.count == 2)
        #expect(band.polygons[0] == [Pixel(x: 0, y: 0), Pixel(x: 1000, y: 0), Pixel(x: 1000, y: 500), Pixel(x: 0, y: 500)])
        let inner = band.polygons[1]
        #expect(abs(inner[0].x - 50) < 1e-9 && abs(inner[0].y - 25) < 1e-9)
        #expect(abs(inner[2].x - 950) < 1e-9 && abs(inner[2].y - 475) < 1e-9)
        #expect(band.labelAt == nil)
        let corner = picture.items[1]
        #expect(corner.label == "exit: 5 taps")
        let square = try #require(corner.polygons.first)
        #expect(abs(square[0].x) < 1e-9 && abs(square[0].y - 450) < 1e-9)
        #expect(abs(square[2].x - 100) < 1e-9 && abs(square[2].y - 500) < 1e-9)
        #expect(
            picture.legend == """
                frame 1000×500 px
                edge margin 0.05: contacts starting within 50 px of the left and right edges and 25 px of the top and bottom are dropped
                exit gesture corner bottom-left: 5 taps within 3s in (0, 450) (100, 450) (100, 500) (0, 500)

                """)
    }

    /// A corner cleaning gesture's square is drawn after the exit gesture's, in its own kind.
    @Test func cleaningCorner() throws {
        let profile = try Self.profile(
            """
            [session]
            exit-gesture = { corner = "top-left", taps = 4, within = "2s" }
            cleaning-gesture = { corner = "top-right", taps = 2, within = "1s" }
            """)
        let picture = ProfilePicture(profile, width: 200, height: 100)
        #expect(picture.items.map(\.kind) == [.exitCorner, .cleaningCorner])
        #expect(picture.items.map(\.label) == ["exit: 4 taps", "cleaning: 2 taps"])
        let square = try #require(picture.items[1].polygons.first)
        #expect(abs(square[0].x - 180) < 1e-9 && abs(square[0].y) < 1e-9)
        #expect(abs(square[2].x - 200) < 1e-9 && abs(square[2].y - 10) < 1e-9)
        #expect(picture.items[1].legend == "cleaning gesture corner top-right: 2 taps within 1s in (180, 0) (200, 0) (200, 10) (180, 10)")
    }

    /// A key exit gesture has no place on the screen; touch "none" shades the whole frame; a
    /// profile without touch locks draws nothing.
    @Test func whatHasNoPlaceIsNotDrawn() throws {
        let keys = try Self.profile("[session]\nexit-gesture = { key = \"KEY_POWER\", presses = 3, within = \"1.5s\" }\n")
        #expect(ProfilePicture(keys, width: 100, height: 100).items.isEmpty)
        let off = ProfilePicture(try Self.profile("[touch]\nmode = \"none\"\n"), width: 200, height: 100)
        #expect(off.items.map(\.kind) == [.touchOff])
        #expect(off.items[0].polygons == [[Pixel(x: 0, y: 0), Pixel(x: 200, y: 0), Pixel(x: 200, y: 100), Pixel(x: 0, y: 100)]])
    }

    @Test(arguments: [
        ("1280x800", true, 1280, 800), ("640×480", true, 640, 480), ("16X16", true, 16, 16),
        ("15x800", false, 0, 0), ("1280x", false, 0, 0), ("x800", false, 0, 0), ("1280x800x2", false, 0, 0),
        ("+1280x800", false, 0, 0), ("16385x16", false, 0, 0), ("abc", false, 0, 0), ("", false, 0, 0),
    ])
    func sizes(text: String, valid: Bool, width: Int, height: Int) {
        let size = ProfilePicture.size(text)
        #expect((size != nil) == valid, "\(text)")
        if let size { #expect(size.width == width && size.height == height) }
    }
}
