/// kioskd's one model of an input device: who it says it is (name, phys, uniq, ids), what it
/// reports (codes, input properties, axis ranges) and how its axes map to the screen. Built from
/// an evemu description, a `libinput record` header, or (in the broker) from libevdev, which
/// also makes uinput clones from it. Current axis values are not part of it: they are state
/// (`DeviceState`), so two descriptions are equal when the devices are alike, wherever a finger is.
public struct DeviceDescription: Sendable, Equatable {
    /// `struct input_id`.
    public struct ID: Sendable, Equatable {
        public var bus: UInt16, vendor: UInt16, product: UInt16, version: UInt16
        public init(bus: UInt16 = 0, vendor: UInt16 = 0, product: UInt16 = 0, version: UInt16 = 0) {
            self.bus = bus; self.vendor = vendor; self.product = product; self.version = version
        }
    }

    /// `struct input_absinfo` without the current value.
    public struct AbsInfo: Sendable, Equatable {
        public var minimum: Int32, maximum: Int32, fuzz: Int32, flat: Int32, resolution: Int32
        public init(minimum: Int32, maximum: Int32, fuzz: Int32 = 0, flat: Int32 = 0, resolution: Int32 = 0) {
            self.minimum = minimum; self.maximum = maximum; self.fuzz = fuzz; self.flat = flat
            self.resolution = resolution
        }

        /// `max − min + 1`, libinput's `absinfo_range`.
        public var range: Double { Double(maximum) - Double(minimum) + 1 }

        /// The fraction 0…1 of the axis a device value is at: `(v − min) / (max − min + 1)`.
        public func fraction(of value: Int32) -> Double { (Double(value) - Double(minimum)) / range }

        /// The device value at a fraction, as libinput maps it: `min + f × (max − min + 1)`.
        public func value(at fraction: Double) -> Double { Double(minimum) + fraction * range }
    }

    /// How the device reports touches, which decides how the filter tracks contacts.
    public enum TouchProtocol: Sendable, Equatable {
        /// No touch axes: keys, buttons, relative axes only.
        case none
        /// Multitouch protocol B: `ABS_MT_SLOT` with this many slots.
        case multitouchB(slots: Int)
        /// Multitouch protocol A: anonymous contacts separated by `SYN_MT_REPORT`.
        case multitouchA
        /// `BTN_TOUCH` with `ABS_X`/`ABS_Y` only.
        case singleTouch
    }

    public var name: String
    /// The physical path (`EVIOCGPHYS`), e.g. `usb-0000:00:14.0-1/input0`; kioskd's clones carry
    /// their `kioskd-clone/…` marker here.
    public var phys: String?
    /// The unique identifier (`EVIOCGUNIQ`), e.g. a serial number.
    public var uniq: String?
    public var id: ID
    /// `INPUT_PROP_*` numbers.
    public var properties: Set<UInt16>
    /// Supported codes per event type (`EV_KEY` → key codes, …); a type with no codes is
    /// present with an empty set.
    public var codes: [UInt16: Set<UInt16>]
    public var absInfo: [UInt16: AbsInfo]
    /// `LIBINPUT_CALIBRATION_MATRIX`, when the device has one.
    public var calibration: CalibrationMatrix?
    /// The node's udev properties, when known (the broker reads them; a recording has none),
    /// for the profile's `[[device]]` entries that match on them.
    public var udevProperties: [String: String]?

    public init(
        name: String, phys: String? = nil, uniq: String? = nil, id: ID = ID(), properties: Set<UInt16> = [],
        codes: [UInt16: Set<UInt16>] = [:], absInfo: [UInt16: AbsInfo] = [:], calibration: CalibrationMatrix? = nil
    ) {
        self.name = name; self.phys = phys; self.uniq = uniq; self.id = id; self.properties = properties
        self.codes = codes; self.absInfo = absInfo; self.calibration = calibration
    }

    public func supports(type: UInt16, code: UInt16) -> Bool {
        codes[type]?.contains(code) ?? false
    }

    /// The most slots tracked, as libevdev's `MAX_SLOTS`: a description claiming more (a broken
    /// device or a hand-made trace) must not size the filter's tables by it.
    public static let maximumSlots = 256

    public var touchProtocol: TouchProtocol {
        // HID consumer-control nodes advertise every axis up to ABS_MISC + n; with
        // ABS_MT_SLOT − 1 set, libevdev and libinput call the device "fake MT": not touch.
        if hasAxis(ABS.mtSlot - 1) { return .none }
        if hasAxis(ABS.mtSlot), let slot = absInfo[ABS.mtSlot] {
            return .multitouchB(slots: min(max(1, Int(slot.maximum) + 1), Self.maximumSlots))
        }
        if hasAxis(ABS.mtPositionX) && hasAxis(ABS.mtPositionY) { return .multitouchA }
        if supports(type: EV.key, code: BTN.touch) && hasAxis(ABS.x) && hasAxis(ABS.y) { return .singleTouch }
        return .none
    }

