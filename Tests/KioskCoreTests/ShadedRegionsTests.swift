import Foundation
import KioskAPI
import KioskCore
import KioskInput
import Testing

/// `[touch] show-locked` and `shade-opacity`, and the regions a display shades
/// (`Profile.shadedRegions`, published as `LockedRegions`): exactly the filter's.
@Suite struct ShadedRegionsTests {
    static let regions = """
        [touch]
        mode = "regions"
        [[touch.locked-region]]
        name = "settings"
        rect = { x = 0.75, y = 0.0, width = 0.25, height = 0.125 }
        [[touch.locked-region]]
        polygon = [[0.0, 1.0], [0.25, 0.5], [0.5, 1.0]]
        """

    @Test func theDefaultsShowTheRegionsAtFortyPercent() throws {
        let profile = try parse(Self.regions)
        #expect(profile.touch.showLocked && profile.touch.shadeOpacity == 0.4)
        #expect(
            profile.shadedRegions == [
                ShadedRegion(
                    name: "settings", opacity: 0.4,
                    outline: [
                        .init(x: 0.75, y: 0), .init(x: 1, y: 0), .init(x: 1, y: 0.125), .init(x: 0.75, y: 0.125),
                    ]),
                ShadedRegion(
                    name: "region 2", opacity: 0.4,
                    outline: [.init(x: 0, y: 1), .init(x: 0.25, y: 0.5), .init(x: 0.5, y: 1)]),
            ])
        #expect(profile.shadedRegions[0].flatOutline == [0.75, 0, 1, 0, 1, 0.125, 0.75, 0.125])
    }

    @Test func theShadeAndShowLockedAreTheProfiles() throws {
        let dark = try parse(Self.regions.replacingOccurrences(of: "[touch]\n", with: "[touch]\nshade-opacity = 1\n"))
        #expect(dark.shadedRegions.map(\.opacity) == [1, 1])
        let hidden = try parse(
            Self.regions.replacingOccurrences(of: "[touch]\n", with: "[touch]\nshow-locked = false\n"))
        #expect(hidden.shadedRegions == [])
        #expect(hidden.filterPolicy.touch == (try parse(Self.regions)).filterPolicy.touch, "hiding unlocks nothing")
        #expect(try parse("[touch]\nmode = \"none\"\n").shadedRegions == [], "all of touch locked: no shade")
        #expect(try parse("").shadedRegions == [])
    }

    /// A point is inside a shaded outline (even-odd, edges in) exactly when the filter drops a
    /// touch there: on a grid of 1/64 steps and just off each edge.
    @Test func theOutlinesCoverWhatTheFilterDrops() throws {
        let profile = try parse(Self.regions)
        guard case .regions(let judged) = profile.filterPolicy.touch else {
            Issue.record("the profile locks no regions")
            return
        }
        var steps = (0...64).map { Double($0) / 64 }
        steps += [0.75 - 1e-9, 0.125 + 1e-9, 0.5 - 1e-9]
        var checked = 0
        for x in steps {
            for y in steps {
                let point = KioskInput.Point(x: x, y: y)
                let dropped = judged.contains { $0.contains(point) }
                let shaded = profile.shadedRegions.contains { Self.outline($0.outline, contains: point) }
                #expect(shaded == dropped, "(\(x), \(y))")
                checked += dropped ? 1 : 0
            }
        }
        #expect(checked > 100, "the grid reaches into the regions")
    }

    /// Even-odd with the edges in, written here from the outline alone (not the filter's code).
    static func outline(_ corners: [ShadedRegion.Corner], contains p: KioskInput.Point) -> Bool {
        var inside = false
        for (i, a) in corners.enumerated() {
            let b = corners[(i + 1) % corners.count]
            let cross = (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x)
            if abs(cross) < 1e-12, (min(a.x, b.x)...max(a.x, b.x)).contains(p.x),
                (min(a.y, b.y)...max(a.y, b.y)).contains(p.y)
            {
                return true
            }
            if (a.y > p.y) != (b.y > p.y), p.x < a.x + (p.y - a.y) * (b.x - a.x) / (b.y - a.y) { inside.toggle() }
        }
        return inside
    }
}
