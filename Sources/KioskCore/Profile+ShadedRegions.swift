import KioskAPI
import KioskInput

extension Profile {
    /// The locked touch regions a display shades during a session of this profile
    /// (`LockedRegions`): exactly the regions the filter judges touches by
    /// (``filterPolicy``'s `.regions`), in the profile's order, each with `[touch]
    /// shade-opacity`; empty when `show-locked = false` or the filter locks no region (touch
    /// `none` locks all of it, and a display must not shade the whole screen for that).
    public var shadedRegions: [ShadedRegion] {
        guard touch.showLocked, case .regions(let regions) = filterPolicy.touch else { return [] }
        return zip(touch.lockedRegions, regions).map { region, judged in
            ShadedRegion(name: region.name, opacity: touch.shadeOpacity, outline: judged.outline)
        }
    }
}

extension TouchRegion {
    /// The region's outline in fractions of the screen: a rect's four corners clockwise from the
    /// top left (the filter counts its edges in, as a filled outline does), a polygon's points.
    var outline: [ShadedRegion.Corner] {
        switch self {
        case .rect(let x, let y, let width, let height):
            [
                .init(x: x, y: y), .init(x: x + width, y: y), .init(x: x + width, y: y + height),
                .init(x: x, y: y + height),
            ]
        case .polygon(let points): points.map { ShadedRegion.Corner(x: $0.x, y: $0.y) }
        }
    }
}
