/// A device's state as the kernel holds it: keys down, absolute axis values, multitouch
/// slots. After `SYN_DROPPED` the broker reads it (`EVIOCGKEY`, `EVIOCGABS`, `EVIOCGMTSLOTS`,
/// as libevdev does) and hands it to `InputFilter.resync`; tests and replay track it from
/// events with `apply(_:)`.
public struct DeviceState: Sendable, Equatable {
    public struct Slot: Sendable, Equatable {
        public var trackingID: Int32
        /// `ABS_MT_*` values other than the slot and the tracking id.
        public var axes: [UInt16: Int32]
        public init(trackingID: Int32 = -1, axes: [UInt16: Int32] = [:]) {
            self.trackingID = trackingID; self.axes = axes
        }
    }

    public var keysDown: Set<UInt16>
    /// Values of axes below `ABS_MT_SLOT`.
    public var absValues: [UInt16: Int32]
    public var slots: [Slot]
    public var currentSlot: Int

    public init(keysDown: Set<UInt16> = [], absValues: [UInt16: Int32] = [:], slots: [Slot] = [], currentSlot: Int = 0)
    {
        self.keysDown = keysDown; self.absValues = absValues; self.slots = slots; self.currentSlot = currentSlot
    }

    /// The neutral state of a device: nothing down, no contact.
    public init(for description: DeviceDescription) {
        var slotCount = 0
        if case .multitouchB(let slots) = description.touchProtocol { slotCount = slots }
        self.init(slots: Array(repeating: Slot(), count: slotCount))
    }

    /// Applies one event as the kernel's input core would (protocol B slots, key state).
    public mutating func apply(_ event: InputEvent) {
        switch event.type {
        case EV.key:
            if event.value == 0 { keysDown.remove(event.code) } else if event.value == 1 { keysDown.insert(event.code) }
        case EV.abs where event.code == ABS.mtSlot:
            currentSlot = Int(event.value)
        case EV.abs where ABS.isMT(event.code):
            guard slots.indices.contains(currentSlot) else { return }
            if event.code == ABS.mtTrackingID {
                slots[currentSlot].trackingID = event.value
            } else {
                slots[currentSlot].axes[event.code] = event.value
            }
        case EV.abs:
            absValues[event.code] = event.value
        default:
            break
        }
    }
}
