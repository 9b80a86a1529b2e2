/// A kernel device as sd-device sees it: its sysfs identity (syspath, sysname, subsystem, the
/// `/dev` node) and the properties udev gave it (from the uevent, rules and hwdb: `ID_INPUT_KEY`,
/// `LIBINPUT_CALIBRATION_MATRIX`, …).
///
/// A snapshot, taken when the device was enumerated (``DeviceEnumerator``) or when its uevent
/// arrived (``DeviceMonitor``); it holds no reference to the C object.
public struct Device: Hashable, Sendable {
    /// What happened to the device, for a monitored uevent.
    public enum Action: String, Hashable, Sendable {
        case add, remove, change, move, online, offline, bind, unbind
    }

    /// `/sys/devices/…/input/input7/event3`: unique while the device exists.
    public var syspath: String
    /// The last component of the syspath, e.g. `event3`.
    public var sysname: String
    /// e.g. `input`.
    public var subsystem: String?
    /// The device node, e.g. `/dev/input/event3`; nil for devices without one (`input7`).
    public var devnode: String?
    /// The node's device number (`dev_t`, as `stat(2)`'s `st_rdev`): tells whether the node at
    /// ``devnode`` is still this device once a path is reused.
    public var devnum: UInt64?
    /// What the uevent reported; nil for an enumerated device.
    public var action: Action?
    /// Whether udev has processed the device (its rules ran and its properties are final).
    public var isInitialized: Bool
    /// Every property: the uevent's (`DEVNAME`, `SUBSYSTEM`, …) and what udev rules and hwdb added.
    public var properties: [String: String]

    public init(
        syspath: String, sysname: String, subsystem: String? = nil, devnode: String? = nil, devnum: UInt64? = nil,
        action: Action? = nil, isInitialized: Bool = true, properties: [String: String] = [:]
    ) {
        self.syspath = syspath
        self.sysname = sysname
        self.subsystem = subsystem
        self.devnode = devnode
        self.devnum = devnum
        self.action = action
        self.isInitialized = isInitialized
        self.properties = properties
    }

    /// The value of a property, or nil if the device does not have it.
    public subscript(property key: String) -> String? { properties[key] }

    /// What udev's `input_id` builtin (or a rule or hwdb entry) says the device is: each
    /// `ID_INPUT_*=1` property.
    public var inputClasses: InputClasses {
        var classes: InputClasses = []
        for (name, member) in InputClasses.properties where properties[name] == "1" {
            classes.insert(member)
        }
        return classes
    }

    /// `LIBINPUT_CALIBRATION_MATRIX` as udev holds it (six numbers, `"a b c d e f"`), if a rule
    /// set one: the matrix a libinput-based compositor applies to this touchscreen.
    public var calibrationMatrix: String? { properties["LIBINPUT_CALIBRATION_MATRIX"] }
}

/// The `ID_INPUT_*` classes of an input device, as udev's `input_id` builtin assigns them.
public struct InputClasses: OptionSet, Hashable, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `ID_INPUT`: any input device.
    public static let input = InputClasses(rawValue: 1 << 0)
    /// `ID_INPUT_KEY`: has keys (a keyboard, a "Power Button", a consumer-control node).
    public static let key = InputClasses(rawValue: 1 << 1)
    /// `ID_INPUT_KEYBOARD`: a full keyboard.
    public static let keyboard = InputClasses(rawValue: 1 << 2)
    public static let mouse = InputClasses(rawValue: 1 << 3)
    public static let touchpad = InputClasses(rawValue: 1 << 4)
    public static let touchscreen = InputClasses(rawValue: 1 << 5)
    public static let tablet = InputClasses(rawValue: 1 << 6)
    public static let joystick = InputClasses(rawValue: 1 << 7)
    /// `ID_INPUT_SWITCH`: lid or tablet-mode switches.
    public static let `switch` = InputClasses(rawValue: 1 << 8)
    public static let accelerometer = InputClasses(rawValue: 1 << 9)
    public static let pointingStick = InputClasses(rawValue: 1 << 10)
    public static let trackball = InputClasses(rawValue: 1 << 11)

    static let properties: [(String, InputClasses)] = [
        ("ID_INPUT", .input), ("ID_INPUT_KEY", .key), ("ID_INPUT_KEYBOARD", .keyboard),
        ("ID_INPUT_MOUSE", .mouse), ("ID_INPUT_TOUCHPAD", .touchpad), ("ID_INPUT_TOUCHSCREEN", .touchscreen),
        ("ID_INPUT_TABLET", .tablet), ("ID_INPUT_JOYSTICK", .joystick), ("ID_INPUT_SWITCH", .switch),
        ("ID_INPUT_ACCELEROMETER", .accelerometer), ("ID_INPUT_POINTINGSTICK", .pointingStick),
        ("ID_INPUT_TRACKBALL", .trackball),
    ]
}
