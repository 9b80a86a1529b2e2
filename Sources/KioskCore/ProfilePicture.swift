import KioskInput

/// What `kioskctl profile show NAME --png FILE` draws (docs/kioskctl.md § Profile pictures): a
/// profile's touch locks as shapes in pixels of a `width` × `height` frame, and the legend it
/// prints. Pure: `kioskctl-profile-png` only hands the shapes to cairo.
///
/// Fractions map to pixels as the filter reads the touch surface (docs/profiles.md): x of the
/// width, y of the height, (0, 0) the top-left corner. The edge margin is the band within
/// `edge-margin` of each edge, on each axis (as the filter reads it); a corner exit or cleaning
/// gesture's corner is the square of ``KioskInput/TouchExitGesture/cornerSize`` of each axis that
/// its taps must land in.
public struct ProfilePicture: Hashable, Sendable {
    /// A colour with straight (not premultiplied) alpha, each component 0…1.
    public struct Colour: Hashable, Sendable {
        public var red, green, blue, alpha: Double
        public init(_ red: Double, _ green: Double, _ blue: Double, _ alpha: Double) {
            self.red = red; self.green = green; self.blue = blue; self.alpha = alpha
        }
    }

    /// A point in pixels of the frame (not rounded: a fraction lands between pixels).
    public struct Pixel: Hashable, Sendable {
        public var x, y: Double
        public init(x: Double, y: Double) { self.x = x; self.y = y }
    }

    public enum Kind: String, Hashable, Sendable {
        /// A `[[touch.locked-region]]`.
        case lockedRegion = "locked region"
        /// `touch.mode = "none"`: the whole screen.
        case touchOff = "touch off"
        /// `touch.edge-margin`'s band.
        case edgeMargin = "edge margin"
        /// A corner exit gesture's corner (`session.exit-gesture = { corner = … }`).
        case exitCorner = "exit gesture corner"
        /// A corner cleaning gesture's corner (`session.cleaning-gesture = { corner = … }`).
        case cleaningCorner = "cleaning gesture corner"

        /// Translucent grey for what is locked; a light orange band for the edge margin; blue
        /// for the corner that ends the session and green for the one that starts a cleaning
        /// (they are read while touch is locked, and never reach the kiosk).
        public var fill: Colour {
            switch self {
            case .lockedRegion, .touchOff: Colour(0.3, 0.3, 0.3, 0.5)
            case .edgeMargin: Colour(1.0, 0.55, 0.0, 0.35)
            case .exitCorner: Colour(0.1, 0.35, 1.0, 0.45)
            case .cleaningCorner: Colour(0.0, 0.65, 0.3, 0.45)
            }
        }

        public var outline: Colour {
            switch self {
            case .lockedRegion, .touchOff: Colour(0.1, 0.1, 0.1, 0.9)
            case .edgeMargin: Colour(0.8, 0.4, 0.0, 0.9)
            case .exitCorner: Colour(0.0, 0.15, 0.7, 0.9)
            case .cleaningCorner: Colour(0.0, 0.4, 0.15, 0.9)
            }
        }
    }

    /// One thing drawn: closed polygons filled with the even-odd rule (a band is its outer
    /// rectangle and its inner one), outlined, and labelled at ``labelAt``.
    public struct Item: Hashable, Sendable {
        public var kind: Kind
        /// What the picture and the legend call it: the region's name, or what it is.
        public var label: String
        public var polygons: [[Pixel]]
        /// Where the label's text starts (its baseline's left end), inside the shape's top-left;
        /// nil for the edge band, too thin for text (the legend names it).
        public var labelAt: Pixel?
        /// The legend's line for it.
        public var legend: String
    }

    /// The outline's width in pixels, and the label's text size.
    public static let outlineWidth = 2.0
    public static let labelSize = 14.0

    public var width: Int
    public var height: Int
    /// Drawn in this order: the edge band first, then the locked regions, the gestures' corners
    /// last (so that a corner, which works through every lock, shows on top).
    public var items: [Item]

    /// The frame when no screenshot gives one: 1280 × 800, a common 16:10 kiosk panel.
    public static let defaultSize = (width: 1280, height: 800)
    /// The sizes `--size` takes, on each axis.
    public static let sizeRange = 16...16384

