// The handful of evdev numbers the filter decides on, spelled as the kernel does in
// <linux/input-event-codes.h>. Everything else goes through `EventCodes` by name.
// `EV` and `SYN` are `package`: KioskTraces' parsers need them too.

package enum EV {
    package static let syn: UInt16 = 0x00
    package static let key: UInt16 = 0x01
    package static let rel: UInt16 = 0x02
    package static let abs: UInt16 = 0x03
    package static let msc: UInt16 = 0x04
    package static let sw: UInt16 = 0x05
    package static let led: UInt16 = 0x11
}

package enum SYN {
    package static let report: UInt16 = 0
    package static let config: UInt16 = 1
    package static let mtReport: UInt16 = 2
    package static let dropped: UInt16 = 3
}

enum MSC {
    static let scan: UInt16 = 0x04
}

enum KEY {
    /// `KEY_MAX`: every key and button code is below `count`.
    static let count = 0x300
    static let backspace: UInt16 = 14
    static let leftCtrl: UInt16 = 29
    static let leftAlt: UInt16 = 56
    static let f1: UInt16 = 59
    static let f10: UInt16 = 68
    static let kpDot: UInt16 = 83
    static let f11: UInt16 = 87
    static let f12: UInt16 = 88
    static let rightCtrl: UInt16 = 97
    static let sysRq: UInt16 = 99
    static let rightAlt: UInt16 = 100
    static let delete: UInt16 = 111
}

enum BTN {
    static let toolFinger: UInt16 = 0x145
    static let toolQuintTap: UInt16 = 0x148
    static let touch: UInt16 = 0x14a
    static let toolDoubleTap: UInt16 = 0x14d
    static let toolTripleTap: UInt16 = 0x14e
    static let toolQuadTap: UInt16 = 0x14f

    /// `BTN_TOOL_FINGER` … `BTN_TOOL_QUINTTAP` by contact count 1…5, as the kernel's
    /// `input_mt_report_finger_count` reports them.
    static let fingerCountTools: [UInt16] = [toolFinger, toolDoubleTap, toolTripleTap, toolQuadTap, toolQuintTap]

    static func isFingerCountTool(_ code: UInt16) -> Bool {
        code == toolFinger || code == toolQuintTap || (code >= toolDoubleTap && code <= toolQuadTap)
    }
}

enum ABS {
    static let x: UInt16 = 0x00
    static let y: UInt16 = 0x01
    static let pressure: UInt16 = 0x18
    static let mtSlot: UInt16 = 0x2f
    static let mtFirst: UInt16 = 0x30  // ABS_MT_TOUCH_MAJOR
    static let mtPositionX: UInt16 = 0x35
    static let mtPositionY: UInt16 = 0x36
    static let mtTrackingID: UInt16 = 0x39
    static let mtPressure: UInt16 = 0x3a
    static let mtLast: UInt16 = 0x3d  // ABS_MT_TOOL_Y
    static let count = 0x40

    static func isMT(_ code: UInt16) -> Bool { code >= mtSlot && code <= mtLast }
}

enum INPUT_PROP {
    static let direct: UInt16 = 0x01
    static let semiMT: UInt16 = 0x03
}
