/// The touches kioskd reads for itself while staff draw locked regions (docs/input-enforcement.md
/// § Drawing the regions): each touchscreen contact's start, moves and end in screen fractions,
/// through the same axes and calibration matrix the filter judges regions with
/// (``TouchLocator``), and the keys pressed on any device. Fed the raw events the broker reads,
/// beside the filter (which holds all input meanwhile); it keeps no more than a few numbers per
/// contact and reports at each `SYN_REPORT`.
///
/// Touchscreens that speak multitouch protocol B or single touch are read; protocol A (rare on
/// touchscreens) and touchpads, pens and mice draw nothing.
public struct DrawingTouches: Sendable {
    public enum Event: Sendable, Equatable {
        /// A contact came down at a point. `contact` is unique among the devices read.
        case down(contact: Int, at: Point)
        case move(contact: Int, to: Point)
        /// The contact was lifted (or its device went away, or the kernel dropped events).
        case up(contact: Int)
        /// A keyboard key went down (`EV_KEY` below the buttons, value 1), on any device.
        case key(UInt16)
    }

    private struct Slot: Sendable {
        var down = false
        var wasDown = false
        var trackingID: Int32 = -1
        /// A new tracking id came while the slot's contact was down: one contact replaced another.
        var replaced = false
        var x: Int32 = 0
        var y: Int32 = 0
        var moved = false
    }

    private struct Tracker: Sendable {
        var locator: TouchLocator
        var multitouch: Bool
        var slots: [Slot]
        var slot = 0
        /// Events after a `SYN_DROPPED` are skipped to the next `SYN_REPORT`.
        var dropping = false
    }

    private var trackers: [Int: Tracker] = [:]

    public init() {}

    /// The contacts a device can draw with, each numbered apart from the other devices'.
    static let slotsPerDevice = DeviceDescription.maximumSlots

    /// Reads `device` from now on when it is a touchscreen (protocol B or single touch).
    public mutating func add(_ device: DeviceID, _ description: DeviceDescription) {
        guard description.pointerKind == .none else { return }
        switch description.touchProtocol {
        case .multitouchB(let slots):
            trackers[device.rawValue] = Tracker(
                locator: TouchLocator(description: description, x: ABS.mtPositionX, y: ABS.mtPositionY),
                multitouch: true, slots: Array(repeating: Slot(), count: slots))
        case .singleTouch:
            trackers[device.rawValue] = Tracker(
                locator: TouchLocator(description: description, x: ABS.x, y: ABS.y), multitouch: false,
                slots: [Slot()])
        case .multitouchA, .none:
            break
        }
    }

    /// Stops reading `device`: its contacts down end.
    public mutating func remove(_ device: DeviceID, into events: inout [Event]) {
        guard let tracker = trackers.removeValue(forKey: device.rawValue) else { return }
        for (index, slot) in tracker.slots.enumerated() where slot.wasDown {
            events.append(.up(contact: Self.contact(device, index)))
        }
    }

    static func contact(_ device: DeviceID, _ slot: Int) -> Int { device.rawValue * slotsPerDevice + slot }

    /// One event as the kernel sent it.
    public mutating func feed(_ event: InputEvent, device: DeviceID, into events: inout [Event]) {
        if event.type == EV.key, event.value == 1, event.code < BTN.misc {
            events.append(.key(event.code))
        }
        guard var tracker = trackers[device.rawValue] else { return }
        defer { trackers[device.rawValue] = tracker }
        if tracker.dropping {
            if event.type == EV.syn && event.code == SYN.report { tracker.dropping = false }
            return
        }
        switch (event.type, event.code) {
        case (EV.syn, SYN.dropped):
            // What the kernel dropped is unknown: every contact down ends here.
            // Axes keep their last values: the kernel sends an axis again only when it changes.
            for index in tracker.slots.indices {
                if tracker.slots[index].wasDown { events.append(.up(contact: Self.contact(device, index))) }
                tracker.slots[index].down = false
                tracker.slots[index].wasDown = false
                tracker.slots[index].replaced = false
                tracker.slots[index].trackingID = -1
            }
            tracker.dropping = true
        case (EV.syn, SYN.report):
            for index in tracker.slots.indices {
                var slot = tracker.slots[index]
                let contact = Self.contact(device, index)
                if slot.replaced && slot.wasDown {
                    events.append(.up(contact: contact))
                    slot.wasDown = false
                }
                slot.replaced = false
                if slot.down, let point = tracker.locator.screenPoint(x: slot.x, y: slot.y) {
                    if !slot.wasDown {
                        events.append(.down(contact: contact, at: point))
                    } else if slot.moved {
                        events.append(.move(contact: contact, to: point))
                    }
                    slot.wasDown = true
                } else if slot.wasDown {
                    events.append(.up(contact: contact))
                    slot.wasDown = false
                }
                slot.moved = false
                tracker.slots[index] = slot
            }
        case (EV.abs, ABS.mtSlot) where tracker.multitouch:
            tracker.slot = Int(event.value)
        case (EV.abs, ABS.mtTrackingID) where tracker.multitouch:
            guard tracker.slots.indices.contains(tracker.slot) else { return }
            var slot = tracker.slots[tracker.slot]
            if event.value >= 0, slot.down, event.value != slot.trackingID { slot.replaced = true }
            slot.down = event.value >= 0
            slot.trackingID = event.value
            slot.moved = true
            tracker.slots[tracker.slot] = slot
        case (EV.abs, ABS.mtPositionX) where tracker.multitouch, (EV.abs, ABS.x) where !tracker.multitouch:
            guard tracker.slots.indices.contains(tracker.slot) else { return }
            tracker.slots[tracker.slot].x = event.value
            tracker.slots[tracker.slot].moved = true
        case (EV.abs, ABS.mtPositionY) where tracker.multitouch, (EV.abs, ABS.y) where !tracker.multitouch:
            guard tracker.slots.indices.contains(tracker.slot) else { return }
            tracker.slots[tracker.slot].y = event.value
            tracker.slots[tracker.slot].moved = true
        case (EV.key, BTN.touch) where !tracker.multitouch:
            tracker.slots[0].down = event.value != 0
        default:
            break
        }
    }

    /// Whether any device is read.
    public var isEmpty: Bool { trackers.isEmpty }
}
