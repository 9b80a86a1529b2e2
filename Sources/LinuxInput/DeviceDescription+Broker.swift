import KioskInput

// Which nodes the broker takes, and when a udev `change` calls for a new clone: decisions on
// device descriptions alone (no fd, no C), tested on the host.

extension DeviceDescription {
    /// Whether kioskd must broker the device: it has any key or button (keyboards,
    /// "Power Button" and consumer-control nodes, mice, touchscreens' `BTN_TOUCH`)
    /// or multitouch axes. Nodes with only switches, relative or absolute motion
    /// without buttons (lid switches, accelerometers) carry nothing a profile locks.
    public var isWorthBrokering: Bool {
        !(codes[EV.key]?.isEmpty ?? true) || supports(type: EV.abs, code: ABS.mtPositionX)
            || supports(type: EV.abs, code: ABS.mtPositionY)
    }

    /// Whether this is one of kioskd's own clones, which must never be grabbed
    /// (grabbing a clone would feed kioskd its own output).
    public var isKioskdClone: Bool { UInputClone.isClone(phys: phys) }

    /// Whether kioskd should broker the device: not one of its clones, and
    /// ``isWorthBrokering``.
    public var shouldBroker: Bool { !isKioskdClone && isWorthBrokering }
}

/// What a `change` uevent on a brokered node calls for, from what the node was and is now.
enum BrokerChange: Equatable {
    /// The clone still matches the node.
    case keep
    /// The node has nothing a profile locks any more: let it go.
    case release
    /// What the clone copies, or the calibration the filter maps touches with, changed.
    case reclone

    /// `old` and `new` as read from the node (libevdev: names, ids, codes, properties, axis
    /// ranges; no calibration), and udev's `LIBINPUT_CALIBRATION_MATRIX` text before and after.
    /// Where a finger is now is state, not description, so it never calls for a new clone.
    init(old: DeviceDescription, oldCalibration: String?, new: DeviceDescription, newCalibration: String?) {
        if !new.shouldBroker {
            self = .release
        } else if old != new || oldCalibration != newCalibration {
            self = .reclone
        } else {
            self = .keep
        }
    }
}