    /// Whether the device reports an absolute axis (its `EV_ABS` bit, or its absinfo when the
    /// description lists no `EV_ABS` codes).
    func hasAxis(_ code: UInt16) -> Bool {
        if let axes = codes[EV.abs] { return axes.contains(code) }
        return absInfo[code] != nil
    }
}

/// The first two rows of libinput's 3×3 calibration matrix (`"a b c d e f"`), acting on
/// normalised device coordinates: `x′ = a·x + b·y + c`, `y′ = d·x + e·y + f`.
public struct CalibrationMatrix: Sendable, Equatable {
    public var a, b, c, d, e, f: Double

    public init(_ a: Double, _ b: Double, _ c: Double, _ d: Double, _ e: Double, _ f: Double) {
        self.a = a; self.b = b; self.c = c; self.d = d; self.e = e; self.f = f
    }

    public static let identity = CalibrationMatrix(1, 0, 0, 0, 1, 0)

    /// Parses the udev property as libinput's `parse_calibration_property` does, or returns `nil`
    /// where libinput ignores the property: words split on spaces (runs of them count as one; a
    /// tab is part of a word), the first six of at least six read with libinput's `safe_atod`
    /// (``plainDecimal(_:)``). What libinput ignores, kioskd ignores, so the filter never judges a
    /// touch with a matrix the compositor does not apply.
    public init?(udevProperty text: String) {
        let words = text.split(separator: " ")
        guard words.count >= 6 else { return nil }
        var numbers: [Double] = []
        for word in words.prefix(6) {
            guard let number = Self.plainDecimal(word) else { return nil }
            numbers.append(number)
        }
        self.init(numbers[0], numbers[1], numbers[2], numbers[3], numbers[4], numbers[5])
    }

    /// A number as libinput's `safe_atod` reads it: only the characters `0`–`9`, `+`, `-`, `.`,
    /// and all of them one C-locale decimal number (an optional sign, digits with at most one
    /// point, at least one digit), so no hexadecimal (`0x10`, `0x1p3`), no exponent, no `inf` or
    /// `nan`, no `,` for the point; refused too when it is out of range (too large, or so small
    /// it is not a normal double), as `strtod`'s `ERANGE` and libinput's `isnormal` check refuse it.
    static func plainDecimal(_ word: Substring) -> Double? {
        var rest = word.utf8[...]
        if let sign = rest.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { rest = rest.dropFirst() }
        let isDigit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        let whole = rest.prefix(while: isDigit)
        rest = rest.dropFirst(whole.count)
        var fraction = rest.prefix(0)
        if rest.first == UInt8(ascii: ".") {
            rest = rest.dropFirst()
            fraction = rest.prefix(while: isDigit)
            rest = rest.dropFirst(fraction.count)
        }
        guard rest.isEmpty, !(whole.isEmpty && fraction.isEmpty), let value = Double(String(word)) else { return nil }
        guard value.isFinite, value == 0 || value.isNormal else { return nil }
        return value
    }

    /// The six numbers as the udev property's text, in plain decimal (never an exponent, which
    /// libinput refuses) that reads back as exactly this matrix.
    public var udevProperty: String {
        [a, b, c, d, e, f].map(Self.decimalText).joined(separator: " ")
    }

    /// `value` in Swift's shortest digits that read back the same, with any exponent written out
    /// as zeros (`1e-05` → `0.00001`, `1e+20` → `100000000000000000000`).
    static func decimalText(_ value: Double) -> String {
        let text = "\(value)"
        guard let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }),
            let exponent = Int(text[text.index(after: e)...])
        else { return text }
        var mantissa = text[..<e]
        let negative = mantissa.hasPrefix("-")
        if negative { mantissa = mantissa.dropFirst() }
        let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        let whole = String(parts[0])
        let fraction = parts.count > 1 ? String(parts[1]) : ""
        let digits = whole + fraction
        // Where the point goes, counted in `digits`.
        let point = whole.count + exponent
        let plain: String
        if point <= 0 {
            plain = "0." + String(repeating: "0", count: -point) + digits
        } else if point >= digits.count {
            plain = digits + String(repeating: "0", count: point - digits.count)
        } else {
            plain = String(digits.prefix(point)) + "." + String(digits.dropFirst(point))
        }
        return (negative ? "-" : "") + plain
    }

    public func apply(x: Double, y: Double) -> (x: Double, y: Double) {
        (a * x + b * y + c, d * x + e * y + f)
    }
}
