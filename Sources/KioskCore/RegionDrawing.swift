/// Staff drawing a profile's locked regions on the kiosk's screen (docs/profiles.md § Drawing
/// the regions at the kiosk): what each touch and key does to the shapes, in screen fractions.
///
/// One finger draws; a second one at the same time is ignored. A touch that barely moves is a
/// tap: on a button of the bar it presses it, on a shape it selects it (again: unselects), off
/// every shape it unselects. A drag whose end comes back near its start is an outline, closed
/// into a polygon and simplified to at most ``maxOutlinePoints`` corners; any other drag is a
/// rectangle from where it started to where it ended. A shape smaller than a fingertip or one
/// past ``maxShapes`` ends the drawing (``Outcome/refused(_:)``: nothing is written); an outline
/// that crosses itself is not added, and ``notice`` says why.
public struct RegionDrawing: Sendable, Equatable {
    /// A shape on the screen: a region of the profile (``kept`` is its index in the file) or a
    /// drawn one.
    public struct Shape: Sendable, Equatable {
        public var region: Profile.Region
        public var kept: Int?
    }

    /// The bar's buttons, which kioskd-prompt draws where kioskd reads them.
    public enum Button: String, Sendable, Equatable, CaseIterable {
        case cancel, delete, done
    }

    /// Why the last stroke added nothing while the drawing goes on (kioskd-prompt shows it,
    /// translated), or nothing.
    public enum Notice: String, Sendable, Equatable {
        case none = ""
        case crosses = "crosses"
    }

    /// The keys a keyboard has for the drawing: Enter is Done, Esc is Cancel, Delete or
    /// Backspace deletes the selected shape.
    public enum Key: Sendable, Equatable {
        case done, cancel, delete
    }

    /// What a touch or a key did.
    public enum Outcome: Sendable, Equatable {
        /// Nothing to show.
        case none
        /// The shapes, the selection, the stroke or the notice changed.
        case changed
        /// Done: the regions to write, in order.
        case done([ProfileRegionEdit.Region])
        case cancelled
        /// A shape that cannot be a region (``DrawingEndReason/tooSmall``,
        /// ``DrawingEndReason/tooMany``): the drawing ends and nothing is written.
        case refused(DrawingEndReason)
    }

    /// A touch that moves less than this (in screen fractions, from where it started) is a tap.
    public static let tapDistance = 0.02
    /// Each side of a drawn shape is at least this: a fingertip (10 mm) on a 15-inch screen.
    public static let minSide = 0.03
    /// A drag that ends this close to its start, after a path at least 4 times as long, is an
    /// outline.
    public static let closeDistance = 0.05
    /// At most this many corners an outline keeps once simplified.
    public static let maxOutlinePoints = 32
    /// At most this many regions a profile holds (the parser's bound).
    public static let maxShapes = 64
    /// At most this many points a stroke keeps (a point closer than ``pointSpacing`` to the
    /// last one is not kept either).
    public static let maxStrokePoints = 4096
    static let pointSpacing = 0.002

    /// The bar at the top middle of the screen: Cancel, Delete, Done; each 0.12 × 0.08.
    public static let buttons: [(button: Button, x: Double, y: Double, width: Double, height: Double)] = [
        (.cancel, 0.30, 0.02, 0.12, 0.08),
        (.delete, 0.44, 0.02, 0.12, 0.08),
        (.done, 0.58, 0.02, 0.12, 0.08),
    ]

    public private(set) var shapes: [Shape]
    public private(set) var selected: Int?
    /// The stroke being drawn, from its start.
    public private(set) var stroke: [Profile.Point] = []
    public private(set) var notice = Notice.none
    private var contact: Int?
    private var farthest = 0.0
    private var pathLength = 0.0

    /// Starts with the profile's own regions on the screen.
    public init(regions: [Profile.Region]) {
        shapes = regions.enumerated().map { Shape(region: $1, kept: $0) }
    }

    /// The regions as they stand, for the profile.
    public var regions: [ProfileRegionEdit.Region] {
        shapes.map { shape in shape.kept.map { .kept($0) } ?? .new(shape.region) }
    }

    // MARK: touches

    /// A contact went down at `point`. Only the first of several contacts at once draws.
    public mutating func touchDown(contact id: Int, at point: Profile.Point) -> Outcome {
        guard contact == nil else { return .none }
        contact = id
        stroke = [point]
        farthest = 0
        pathLength = 0
        return .changed
    }

    /// The drawing contact moved to `point`; `.changed` when the stroke grew visibly.
    public mutating func touchMove(contact id: Int, to point: Profile.Point) -> Outcome {
        guard id == contact, let last = stroke.last, let first = stroke.first else { return .none }
        let step = Self.distance(last, point)
        guard step >= Self.pointSpacing, stroke.count < Self.maxStrokePoints else { return .none }
        stroke.append(point)
        pathLength += step
        farthest = max(farthest, Self.distance(first, point))
        return .changed
    }

    /// The drawing contact went up (or its device went away): the stroke is a tap or a shape.
    public mutating func touchUp(contact id: Int) -> Outcome {
        guard id == contact, let first = stroke.first, let last = stroke.last else { return .none }
        contact = nil
        defer { stroke = [] }
        notice = .none
        if farthest < Self.tapDistance { return tap(at: first) }
        let shape: Profile.Shape
        if Self.distance(first, last) <= Self.closeDistance, pathLength >= 4 * Self.closeDistance {
            let points = Self.simplified(stroke)
            guard points.count >= 3, Polygon.simplicityProblem(points) == nil else {
                notice = .crosses
                return .changed
            }
            shape = .polygon(points)
        } else {
            let x0 = min(first.x, last.x), x1 = max(first.x, last.x)
            let y0 = min(first.y, last.y), y1 = max(first.y, last.y)
            shape = .rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
        }
        let rounded = ProfileRegionEdit.rounded(shape)
        let (width, height) = Self.extent(rounded)
        guard width >= Self.minSide, height >= Self.minSide else { return .refused(.tooSmall) }
        guard shapes.count < Self.maxShapes else { return .refused(.tooMany) }
        shapes.append(Shape(region: Profile.Region(name: nextName(), shape: rounded), kept: nil))
        selected = nil
        return .changed
    }

