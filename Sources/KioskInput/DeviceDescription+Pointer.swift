/// What kind of pointer a device is, which decides how `[pointer]` treats its pointer events
/// (`REL_*`, buttons, and the axes or contacts of a pointer that has them). Keyboard keys
/// (codes below `BTN_MISC`) always follow the key rules, whatever the device: a keyboard with a
/// built-in touchpad on one node gets the key rules for its keys and the pointer rules for its
/// pointer.
public enum PointerKind: Sendable, Equatable {
    /// Not a pointer: a keyboard, a touchscreen, a switch. Any pointer button or `REL_*` event
    /// it sends still follows the pointer rules, as a pointer with no place on the screen.
    case none
    /// A mouse, trackball or pointing stick: it moves the pointer by deltas, so where it acts
    /// is known only to the compositor.
    case relative
    /// A touchpad: contacts on a surface that is not the screen.
    case touchpad
    /// A pen, tablet or absolute mouse (also a VM's "tablet"): it reports where on the screen
    /// it is, so a click or a pen's tip can be judged against the locked regions.
    case absolute
    /// A joystick or gamepad.
    case joystick
}

extension DeviceDescription {
    /// The device's pointer kind, by the same tests as udev's `input_id` builtin (which sets the
    /// `ID_INPUT_TABLET`, `_TOUCHPAD`, `_MOUSE`, `_TOUCHSCREEN`, `_JOYSTICK` libinput reads), in
    /// its order: a pen's tool or stylus button makes a tablet; a finger tool on a surface that
    /// is not the screen, a touchpad; a mouse button with absolute axes, an absolute mouse;
    /// `BTN_TOUCH` or `INPUT_PROP_DIRECT` a touchscreen (not a pointer); then joysticks, and
    /// relative axes make a mouse.
    public var pointerKind: PointerKind {
        let positioned = !hasAxis(ABS.mtSlot - 1) && hasAxis(ABS.x) && hasAxis(ABS.y)
        let multitouch: Bool =
            switch touchProtocol {
            case .multitouchA, .multitouchB: true
            case .none, .singleTouch: false
            }
        let pen = supports(type: EV.key, code: BTN.toolPen) || supports(type: EV.key, code: BTN.stylus)
        let fingerButNoPen =
            supports(type: EV.key, code: BTN.toolFinger) && !supports(type: EV.key, code: BTN.toolPen)
        let direct = properties.contains(INPUT_PROP.direct)
        let mouseButton = supports(type: EV.key, code: BTN.left)
        if positioned || multitouch {
            if pen { return .absolute }
            if fingerButNoPen && !direct { return .touchpad }
            if positioned && !multitouch && mouseButton { return .absolute }
            if supports(type: EV.key, code: BTN.touch) || direct { return .none }
        }
        if hasJoystickButtons { return .joystick }
        if supports(type: EV.rel, code: REL.x) && supports(type: EV.rel, code: REL.y) { return .relative }
        return .none
    }

    private var hasJoystickButtons: Bool {
        guard let keys = codes[EV.key] else { return false }
        return keys.contains { ($0 >= BTN.joystick && $0 < BTN.toolPen) || $0 >= BTN.triggerHappy }
    }
}
