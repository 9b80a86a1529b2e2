/// A locked touch region as kioskd publishes it for a display to shade (`LockedRegions`,
/// `a(sdad)`): its name, how dark to shade it, and its outline in fractions (0 to 1) of the
/// touch surface after calibration, which is the whole screen. A rect's outline is its four
/// corners, clockwise from the top left; a polygon's is its points as the profile gives them.
public struct ShadedRegion: Hashable, Sendable {
    /// A corner of the outline, in fractions of the screen (x to the right, y down).
    public struct Corner: Hashable, Sendable {
        public var x: Double
        public var y: Double
        public init(x: Double, y: Double) { self.x = x; self.y = y }
    }

    /// The region's name in the profile (`name`, or "region N").
    public var name: String
    /// The opacity of the black drawn over it (`[touch] shade-opacity`, 0.1 to 1).
    public var opacity: Double
    public var outline: [Corner]

    public init(name: String, opacity: Double, outline: [Corner]) {
        self.name = name; self.opacity = opacity; self.outline = outline
    }

    /// The outline as the wire's `ad`: x and y of each corner in turn.
    public var flatOutline: [Double] { outline.flatMap { [$0.x, $0.y] } }

    /// The outline from the wire's `ad`; nil when it is not x, y pairs of finite numbers.
    public static func outline(flat: [Double]) -> [Corner]? {
        guard flat.count.isMultiple(of: 2), flat.allSatisfy(\.isFinite) else { return nil }
        return stride(from: 0, to: flat.count, by: 2).map { Corner(x: flat[$0], y: flat[$0 + 1]) }
    }
}