    private mutating func tap(at point: Profile.Point) -> Outcome {
        if let button = Self.buttons.first(where: {
            point.x >= $0.x && point.x < $0.x + $0.width && point.y >= $0.y && point.y < $0.y + $0.height
        }) {
            switch button.button {
            case .done: return press(.done)
            case .cancel: return press(.cancel)
            case .delete: return press(.delete)
            }
        }
        // The topmost shape (the last drawn) under the finger.
        let hit = shapes.indices.last { Self.contains(shapes[$0].region.shape, point) }
        selected = hit == selected ? nil : hit
        return .changed
    }

    // MARK: keys

    public mutating func press(_ key: Key) -> Outcome {
        switch key {
        case .done:
            return .done(regions)
        case .cancel:
            return .cancelled
        case .delete:
            guard let index = selected else { return .none }
            shapes.remove(at: index)
            selected = nil
            notice = .none
            return .changed
        }
    }

    // MARK: geometry

    static func distance(_ a: Profile.Point, _ b: Profile.Point) -> Double {
        ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot()
    }

    static func extent(_ shape: Profile.Shape) -> (width: Double, height: Double) {
        switch shape {
        case .rect(_, _, let width, let height): return (width, height)
        case .polygon(let points):
            let xs = points.map(\.x), ys = points.map(\.y)
            return ((xs.max() ?? 0) - (xs.min() ?? 0), (ys.max() ?? 0) - (ys.min() ?? 0))
        }
    }

    static func contains(_ shape: Profile.Shape, _ p: Profile.Point) -> Bool {
        switch shape {
        case .rect(let x, let y, let width, let height):
            return p.x >= x && p.x <= x + width && p.y >= y && p.y <= y + height
        case .polygon(let points):
            var inside = false
            var j = points.count - 1
            for i in points.indices {
                let a = points[i], b = points[j]
                if (a.y > p.y) != (b.y > p.y), p.x < (b.x - a.x) * (p.y - a.y) / (b.y - a.y) + a.x { inside.toggle() }
                j = i
            }
            return inside
        }
    }

    /// A closed outline's corners: the stroke simplified (Ramer–Douglas–Peucker) with a tolerance
    /// that grows until at most ``maxOutlinePoints`` are left, each rounded as the profile writes
    /// it; repeated points dropped.
    static func simplified(_ stroke: [Profile.Point]) -> [Profile.Point] {
        var points = stroke
        if points.count > 1, distance(points[0], points[points.count - 1]) < pointSpacing { points.removeLast() }
        var tolerance = 0.004
        var kept = douglasPeucker(points, tolerance)
        while kept.count > maxOutlinePoints {
            tolerance *= 1.5
            kept = douglasPeucker(points, tolerance)
        }
        var out: [Profile.Point] = []
        for point in kept {
            let p = Profile.Point(x: ProfileRegionEdit.round4(point.x), y: ProfileRegionEdit.round4(point.y))
            if !out.contains(p) { out.append(p) }
        }
        return out
    }

    private static func douglasPeucker(_ points: [Profile.Point], _ tolerance: Double) -> [Profile.Point] {
        guard points.count > 2 else { return points }
        var keep = [Bool](repeating: false, count: points.count)
        keep[0] = true
        keep[points.count - 1] = true
        var ranges = [(0, points.count - 1)]
        while let (start, end) = ranges.popLast() {
            guard end > start + 1 else { continue }
            var worst = 0.0, index = start
            for i in (start + 1)..<end {
                let d = segmentDistance(points[i], points[start], points[end])
                if d > worst { (worst, index) = (d, i) }
            }
            if worst > tolerance {
                keep[index] = true
                ranges.append((start, index))
                ranges.append((index, end))
            }
        }
        return points.indices.filter { keep[$0] }.map { points[$0] }
    }

    private static func segmentDistance(_ p: Profile.Point, _ a: Profile.Point, _ b: Profile.Point) -> Double {
        let dx = b.x - a.x, dy = b.y - a.y
        let length = dx * dx + dy * dy
        guard length > 0 else { return distance(p, a) }
        let t = max(0, min(1, ((p.x - a.x) * dx + (p.y - a.y) * dy) / length))
        return distance(p, Profile.Point(x: a.x + t * dx, y: a.y + t * dy))
    }

    /// "drawn N", the lowest N no shape on the screen is named.
    private mutating func nextName() -> String {
        var n = 1
        while shapes.contains(where: { $0.region.name == "drawn \(n)" }) { n += 1 }
        return "drawn \(n)"
    }
}

extension Profile.Shape {
    /// The shape's outline, for a display: a rect's 4 corners clockwise from its top left (each
    /// number with at most 4 decimals, as the profile writes them), a polygon's corners.
    public var outline: [Profile.Point] {
        switch self {
        case .rect(let x, let y, let width, let height):
            let right = ProfileRegionEdit.round4(x + width), bottom = ProfileRegionEdit.round4(y + height)
            return [
                Profile.Point(x: x, y: y), Profile.Point(x: right, y: y), Profile.Point(x: right, y: bottom),
                Profile.Point(x: x, y: bottom),
            ]
        case .polygon(let points):
            return points
        }
    }
}
