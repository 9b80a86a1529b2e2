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

    /// Parses the udev property's six floats, or returns `nil` if it is not six numbers.
    public init?(udevProperty text: String) {
        let numbers = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { Double($0) }
        guard numbers.count == 6, text.split(whereSeparator: { $0 == " " || $0 == "\t" }).count == 6 else {
            return nil
        }
        self.init(numbers[0], numbers[1], numbers[2], numbers[3], numbers[4], numbers[5])
    }

    public func apply(x: Double, y: Double) -> (x: Double, y: Double) {
        (a * x + b * y + c, d * x + e * y + f)
    }
}
