/// What a guided-access session locks, in the filter's terms. `KioskCore` maps a profile onto it.
public struct FilterPolicy: Sendable, Equatable {
    /// `EV_KEY` codes whose presses are swallowed.
    public var lockedKeys: Set<UInt16>
    /// Ctrl+Alt+Backspace, Ctrl+Alt+Del (and keypad Del), Alt+SysRq, and the console's VT
    /// switches: Alt+F1…F12 (with Ctrl too, and AltGr) and Alt+←/→; with the modifiers held on
    /// any device. While a key completes one, neither its press nor its autorepeat is forwarded
    /// (a text console takes a repeat as a press).
    public var blockEscapeChords: Bool
    /// Keys that make no blocked escape chord with Alt after all: `KEY_LEFT`, `KEY_RIGHT` (Alt+←/→
    /// are also a browser's Back and Forward; a profile may let them through).
    public var allowedAltChords: Set<UInt16>
    /// Key combinations whose key is swallowed, press and autorepeat, while their modifiers are
    /// held on any keyboard (``KeyCombo``).
    public var lockedCombos: [KeyCombo]
    public var touch: TouchPolicy
    public var exitGesture: ExitGesture?
    /// An expired session: nothing reaches the kiosk; only the exit gesture is still detected.
    public var holdAllInput: Bool

    public init(
        lockedKeys: Set<UInt16> = [], blockEscapeChords: Bool = false, allowedAltChords: Set<UInt16> = [],
        lockedCombos: [KeyCombo] = [], touch: TouchPolicy = .all, exitGesture: ExitGesture? = nil,
        holdAllInput: Bool = false
    ) {
        self.lockedKeys = lockedKeys; self.blockEscapeChords = blockEscapeChords
        self.allowedAltChords = allowedAltChords; self.lockedCombos = lockedCombos; self.touch = touch
        self.exitGesture = exitGesture; self.holdAllInput = holdAllInput
    }

    /// No session: everything passes.
    public static let passThrough = FilterPolicy()
}

public enum TouchPolicy: Sendable, Equatable {
    /// Touch works.
    case all
    /// No touch reaches the kiosk.
    case none
    /// Contacts that start inside any of these regions are never forwarded.
    case regions([TouchRegion])
}

/// A point in screen fractions (0…1).
public struct Point: Sendable, Equatable {
    public var x: Double, y: Double
    public init(x: Double, y: Double) { self.x = x; self.y = y }
}

/// A locked region in screen fractions (0…1). A point on the edge is inside.
public enum TouchRegion: Sendable, Equatable {
    case rect(x: Double, y: Double, width: Double, height: Double)
    case polygon([Point])

    public static func polygon(_ points: [(x: Double, y: Double)]) -> TouchRegion {
        .polygon(points.map { Point(x: $0.x, y: $0.y) })
    }

    /// Whether the point is inside or on the edge.
    public func contains(_ p: Point) -> Bool {
        switch self {
        case .rect(let x, let y, let width, let height):
            return p.x >= x && p.x <= x + width && p.y >= y && p.y <= y + height
        case .polygon(let points):
            return Self.polygon(points, contains: p)
        }
    }

    private static func polygon(_ points: [Point], contains p: Point) -> Bool {
        guard points.count >= 3 else {
            // A degenerate polygon is a segment or a point: inside only on it.
            if points.count == 2 { return onSegment(points[0], points[1], p) }
            return points.first == p
        }
        var inside = false
        var j = points.count - 1
        for i in points.indices {
            let a = points[i], b = points[j]
            if onSegment(a, b, p) { return true }
            if (a.y > p.y) != (b.y > p.y) {
                let crossX = a.x + (p.y - a.y) * (b.x - a.x) / (b.y - a.y)
                if p.x < crossX { inside.toggle() }
            }
            j = i
        }
        return inside
    }

    private static func onSegment(_ a: Point, _ b: Point, _ p: Point) -> Bool {
        let epsilon = 1e-12
        let cross = (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x)
        guard abs(cross) <= epsilon else { return false }
        return p.x >= min(a.x, b.x) - epsilon && p.x <= max(a.x, b.x) + epsilon
            && p.y >= min(a.y, b.y) - epsilon && p.y <= max(a.y, b.y) + epsilon
    }
}

/// `presses` presses of `key` within `within` microseconds (from the first press to the last).
public struct ExitGesture: Sendable, Equatable {
    public var key: UInt16
    public var presses: Int
    public var within: Int64

    public init(key: UInt16, presses: Int, within: Int64) {
        self.key = key; self.presses = max(1, presses); self.within = within
    }
}
