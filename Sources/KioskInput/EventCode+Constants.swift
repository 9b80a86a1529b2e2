// The evdev numbers kioskd decides on, spelled as the kernel does in
// <linux/input-event-codes.h>. Everything else goes through `EventCodes` by name.
//
// Public so that LinuxInput, which talks to libevdev and uinput, compares events and builds
// devices with these names and never with the C module's raw macros. `*_MAX` values are not in
// the generated name table; LinuxInputTests checks every number here against the C header.

/// Event types (`EV_*`).
public enum EV {
    public static let syn: UInt16 = 0x00
    public static let key: UInt16 = 0x01
    public static let rel: UInt16 = 0x02
    public static let abs: UInt16 = 0x03
    public static let msc: UInt16 = 0x04
    public static let sw: UInt16 = 0x05
    public static let led: UInt16 = 0x11
    public static let rep: UInt16 = 0x14
    public static let ff: UInt16 = 0x15
    public static let ffStatus: UInt16 = 0x17
    /// `EV_MAX`: the highest event type.
    public static let max: UInt16 = 0x1f
}

/// `EV_SYN` codes.
public enum SYN {
    public static let report: UInt16 = 0
    public static let config: UInt16 = 1
    public static let mtReport: UInt16 = 2
    public static let dropped: UInt16 = 3
}

/// `EV_MSC` codes.
public enum MSC {
    public static let scan: UInt16 = 0x04
}

/// `EV_REP` codes.
public enum REP {
    public static let delay: UInt16 = 0x00
    public static let period: UInt16 = 0x01
}

/// `EV_KEY` codes for keys.
public enum KEY {
    /// `KEY_MAX` + 1: every key and button code is below `count`.
    public static let count = 0x300
    /// `KEY_MAX`: the highest key or button code.
    public static let max: UInt16 = 0x2ff
    public static let backspace: UInt16 = 14
    public static let leftCtrl: UInt16 = 29
    public static let leftShift: UInt16 = 42
    public static let rightShift: UInt16 = 54
    public static let leftAlt: UInt16 = 56
    public static let f1: UInt16 = 59
    public static let f10: UInt16 = 68
    public static let kpDot: UInt16 = 83
    public static let f11: UInt16 = 87
    public static let f12: UInt16 = 88
    public static let rightCtrl: UInt16 = 97
    public static let sysRq: UInt16 = 99
    public static let rightAlt: UInt16 = 100
    public static let left: UInt16 = 105
    public static let right: UInt16 = 106
    public static let delete: UInt16 = 111
    public static let leftMeta: UInt16 = 125
    public static let rightMeta: UInt16 = 126
}

/// `EV_KEY` codes for buttons.
public enum BTN {
    /// `BTN_MISC` (`BTN_0`): the first button code; every code below is a keyboard key.
    public static let misc: UInt16 = 0x100
    /// `BTN_LEFT` (`BTN_MOUSE`), the first mouse button; `BTN_TASK` the last.
    public static let left: UInt16 = 0x110
    public static let task: UInt16 = 0x117
    /// `BTN_JOYSTICK` (`BTN_TRIGGER`): joystick and gamepad buttons run to `BTN_DIGI` − 1.
    public static let joystick: UInt16 = 0x120
    public static let toolPen: UInt16 = 0x140
    public static let toolStylus3: UInt16 = 0x149
    public static let stylus: UInt16 = 0x14b
    public static let stylus2: UInt16 = 0x14c
    /// `BTN_GEAR_UP`: the last of the `BTN_*` block that starts at `BTN_MISC`.
    public static let gearUp: UInt16 = 0x151
    public static let dpadUp: UInt16 = 0x220
    public static let dpadRight: UInt16 = 0x223
    /// `BTN_TRIGGER_HAPPY1` … `BTN_TRIGGER_HAPPY40`: more joystick buttons.
    public static let triggerHappy: UInt16 = 0x2c0
    public static let triggerHappy40: UInt16 = 0x2e7
    public static let toolFinger: UInt16 = 0x145
    public static let toolQuintTap: UInt16 = 0x148
    public static let touch: UInt16 = 0x14a
    public static let toolDoubleTap: UInt16 = 0x14d
    public static let toolTripleTap: UInt16 = 0x14e
    public static let toolQuadTap: UInt16 = 0x14f

    /// `BTN_TOOL_FINGER` … `BTN_TOOL_QUINTTAP` by contact count 1…5, as the kernel's
    /// `input_mt_report_finger_count` reports them.
    public static let fingerCountTools: [UInt16] = [
        toolFinger, toolDoubleTap, toolTripleTap, toolQuadTap, toolQuintTap,
    ]

    public static func isFingerCountTool(_ code: UInt16) -> Bool {
        code == toolFinger || code == toolQuintTap || (code >= toolDoubleTap && code <= toolQuadTap)
    }

    /// Whether a key code is a pointer's button rather than a keyboard's key: mouse, joystick,
    /// gamepad and tablet buttons, pen tools, `BTN_TOUCH` (`BTN_MISC`…`BTN_GEAR_UP`, the d-pad,
    /// `BTN_TRIGGER_HAPPY*`). Pointer rules (`[pointer]`) decide them, not the key locks.
    @inline(__always)
    public static func isPointerButton(_ code: UInt16) -> Bool {
        (code >= misc && code <= gearUp) || (code >= dpadUp && code <= dpadRight)
            || (code >= triggerHappy && code <= triggerHappy40)
    }

    /// Whether a pointer button, held, means the pointer acts where it is (a click, a pen's
    /// tip or barrel button): mouse buttons, `BTN_TOUCH`, `BTN_STYLUS`, `BTN_STYLUS2`,
    /// `BTN_STYLUS3`. Tools (`BTN_TOOL_PEN`) only say the pen is near.
    @inline(__always)
    public static func isStrokeButton(_ code: UInt16) -> Bool {
        (code >= left && code <= task) || code == touch || code == stylus || code == stylus2 || code == toolStylus3
    }
}

/// `EV_REL` codes.
public enum REL {
    public static let x: UInt16 = 0x00
    public static let y: UInt16 = 0x01
}

/// `EV_ABS` codes.
public enum ABS {
    public static let x: UInt16 = 0x00
    public static let y: UInt16 = 0x01
    public static let pressure: UInt16 = 0x18
    public static let mtSlot: UInt16 = 0x2f
    public static let mtFirst: UInt16 = 0x30  // ABS_MT_TOUCH_MAJOR
    public static let mtPositionX: UInt16 = 0x35
    public static let mtPositionY: UInt16 = 0x36
    public static let mtTrackingID: UInt16 = 0x39
    public static let mtPressure: UInt16 = 0x3a
    public static let mtLast: UInt16 = 0x3d  // ABS_MT_TOOL_Y
    /// `ABS_MAX`: the highest absolute axis.
    public static let max: UInt16 = 0x3f
    /// `ABS_CNT`.
    public static let count = 0x40

    public static func isMT(_ code: UInt16) -> Bool { code >= mtSlot && code <= mtLast }
}

/// Input properties (`INPUT_PROP_*`).
public enum INPUT_PROP {
    public static let pointer: UInt16 = 0x00
    public static let direct: UInt16 = 0x01
    public static let semiMT: UInt16 = 0x03
    /// `INPUT_PROP_MAX`: the highest property.
    public static let max: UInt16 = 0x1f
}
