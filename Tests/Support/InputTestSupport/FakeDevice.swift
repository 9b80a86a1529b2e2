import KioskInput
import LinuxInput

/// Fake physical devices, created through /dev/uinput as a driver would (`UInputClone(description:)`).
public enum FakeDevice {
    public static func keyboard(
        name: String = "kioskd test keyboard", phys: String = "kioskd-vm-test/keyboard"
    ) -> DeviceDescription {
        var codes: [UInt16: Set<UInt16>] = [:]
        codes[type("EV_KEY")] = Set(
            [
                "KEY_ESC", "KEY_A", "KEY_B", "KEY_LEFTCTRL", "KEY_LEFTALT", "KEY_F1", "KEY_F2",
                "KEY_F11", "KEY_BACKSPACE", "KEY_DELETE", "KEY_SYSRQ", "KEY_CAPSLOCK",
                "KEY_LEFTMETA", "KEY_VOLUMEUP",
            ].map(code))
        codes[type("EV_MSC")] = [code("MSC_SCAN")]
        codes[type("EV_LED")] = [code("LED_NUML"), code("LED_CAPSL"), code("LED_SCROLLL")]
        codes[type("EV_REP")] = [0, 1]  // REP_DELAY, REP_PERIOD
        return DeviceDescription(
            name: name, phys: phys, id: .init(bus: 0x03, vendor: 0x046d, product: 0xc31c, version: 0x0111),
            codes: codes)
    }

    /// An ACPI-style button node: power, the volume keys, and KEY_PROG1 (a key no profile
    /// locks, which tests press last so that they know the node's earlier events were handled).
    public static func powerButton(phys: String = "LNXPWRBN/button/input0") -> DeviceDescription {
        DeviceDescription(
            name: "Power Button", phys: phys, id: .init(bus: 0x19, vendor: 0, product: 1, version: 0),
            codes: [
                type("EV_KEY"): Set(["KEY_POWER", "KEY_VOLUMEUP", "KEY_VOLUMEDOWN", "KEY_MUTE", "KEY_PROG1"].map(code))
            ])
    }

    /// A 10-slot protocol-B touchscreen, 4096 × 2400 units, with `INPUT_PROP_DIRECT`.
    public static func touchscreen(
        name: String = "ELAN Touchscreen", phys: String = "i2c-ELAN0001:00"
    ) -> DeviceDescription {
        let axes: [(String, DeviceDescription.AbsInfo)] = [
            ("ABS_X", .init(minimum: 0, maximum: 4095, fuzz: 4, resolution: 16)),
            ("ABS_Y", .init(minimum: 0, maximum: 2399, fuzz: 4, resolution: 16)),
            ("ABS_MT_SLOT", .init(minimum: 0, maximum: 9)),
            ("ABS_MT_TRACKING_ID", .init(minimum: 0, maximum: 65535)),
            ("ABS_MT_POSITION_X", .init(minimum: 0, maximum: 4095, resolution: 16)),
            ("ABS_MT_POSITION_Y", .init(minimum: 0, maximum: 2399, resolution: 16)),
        ]
        return DeviceDescription(
            name: name, phys: phys, id: .init(bus: 0x18, vendor: 0x04f3, product: 0x2a1c, version: 0x0100),
            properties: [EventCodes.property(named: "INPUT_PROP_DIRECT")!],
            codes: [type("EV_KEY"): [code("BTN_TOUCH")], type("EV_ABS"): Set(axes.map { code($0.0) })],
            absInfo: Dictionary(uniqueKeysWithValues: axes.map { (code($0.0), $0.1) }))
    }

    /// A USB mouse: REL_X, REL_Y, REL_WHEEL, BTN_LEFT, BTN_RIGHT, BTN_MIDDLE, MSC_SCAN.
    public static func mouse(name: String = "kioskd test mouse", phys: String = "kioskd-vm-test/mouse") -> DeviceDescription {
        DeviceDescription(
            name: name, phys: phys, id: .init(bus: 0x03, vendor: 0x046d, product: 0xc077, version: 0x0111),
            codes: [
                type("EV_KEY"): Set(["BTN_LEFT", "BTN_RIGHT", "BTN_MIDDLE"].map(code)),
                type("EV_REL"): Set(["REL_X", "REL_Y", "REL_WHEEL"].map(code)),
                type("EV_MSC"): [code("MSC_SCAN")],
            ])
    }

