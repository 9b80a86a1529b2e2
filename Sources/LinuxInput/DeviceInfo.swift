import CEvdev
import KioskInput

/// The bus and USB-style ids of an input device (`struct input_id`).
public struct InputDeviceID: Hashable, Sendable {
    public var bustype: UInt16
    public var vendor: UInt16
    public var product: UInt16
    public var version: UInt16

    public init(bustype: UInt16, vendor: UInt16, product: UInt16, version: UInt16) {
        self.bustype = bustype
        self.vendor = vendor
        self.product = product
        self.version = version
    }
}

/// The range and current value of an absolute axis (`struct input_absinfo`).
public struct AbsoluteAxis: Hashable, Sendable {
    public var value: Int32
    public var minimum: Int32
    public var maximum: Int32
    public var fuzz: Int32
    public var flat: Int32
    public var resolution: Int32

    public init(value: Int32 = 0, minimum: Int32, maximum: Int32, fuzz: Int32 = 0, flat: Int32 = 0, resolution: Int32 = 0) {
        self.value = value
        self.minimum = minimum
        self.maximum = maximum
        self.fuzz = fuzz
        self.flat = flat
        self.resolution = resolution
    }
}

/// What a device can report: its event codes per type, its input properties
/// (`INPUT_PROP_DIRECT`, …) and the ranges of its absolute axes.
public struct DeviceCapabilities: Hashable, Sendable {
    /// Codes per event type, e.g. `[EV_KEY: [KEY_POWER, KEY_VOLUMEUP]]`. `EV_SYN` is left out.
    public var codes: [UInt16: Set<UInt16>]
    public var properties: Set<UInt16>
    public var axes: [UInt16: AbsoluteAxis]

    public init(codes: [UInt16: Set<UInt16>] = [:], properties: Set<UInt16> = [], axes: [UInt16: AbsoluteAxis] = [:]) {
        self.codes = codes
        self.properties = properties
        self.axes = axes
    }

    public func has(type: UInt16) -> Bool { !(codes[type]?.isEmpty ?? true) }

    public func has(type: UInt16, code: UInt16) -> Bool { codes[type]?.contains(code) ?? false }

    /// Whether kioskd must broker the device: it has any key or button (keyboards,
    /// "Power Button" and consumer-control nodes, mice, touchscreens' `BTN_TOUCH`)
    /// or multitouch axes. Nodes with only switches, relative or absolute motion
    /// without buttons (lid switches, accelerometers) carry nothing a profile locks.
    public var isWorthBrokering: Bool {
        has(type: EV.key) || has(type: EV.abs, code: ABS.mtPositionX) || has(type: EV.abs, code: ABS.mtPositionY)
    }
}

/// Who a device says it is and what it can report.
public struct DeviceInfo: Hashable, Sendable {
    public var name: String
    /// The physical path (`EVIOCGPHYS`), e.g. `usb-0000:00:14.0-1/input0`; kioskd's
    /// clones carry ``UInputClone/physMarker`` here.
    public var phys: String?
    public var uniq: String?
    public var id: InputDeviceID
    public var capabilities: DeviceCapabilities

    public init(name: String, phys: String? = nil, uniq: String? = nil, id: InputDeviceID, capabilities: DeviceCapabilities) {
        self.name = name
        self.phys = phys
        self.uniq = uniq
        self.id = id
        self.capabilities = capabilities
    }

    /// Whether this is one of kioskd's own clones, which must never be grabbed
    /// (grabbing a clone would feed kioskd its own output).
    public var isKioskdClone: Bool { UInputClone.isClone(phys: phys) }

    /// Whether kioskd should broker the device: not one of its clones, and
    /// ``DeviceCapabilities/isWorthBrokering``.
    public var shouldBroker: Bool { !isKioskdClone && capabilities.isWorthBrokering }
}

extension DeviceDescription {
    /// What the filter needs to know about an opened device: its name, ids, properties, codes
    /// and axis ranges, and the calibration matrix udev gave it (`LIBINPUT_CALIBRATION_MATRIX`),
    /// which maps its touches to the screen as the compositor does.
    public init(_ info: DeviceInfo, calibration: CalibrationMatrix? = nil) {
        self.init(
            name: info.name,
            id: ID(bus: info.id.bustype, vendor: info.id.vendor, product: info.id.product, version: info.id.version),
            properties: info.capabilities.properties,
            codes: info.capabilities.codes,
            absInfo: info.capabilities.axes.mapValues {
                AbsInfo(minimum: $0.minimum, maximum: $0.maximum, fuzz: $0.fuzz, flat: $0.flat, resolution: $0.resolution)
            },
            calibration: calibration)
    }
}

/// What a `change` uevent on a brokered node calls for, from what the node was and is now.
enum BrokerChange: Equatable {
    /// The clone still matches the node.
    case keep
    /// The node has nothing a profile locks any more: let it go.
    case release
    /// What the clone copies, or the calibration the filter maps touches with, changed.
    case reclone

    /// Axis *values* (where a finger is now) are not part of what the clone copies: only names,
    /// ids, codes, properties, axis ranges, and udev's `LIBINPUT_CALIBRATION_MATRIX`.
    init(old: DeviceInfo, oldCalibration: String?, new: DeviceInfo, newCalibration: String?) {
        if !new.shouldBroker {
            self = .release
        } else if old.ignoringAxisValues != new.ignoringAxisValues || oldCalibration != newCalibration {
            self = .reclone
        } else {
            self = .keep
        }
    }
}

extension DeviceInfo {
    /// This description with every axis's current value set to 0.
    var ignoringAxisValues: DeviceInfo {
        var copy = self
        for code in copy.capabilities.axes.keys { copy.capabilities.axes[code]?.value = 0 }
        return copy
    }
}
