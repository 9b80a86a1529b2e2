/// Geometry of locked touch regions, in fractions of the touch surface.
enum Polygon {
    /// Why `points` is not a simple polygon (edges crossing, repeated points, no area),
    /// or `nil` if it is one.
    static func simplicityProblem(_ points: [Profile.Point]) -> String? {
        let n = points.count
        for i in 0..<n {
            for j in (i + 1)..<n where points[i] == points[j] {
                return "points \(i + 1) and \(j + 1) are the same"
            }
        }
        for i in 0..<n {
            let a1 = points[i], a2 = points[(i + 1) % n]
            for j in (i + 1)..<n {
                // Adjacent edges share a point; they touch by construction.
                if j == i + 1 || (i == 0 && j == n - 1) { continue }
                let b1 = points[j], b2 = points[(j + 1) % n]
                if segmentsIntersect(a1, a2, b1, b2) {
                    return "edge \(i + 1) crosses edge \(j + 1)"
                }
            }
        }
        if abs(signedArea(points)) < 1e-12 { return "it has no area" }
        return nil
    }

    static func signedArea(_ points: [Profile.Point]) -> Double {
        var sum = 0.0
        for i in points.indices {
            let a = points[i], b = points[(i + 1) % points.count]
            sum += a.x * b.y - b.x * a.y
        }
        return sum / 2
    }

    private static func cross(_ o: Profile.Point, _ a: Profile.Point, _ b: Profile.Point) -> Double {
        (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x)
    }

    private static func onSegment(_ p: Profile.Point, _ q: Profile.Point, _ r: Profile.Point) -> Bool {
        min(p.x, r.x) <= q.x && q.x <= max(p.x, r.x) && min(p.y, r.y) <= q.y && q.y <= max(p.y, r.y)
    }

    static func segmentsIntersect(
        _ p1: Profile.Point, _ p2: Profile.Point, _ q1: Profile.Point, _ q2: Profile.Point
    ) -> Bool {
        let d1 = cross(q1, q2, p1), d2 = cross(q1, q2, p2), d3 = cross(p1, p2, q1), d4 = cross(p1, p2, q2)
        if ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)) { return true }
        if d1 == 0 && onSegment(q1, p1, q2) { return true }
        if d2 == 0 && onSegment(q1, p2, q2) { return true }
        if d3 == 0 && onSegment(p1, q1, p2) { return true }
        if d4 == 0 && onSegment(p1, q2, p2) { return true }
        return false
    }
}