    public init(_ profile: Profile, width: Int, height: Int) {
        self.width = width
        self.height = height
        let w = Double(width), h = Double(height)
        func pixel(_ x: Double, _ y: Double) -> Pixel { Pixel(x: x * w, y: y * h) }
        func box(_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double) -> [Pixel] {
            [pixel(x0, y0), pixel(x1, y0), pixel(x1, y1), pixel(x0, y1)]
        }
        func pixels(_ polygon: [Pixel]) -> String {
            polygon.map { "(\(Self.number($0.x)), \(Self.number($0.y)))" }.joined(separator: " ")
        }
        let inset = Self.outlineWidth + 4, baseline = inset + Self.labelSize
        func labelPoint(_ polygon: [Pixel]) -> Pixel {
            Pixel(x: (polygon.map(\.x).min() ?? 0) + inset, y: (polygon.map(\.y).min() ?? 0) + baseline)
        }
        var items: [Item] = []

        if let margin = profile.touch.edgeMargin {
            let outer = box(0, 0, 1, 1), inner = box(margin, margin, 1 - margin, 1 - margin)
            items.append(
                Item(
                    kind: .edgeMargin, label: "edge margin \(Self.number(margin))", polygons: [outer, inner],
                    labelAt: nil,
                    legend:
                        "edge margin \(Self.number(margin)): contacts starting within \(Self.number(margin * w)) px of the left and right edges and \(Self.number(margin * h)) px of the top and bottom are dropped"
                ))
        }
        if profile.touch.mode == .none {
            let all = box(0, 0, 1, 1)
            items.append(
                Item(
                    kind: .touchOff, label: "touch off", polygons: [all], labelAt: labelPoint(all),
                    legend: "touch off: no touch reaches the kiosk anywhere"))
        }
        for (index, region) in profile.touch.lockedRegions.enumerated() {
            let polygon: [Pixel]
            switch region.shape {
            case let .rect(x, y, width, height): polygon = box(x, y, x + width, y + height)
            case .polygon(let points): polygon = points.map { pixel($0.x, $0.y) }
            }
            let name = region.name.isEmpty ? "region \(index + 1)" : region.name
            items.append(
                Item(
                    kind: .lockedRegion, label: name, polygons: [polygon], labelAt: labelPoint(polygon),
                    legend: "locked region \(index + 1) \"\(name)\": \(pixels(polygon))"))
        }
        for (kind, name, gesture) in [
            (Kind.exitCorner, "exit", profile.session.touchExitGesture),
            (Kind.cleaningCorner, "cleaning", profile.session.touchCleaningGesture),
        ] {
            guard let gesture else { continue }
            let size = KioskInput.TouchExitGesture.cornerSize
            let left = gesture.corner == .topLeft || gesture.corner == .bottomLeft
            let top = gesture.corner == .topLeft || gesture.corner == .topRight
            let x0 = left ? 0 : 1 - size, y0 = top ? 0 : 1 - size
            let square = box(x0, y0, x0 + size, y0 + size)
            let taps = "\(gesture.taps) taps"  // 2 to 10 (ProfileParser)
            items.append(
                Item(
                    kind: kind, label: "\(name): \(taps)", polygons: [square], labelAt: labelPoint(square),
                    legend:
                        "\(kind.rawValue) \(gesture.corner.rawValue): \(taps) within \(gesture.within.kioskText) in \(pixels(square))"
                ))
        }
        self.items = items
    }

    /// The lines printed on stdout: the frame, then one line per item.
    public var legend: String {
        (["frame \(width)×\(height) px"] + items.map(\.legend)).map { $0 + "\n" }.joined()
    }

    /// Why `--over` and `--size` cannot be taken together as given (the sentence a usage error
    /// says), or nil: kioskctl checks it before exec'ing the renderer, which checks it again.
    public static func optionsProblem(over: String?, size: String?) -> String? {
        if over != nil, size != nil {
            return "--size and --over exclude each other: the picture takes the screenshot's size."
        }
        if let size, Self.size(size) == nil {
            return
                "--size '\(size)' is not WIDTHxHEIGHT with each side \(sizeRange.lowerBound) to \(sizeRange.upperBound) pixels."
        }
        return nil
    }

    /// `--size WxH` (`1280x800`; `×` too), each side in ``sizeRange``; nil for anything else.
    public static func size(_ text: String) -> (width: Int, height: Int)? {
        let parts = text.split(omittingEmptySubsequences: false) { $0 == "x" || $0 == "X" || $0 == "×" }
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { ("0"..."9").contains($0) } }),
            let width = Int(parts[0]), let height = Int(parts[1]),
            sizeRange.contains(width), sizeRange.contains(height)
        else { return nil }
        return (width, height)
    }

    /// A number for people: no trailing ".0", at most two decimals.
    static func number(_ value: Double) -> String {
        let hundredths = (value * 100).rounded()
        if hundredths.truncatingRemainder(dividingBy: 100) == 0 { return String(Int(hundredths / 100)) }
        let whole = Int(hundredths / 100), rest = Int(abs(hundredths).truncatingRemainder(dividingBy: 100))
        let sign = value < 0 && whole == 0 ? "-" : ""
        return rest % 10 == 0 ? "\(sign)\(whole).\(rest / 10)" : "\(sign)\(whole).\(rest < 10 ? "0" : "")\(rest)"
    }
}