    /// A keyboard with a touchpad on one node (as Logitech's K400): KEY_ESC…KEY_F12 (so udev
    /// calls it a keyboard), a 5-slot clickpad (BTN_LEFT, BTN_TOOL_FINGER…TRIPLETAP, BTN_TOUCH,
    /// INPUT_PROP_POINTER and _BUTTONPAD), MSC_SCAN and the keyboard LEDs.
    public static func keyboardTouchpad(
        name: String = "kioskd test keyboard with touchpad", phys: String = "kioskd-vm-test/combo"
    ) -> DeviceDescription {
        let axes: [(String, DeviceDescription.AbsInfo)] = [
            ("ABS_X", .init(minimum: 0, maximum: 1000, resolution: 12)),
            ("ABS_Y", .init(minimum: 0, maximum: 600, resolution: 12)),
            ("ABS_MT_SLOT", .init(minimum: 0, maximum: 4)),
            ("ABS_MT_TRACKING_ID", .init(minimum: 0, maximum: 65535)),
            ("ABS_MT_POSITION_X", .init(minimum: 0, maximum: 1000, resolution: 12)),
            ("ABS_MT_POSITION_Y", .init(minimum: 0, maximum: 600, resolution: 12)),
        ]
        let buttons = ["BTN_LEFT", "BTN_TOOL_FINGER", "BTN_TOUCH", "BTN_TOOL_DOUBLETAP", "BTN_TOOL_TRIPLETAP"]
        return DeviceDescription(
            name: name, phys: phys, id: .init(bus: 0x03, vendor: 0x046d, product: 0x4024, version: 0x0111),
            properties: [
                EventCodes.property(named: "INPUT_PROP_POINTER")!, EventCodes.property(named: "INPUT_PROP_BUTTONPAD")!,
            ],
            codes: [
                type("EV_KEY"): Set(1...88).union(buttons.map(code)),
                type("EV_ABS"): Set(axes.map { code($0.0) }),
                type("EV_MSC"): [code("MSC_SCAN")],
                type("EV_LED"): [code("LED_NUML"), code("LED_CAPSL"), code("LED_SCROLLL")],
            ],
            absInfo: Dictionary(uniqueKeysWithValues: axes.map { (code($0.0), $0.1) }))
    }

    /// A pen display's pen node (as a Wacom's): ABS_X 0…9999, ABS_Y 0…5999, pressure 0…2047,
    /// distance, BTN_TOOL_PEN, BTN_TOOL_RUBBER, BTN_TOUCH, BTN_STYLUS, BTN_STYLUS2, MSC_SERIAL,
    /// INPUT_PROP_DIRECT.
    public static func pen(name: String = "kioskd test pen", phys: String = "kioskd-vm-test/pen") -> DeviceDescription {
        let axes: [(String, DeviceDescription.AbsInfo)] = [
            ("ABS_X", .init(minimum: 0, maximum: 9999, resolution: 40)),
            ("ABS_Y", .init(minimum: 0, maximum: 5999, resolution: 40)),
            ("ABS_PRESSURE", .init(minimum: 0, maximum: 2047)),
            ("ABS_DISTANCE", .init(minimum: 0, maximum: 63)),
        ]
        return DeviceDescription(
            name: name, phys: phys, id: .init(bus: 0x03, vendor: 0x056a, product: 0x0333, version: 0x0110),
            properties: [EventCodes.property(named: "INPUT_PROP_DIRECT")!],
            codes: [
                type("EV_KEY"): Set(["BTN_TOOL_PEN", "BTN_TOOL_RUBBER", "BTN_TOUCH", "BTN_STYLUS", "BTN_STYLUS2"].map(code)),
                type("EV_ABS"): Set(axes.map { code($0.0) }), type("EV_MSC"): [code("MSC_SERIAL")],
            ],
            absInfo: Dictionary(uniqueKeysWithValues: axes.map { (code($0.0), $0.1) }))
    }

    /// The frames of a pen coming near at (x, y), touching down there, lifting and leaving.
    public static func penStroke(x: Int32, y: Int32) -> [[InputEvent]] {
        [
            [event("EV_ABS", "ABS_X", x), event("EV_ABS", "ABS_Y", y), event("EV_ABS", "ABS_DISTANCE", 20), event("EV_KEY", "BTN_TOOL_PEN", 1)],
            [event("EV_ABS", "ABS_DISTANCE", 0), event("EV_ABS", "ABS_PRESSURE", 900), event("EV_KEY", "BTN_TOUCH", 1)],
            [event("EV_ABS", "ABS_X", x + 50), event("EV_ABS", "ABS_PRESSURE", 1000)],
            [event("EV_ABS", "ABS_PRESSURE", 0), event("EV_KEY", "BTN_TOUCH", 0), event("EV_ABS", "ABS_DISTANCE", 20)],
            [event("EV_KEY", "BTN_TOOL_PEN", 0)],
        ]
    }

    /// The frames of one whole touch in slot `slot` at (x, y) device units: down (tracking id,
    /// position, BTN_TOUCH and the legacy axes), a small move, up.
    public static func tap(slot: Int32 = 0, trackingID: Int32, x: Int32, y: Int32) -> [[InputEvent]] {
        [
            [
                event("EV_ABS", "ABS_MT_SLOT", slot), event("EV_ABS", "ABS_MT_TRACKING_ID", trackingID),
                event("EV_ABS", "ABS_MT_POSITION_X", x), event("EV_ABS", "ABS_MT_POSITION_Y", y),
                event("EV_KEY", "BTN_TOUCH", 1), event("EV_ABS", "ABS_X", x), event("EV_ABS", "ABS_Y", y),
            ],
            [
                event("EV_ABS", "ABS_MT_SLOT", slot), event("EV_ABS", "ABS_MT_POSITION_X", x + 8),
                event("EV_ABS", "ABS_X", x + 8),
            ],
            [
                event("EV_ABS", "ABS_MT_SLOT", slot), event("EV_ABS", "ABS_MT_TRACKING_ID", -1),
                event("EV_KEY", "BTN_TOUCH", 0),
            ],
        ]
    }
}

extension UInputClone {
    /// Writes each frame (a `SYN_REPORT` is added to each).
    public func write(frames: [[InputEvent]]) throws {
        for frame in frames { try write(frame: frame) }
    }
}
