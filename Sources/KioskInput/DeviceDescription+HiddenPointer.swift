/// Why a device's clone has no pointer (docs/input-enforcement.md § No cursor where no one may
/// point).
public enum PointerHiding: Sendable, Equatable {
    /// `[pointer]` locks the device's pointer entirely: a mouse, trackball, touchpad or
    /// joystick whose pointer does not pass, or a pen, tablet or absolute mouse under
    /// `mode = "locked"` (under `.regions` it is judged like touch, and keeps its pointer).
    case locked
    /// A profile's `[[device]]` entry with this role hides it (``AllowedDevice/hidesPointer``).
    case entry(role: String)
}

extension FilterPolicy {
    /// Why the clone of `device` must have no pointer under this policy, or nil when it keeps
    /// the device's pointer: the compositor then has no pointer to draw a cursor for. Never a
    /// device an allowed-device entry lets the pointer through, unless another entry hides it.
    /// `device` is described as the filter judges it (with its udev properties, which entries
    /// may match on).
    public func pointerHiding(of device: DeviceDescription) -> PointerHiding? {
        DeviceGate(description: device, pointerKind: device.pointerKind, policy: self).pointerHidden
    }
}

extension DeviceDescription {
    /// The input properties of a pointer: `INPUT_PROP_POINTER`, `_BUTTONPAD`, `_SEMI_MT`,
    /// `_TOPBUTTONPAD`, `_POINTING_STICK`.
    public static let pointerProperties: Set<UInt16> = [0x00, 0x02, 0x03, 0x04, 0x05]

    /// Whether `code` of `EV_KEY` is a pointer's in a clone without one: `BTN_MISC`…`0x15f`
    /// (the buttons of mice, joysticks, gamepads, tools and touch), `BTN_DPAD_*` and
    /// `BTN_TRIGGER_HAPPY*`, the codes the filter judges as pointer buttons
    /// (`BTN.isPointerButton`). Keyboard keys (`KEY_*`) are not.
    static func isPointerKey(_ code: UInt16) -> Bool {
        (code >= BTN.misc && code <= 0x15f) || BTN.isPointerButton(code)
    }

    /// The device less its pointer: what a clone presents when ``FilterPolicy/pointerHiding(of:)``
    /// says so. Gone: `EV_REL`; the pointer buttons (``isPointerKey(_:)``); the pointer's input
    /// properties (``pointerProperties``); for a pointer (``pointerKind`` not `.none`) its
    /// `EV_ABS`; and `EV_MSC` when nothing else it goes with is left (no key, no axis). Kept:
    /// keyboard keys, switches, LEDs, and a touchscreen's touch (a `.none` device keeps its
    /// axes and `BTN_TOUCH`, `BTN_TOOL_*`, `BTN_STYLUS*`). A mouse becomes a device with
    /// nothing but `EV_SYN`, which udev tags as no class and libinput ignores: it stands for
    /// no clone (see docs/input-enforcement.md).
    public func withoutPointer() -> DeviceDescription {
        var hidden = self
        let pointer = pointerKind != .none
        hidden.codes[EV.rel] = nil
        if pointer {
            hidden.codes[EV.abs] = nil
            hidden.absInfo = [:]
        }
        if let keys = codes[EV.key] {
            let kept = keys.filter { code in
                guard Self.isPointerKey(code) else { return true }
                // A touchscreen's touch: BTN_TOOL_PEN…BTN_TOOL_QUADTAP.
                return !pointer && code >= BTN.toolPen && code <= 0x14f
            }
            hidden.codes[EV.key] = kept.isEmpty ? nil : kept
        }
        if hidden.codes[EV.key] == nil && hidden.codes[EV.abs] == nil { hidden.codes[EV.msc] = nil }
        hidden.properties.subtract(Self.pointerProperties)
        return hidden
    }
}
