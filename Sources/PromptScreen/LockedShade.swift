import KioskClient

/// What kioskd-prompt's locked-regions layer draws over the app (`LockedRegions`, `[touch]
/// show-locked`): each locked region filled with black at its opacity, in the layer's pixels.
/// The layer covers the whole output the touchscreen is mapped to, so a fraction (x, y) of the
/// calibrated touch surface — what kioskd's filter judges a touch by — is the pixel (x × width,
/// y × height): libinput hands the compositor the calibrated touch in the same 0…1 fractions and
/// the compositor scales them to that output. Pure, so that the mapping is tested without a
/// display; the GTK side only fills these polygons.
public struct LockedShade: Hashable, Sendable {
    /// A point in the layer's (logical) pixels, x to the right, y down.
    public struct Pixel: Hashable, Sendable {
        public var x: Double
        public var y: Double
        public init(x: Double, y: Double) { self.x = x; self.y = y }
    }

    /// One region to fill: its name (for logs), the black's opacity and its outline.
    public struct Fill: Hashable, Sendable {
        public var name: String
        public var opacity: Double
        public var outline: [Pixel]
    }

    public var fills: [Fill]

    /// The layer for `status` on an output of `width` × `height` logical pixels; nil when there
    /// must be no layer: no status, no active session, nothing to shade, or one of kioskd's own
    /// screens up (``kioskdHoldsTheScreen(_:)``). Outlines are clamped
    /// to the output (kioskd's fractions are 0 to 1 already; a newer daemon's are kept on it);
    /// opacity is clamped to 0…1. A region whose outline has fewer than three corners fills
    /// nothing and is left out.
    public static func layer(status: KioskStatus?, width: Double, height: Double) -> LockedShade? {
        guard let status, status.sessionState == .active, !kioskdHoldsTheScreen(status), width > 0, height > 0
        else { return nil }
        let fills = status.lockedRegions.compactMap { region -> Fill? in
            guard region.outline.count >= 3, region.opacity.isFinite, region.opacity > 0 else { return nil }
            return Fill(
                name: region.name, opacity: min(1, region.opacity),
                outline: region.outline.map {
                    Pixel(x: min(max($0.x, 0), 1) * width, y: min(max($0.y, 0), 1) * height)
                })
        }
        return fills.isEmpty ? nil : LockedShade(fills: fills)
    }

    /// Whether one of kioskd's own screens is up, during which kioskd reads or holds every touch
    /// wherever it lands, so that shading some places would say the rest works: the passcode
    /// prompt (its pad), cleaning, "Still there?", the offer of more time (any touch takes
    /// it) and staff drawing the regions (the drawing's screen shows them itself). The layer is
    /// also above kioskd-prompt's window, which it must not darken.
    public static func kioskdHoldsTheScreen(_ status: KioskStatus) -> Bool {
        status.prompt.state != .closed || status.cleaningUntil != nil || status.idleWarning != nil
            || status.timeOffer != .closed || !status.drawing.isEmpty
    }

    /// Whether the point (in the layer's pixels) is shaded: inside a fill or on its edge, by the
    /// even-odd rule (the layer fills with cairo's `CAIRO_FILL_RULE_EVEN_ODD`) — the same rule and edges kioskd's filter judges a
    /// touch by, so a touch on a shaded point is dropped and one off the shade is not.
    public func shades(_ p: Pixel) -> Bool {
        fills.contains { Self.polygon($0.outline, contains: p) }
    }

    static func polygon(_ points: [Pixel], contains p: Pixel) -> Bool {
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

    static func onSegment(_ a: Pixel, _ b: Pixel, _ p: Pixel) -> Bool {
        let cross = (b.x - a.x) * (p.y - a.y) - (b.y - a.y) * (p.x - a.x)
        let scale = max(abs(b.x - a.x), abs(b.y - a.y), 1)
        guard abs(cross) <= 1e-9 * scale else { return false }
        return p.x >= min(a.x, b.x) && p.x <= max(a.x, b.x) && p.y >= min(a.y, b.y) && p.y <= max(a.y, b.y)
    }
}
